"""A game on the test server: the embedded lichess's game (:class:`lichessbot.local.model.Game`) with the bot on
one side and a server-played opponent on the other, and what the tests read of it: the bot's posts (accepted and
refused), its chat, the opponent's offers, the streams opened, and the test-only blackout."""

from __future__ import annotations

from dataclasses import dataclass, field

from devtools.lila.players import Opponent, staller
from lichessbot.local.model import Account, Challenge, Game

__all__ = ["FakeChallenge", "FakeGame"]


@dataclass
class FakeChallenge(Challenge):
    """A challenge of the test server: the opponent the server plays for its challenger, a speed that may differ
    from the clock's (a 2-second "bullet" game), and the arena it belongs to."""

    opponent: Opponent = field(default_factory=staller)
    speed_override: str | None = None
    tournament: str | None = None

    @property
    def speed(self) -> str:
        return self.speed_override or super().speed


@dataclass
class FakeGame(Game):
    opponent: Opponent = field(default_factory=staller)
    bot_id: str = ""                # the account the tests' bot plays
    posts: list[tuple[int, str, bool]] = field(default_factory=list)  # (ply, uci, offering_draw) accepted
    rejected_posts: list[tuple[int, str, int]] = field(default_factory=list)  # (ply, uci, status)
    takebacks: int = 0              # takebacks the bot accepted
    bot_proposals: int = 0          # takeback yes posted without the opponent's proposal (a proposal of ours)
    stream_connections: int = 0
    blackout_until: float = 0.0     # stream connections wait until then before gameFull
    blackout_push: bool = False     # the next push is replaced by cutting the streams

    @property
    def bot_white(self) -> bool:
        return self.white.account.id == self.bot_id

    @property
    def bot_color(self) -> str:
        return "white" if self.bot_white else "black"

    @property
    def opponent_account(self) -> Account:
        return self.seat(not self.bot_white).account

    @property
    def opponent_name(self) -> str:
        return self.opponent_account.username

    @property
    def opponent_bot(self) -> bool:
        return self.opponent_account.bot

    @property
    def opponent_rating(self) -> int:
        return self.opponent_account.rating

    @property
    def opp_draw_offer(self) -> bool:
        return self.seat(not self.bot_white).offering_draw

    @opp_draw_offer.setter
    def opp_draw_offer(self, on: bool) -> None:
        self.seat(not self.bot_white).offering_draw = on

    @property
    def opp_takeback(self) -> bool:
        return self.seat(not self.bot_white).proposing_takeback

    @opp_takeback.setter
    def opp_takeback(self, on: bool) -> None:
        self.seat(not self.bot_white).proposing_takeback = on

    @property
    def chat(self) -> list[tuple[str, str]]:
        """The bot's chat lines, (room, text)."""
        me = self.seat(self.bot_white).account.username
        return [(x.room, x.text) for x in self.lines if x.username == me]

    def bot_turn(self) -> bool:
        return self.board.turn == self.bot_white
