"""The ``online_moves`` section: online move sources (docs/online.md), lichess-bot's keys and meanings.

lichess-bot keeps this section under ``engine.online_moves``; here it is at the top level
(``lichessbot migrate-config`` moves it). Its keys and defaults are lichess-bot's (lichess-bot
lib/config.py ``insert_default_values`` and config.yml.default); the keys marked *ours* are not in
lichess-bot: each source's ``url``, and the request budget (``timeout``, ``clock_share``,
``switch_off_after``, ``switch_off_time``). Times in seconds.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from lichessbot.config.base import Strict

__all__ = ["ChessdbBookConfig", "CloudAnalysisConfig", "OnlineEgtbConfig", "OnlineMovesConfig",
           "OpeningExplorerConfig"]

#: The public servers (lichess-org/api doc/specs/tags: openingexplorer/*.yaml, tablebase/standard.yaml,
#: analysis/api-cloud-eval.yaml; chessdb.cn's API page https://www.chessdb.cn/cloudbookc_api_en.html).
EXPLORER_URL = "https://explorer.lichess.org"
LICHESS_URL = "https://lichess.org"
TABLEBASE_URL = "https://tablebase.lichess.org"
CHESSDB_URL = "https://www.chessdb.cn/cdb.php"


class _Source(Strict):
    """What every source has: on/off, the clocks it is used with, and its server (``url``, declared by
    each source with its own default)."""

    enabled: bool = Field(False, description="Ask this source.")
    min_time: float = Field(20, ge=0, description="Seconds our clock must show for this source to be asked.")
    max_time: float = Field(10800, ge=0, description="Games whose starting clock is longer than this many seconds "
                            "do not use this source.")


class _BookSource(_Source):
    """What every online book has besides: BotLi's order and conditions."""

    priority: int = Field(
        0, description="BotLi's key: the online books are asked by priority, the highest first (equal: chessdb_book, "
        "lichess_cloud_analysis, lichess_opening_explorer, lichess-bot's order); one above book.priority is asked "
        "before the local book.")
    only_without_book: bool = Field(
        False, description="BotLi's key: not asked in a game once the local book gave a move in it.")
    allow_repetitions: bool = Field(
        True, description="BotLi's key: false: a move of this source that repeats a position of the game is not "
        "played (the next source is asked).")

    @field_validator("url", check_fields=False)
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{url!r} is not an http(s) URL")
        return url.rstrip("/")


class ChessdbBookConfig(_BookSource):
    """chessdb.cn's opening book (lichess-bot ``chessdb_book``)."""

    move_quality: Literal["all", "good", "best"] = Field(
        "good", description="all: a random known move (chessdb's `query`); good: one of its best moves "
        "(`querybest`); best: the first move of its analysed line (`querypv`), only at min_depth or deeper.")
    min_depth: int = Field(20, ge=0, description="move_quality best: the line's depth must be at least this.")
    trust_eval: bool = Field(
        False, description="BotLi's key: the analysed line's score counts for draw offers and resignation "
        "(draw_or_resign) as a searched score does.")
    url: str = Field(CHESSDB_URL, description="chessdb's query script (ours: a mirror or a test server).")


class CloudAnalysisConfig(_BookSource):
    """lichess's cloud evaluations, ``GET /api/cloud-eval`` (lichess-bot ``lichess_cloud_analysis``)."""

    move_quality: Literal["good", "best"] = Field(
        "best", description="best: the first line's move; good: a random move among up to 5 lines within "
        "max_score_difference of the best.")
    max_score_difference: int = Field(50, ge=0, description="move_quality good: centipawns a line may trail the "
                                      "best line by.")
    min_depth: int = Field(20, ge=0, description="The evaluation's depth must be at least this.")
    min_knodes: int = Field(0, ge=0, description="The evaluation's thousands of nodes must be at least this.")
    trust_eval: bool = Field(
        False, description="BotLi's key: the cloud evaluation's score counts for draw offers and resignation "
        "(draw_or_resign) as a searched score does.")
    max_requests_per_day: int = Field(
        3000, ge=0, description="Ours: requests a day at most, counted as lichess counts them (a window of a "
        "day from the first request): lichess allows 3,000 a day per address with the bot's token, a third "
        "of that from a datacenter or proxy address (set 1000 there).")
    url: str = Field(LICHESS_URL, description="The lichess server that answers /api/cloud-eval (ours).")


class OpeningExplorerConfig(_BookSource):
    """lichess's opening explorer (lichess-bot ``lichess_opening_explorer``)."""

    source: Literal["masters", "lichess", "player"] = Field(
        "masters", description="masters: over-the-board master games (standard chess only); lichess: rated "
        "lichess games; player: the games of player_name.")
    player_name: str = Field("", description="source player: whose games ('' : the bot's own account).")
    sort: Literal["winrate", "games_played"] = Field(
        "winrate", description="winrate: the move that scored best for the side to move; games_played: the "
        "most played move (the other figure breaks ties).")
    min_games: int = Field(10, ge=1, description="A move needs at least this many games to be chosen.")
    anti: bool = Field(
        False, description="BotLi's key: with source player and no player_name, the opponent's games instead of "
        "ours (as the opponent's colour): the move the opponent scored worst against (a game whose opponent is "
        "not known asks nothing).")
    only_with_wins: bool = Field(
        False, description="BotLi's key: only moves the side to move has won at least one game with.")
    url: str = Field(EXPLORER_URL, description="The explorer server (ours).")


class OnlineEgtbConfig(_Source):
    """Online endgame tablebases (lichess-bot ``online_egtb``): lichess's tablebase server or chessdb's."""

    max_pieces: int = Field(7, ge=3, le=7, description="Ask only in positions with at most this many pieces "
                            "(kings included; the tables stop at 7).")
    source: Literal["lichess", "chessdb"] = Field("lichess", description="lichess: tablebase.lichess.org; "
                                                  "chessdb: chessdb.cn's Syzygy probes.")
    move_quality: Literal["best", "suggest"] = Field(
        "best", description="best: play the table's move; suggest: the search keeps to the moves that keep "
        "the table's result (one such move is played at once).")
    url: str | None = Field(None, description="The server (ours); null: the source's public one "
                            f"({TABLEBASE_URL}, {CHESSDB_URL}).")

    def server(self) -> str:
        """The URL to ask: ``url``, else the public server of ``source``."""
        return self.url or (TABLEBASE_URL if self.source == "lichess" else CHESSDB_URL)


class OnlineMovesConfig(Strict):
    """Online move sources (lichess-bot ``engine.online_moves``). Order: local book, the online books
    (chessdb, cloud, explorer), local tables, online tables, search."""

    max_out_of_book_moves: int = Field(
        10, ge=0, description="After this many positions of a game without an online book move, the online "
        "books are no longer asked in that game (the online tables still are).")
    max_retries: int = Field(2, ge=0, description="Extra tries of a failed request (connection error, timeout, "
                             "5xx), each within the move's budget.")
    max_depth: int | None = Field(None, ge=1, description="Ask the online books only up to this full move "
                                  "(null: no limit).")
    timeout: float = Field(2.0, gt=0, description="Ours: seconds one request may take at most (lichess-bot's "
                           "fixed timeout).")
    clock_share: float = Field(
        0.02, gt=0, le=0.5, description="Ours: the share of our remaining clock the online lookups of one move "
        "may take in all (0.02: 1.2 s at one minute, 0.4 s at 20 s).")
    switch_off_after: int = Field(3, ge=1, description="Ours: a source that fails this many lookups in a row "
                                  "is switched off...")
    switch_off_time: float = Field(300, ge=0, description="Ours: ...for this many seconds (one log line).")
    chessdb_book: ChessdbBookConfig = Field(default_factory=ChessdbBookConfig)
    lichess_cloud_analysis: CloudAnalysisConfig = Field(default_factory=CloudAnalysisConfig)
    lichess_opening_explorer: OpeningExplorerConfig = Field(default_factory=OpeningExplorerConfig)
    online_egtb: OnlineEgtbConfig = Field(default_factory=OnlineEgtbConfig)
