"""The bot's online block lists (``challenge.online_block_list``, ``matchmaking.online_block_list``): read
once before the first challenge is judged, then refreshed in their own thread every
:data:`~lichessbot.online.blocklists.REFRESH_S` seconds; each refresh hands the names to the admission
(declined) and to the matchmaker (never challenged)."""

from __future__ import annotations

import threading

from lichessbot.bot.challenges import Admission
from lichessbot.config import BotConfig
from lichessbot.online.blocklists import REFRESH_S, OnlineBlockLists

__all__ = ["BlockListKeeper"]


class BlockListKeeper:
    """Keeps the admission's ``online_blocked`` and ``matchmaking_blocked`` up to date (no thread without URLs)."""

    def __init__(self, config: BotConfig, admission: Admission, stopping: threading.Event,
                 period: float = REFRESH_S):
        self.admission, self.stopping, self.period = admission, stopping, period
        ch, mm = config.challenge, config.matchmaking
        self.challenge = OnlineBlockLists(ch.online_block_list)
        mm_urls = list(mm.online_block_list) + (list(ch.online_block_list) if mm.include_challenge_block_list else [])
        self.matchmaking = OnlineBlockLists(mm_urls)
        self.refreshes = 0
        self._thread: threading.Thread | None = None

    def refresh(self) -> None:
        """Read every list and hand the names over. Never raises."""
        self.challenge.refresh()
        self.matchmaking.refresh()
        self.admission.online_blocked = self.challenge.names
        self.admission.matchmaking_blocked = self.matchmaking.names
        self.refreshes += 1

    def start(self) -> None:
        """The first reading now (before any challenge is judged), then a refresher thread."""
        if not (self.challenge.urls or self.matchmaking.urls):
            return
        self.refresh()
        self._thread = threading.Thread(target=self._run, name="block-lists", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self.stopping.wait(self.period):
            self.refresh()
