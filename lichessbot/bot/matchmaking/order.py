"""Which matchmaking settings a challenge uses (``matchmaking.selection``, BotLi's matchmaking.py): the base
settings (None) or an override, by weight (``weight``; lichess-bot's rule is equal weights) drawn for each
challenge, or in the order of their weights, heaviest first: ``sequential`` keeps one until no bot suits it,
``cyclic`` moves on after each challenge sent too."""

from __future__ import annotations

import random

from lichessbot.config import MatchmakingConfig

__all__ = ["SettingsOrder"]


class SettingsOrder:
    """The choice of settings of one matchmaker (not thread-safe: the matchmaker's thread alone uses it)."""

    def __init__(self, mm: MatchmakingConfig, rng: random.Random) -> None:
        self.mm, self._rng = mm, rng
        names: list[str | None] = [None, *mm.overrides]
        weights = {name: mm.with_override(name).weight for name in names}
        self.weights = weights
        #: sequential and cyclic: the names, the heaviest first (the base settings first among equals).
        self.order = sorted(names, key=lambda n: -weights[n])
        self._at = 0

    def pick(self) -> str | None:
        """The settings of the next challenge: an override's name, or None for the base settings."""
        if self.mm.selection == "weighted_random":
            names = list(self.weights)
            if not any(self.weights.values()):
                return self._rng.choice(names)
            return self._rng.choices(names, weights=[self.weights[n] for n in names])[0]
        return self.order[self._at % len(self.order)]

    def no_opponent(self) -> None:
        """No bot suited the settings picked last: sequential and cyclic move on to the next."""
        if self.mm.selection != "weighted_random":
            self._at += 1

    def sent(self) -> None:
        """A challenge went out with the settings picked last: cyclic moves on to the next."""
        if self.mm.selection == "cyclic":
            self._at += 1
