"""What the bot service attaches around its games: the online move sources (built once the account is known)
and the status page (served, its figures published, the operator commands it takes).

The service is read through :class:`ServiceView` (what these functions use of
:class:`~lichessbot.bot.service.service.BotService`), the engine through the bot's own seam
(:class:`OnlineUser`: it takes the online sources) and :func:`engine_figures` (the real engine's counters, its
concrete type): no probing of attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import structlog

from lichessbot.bot.arenas.player import ArenaPlayer
from lichessbot.bot.challenges import Admission
from lichessbot.bot.games.publish import service_figures
from lichessbot.bot.matchmaking.matchmaker import Matchmaker
from lichessbot.bot.service.commands import OperatorCommands
from lichessbot.config import BotConfig
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import GameInfo
from lichessbot.online import OnlineMoves
from lichessbot.status import StatusHub

if TYPE_CHECKING:
    from lichessbot.status.server import StatusServer
    from lichessbot.thinker.engine import Engine

__all__ = ["OnlineUser", "ServiceView", "check_unlisted", "engine_figures", "publish_status", "set_matchmaking",
           "start_online", "start_status_page"]

log = structlog.get_logger("lichessbot.bot")


class OnlineUser(Protocol):
    """An engine that asks the online move sources (the real one, :class:`~lichessbot.thinker.engine.Engine`;
    a stand-in ignores them)."""

    def use_online(self, online: OnlineMoves | None) -> None:
        """Ask ``online`` in the games started from now on (None: none)."""
        ...


class ServiceView(Protocol):
    """What the status page's functions read of :class:`~lichessbot.bot.service.service.BotService`."""

    config: BotConfig
    client: LichessClient
    me: str
    status: StatusHub | None
    commands: OperatorCommands
    admission: Admission
    matchmaker: Matchmaker | None
    arenas: ArenaPlayer
    games_played: int
    playing_checks: int
    health_budget_s: float
    engine_name: str
    #: The engine's figures for the page (:func:`engine_figures` of the real engine; none for a stand-in).
    engine_figures: Callable[[], Mapping[str, object]]

    def stopping(self) -> bool: ...

    def event_stream_silence(self) -> float: ...


def engine_figures(engine: Engine) -> dict[str, object]:
    """What the real engine reports on the status page: ponder searches started and hit (all games), the
    evaluation service's stats, and where its network runs (the runner's ``NetInfo.provider``)."""
    figures: dict[str, object] = {"ponders": engine.ponders, "ponder_hits": engine.ponder_hits}
    if engine.service is not None:
        figures["eval_service"] = engine.service.stats()
    if engine.evaluator is not None:  # the onnxruntime execution provider in use ("triton" for Triton)
        figures["provider"] = engine.evaluator.info.provider
    return figures


def start_online(config: BotConfig, *, token: str | None, client: LichessClient, me: str,
                 engine: OnlineUser) -> OnlineMoves | None:
    """Build the online sources (one for every game: its cache and switch-offs are shared) with the bot's
    ``token``, its client's request budget (``other`` requests: a move post never waits for them), its account
    name ``me`` and its lichess server, and hand them to ``engine``; None when no source is on."""
    online = OnlineMoves(config.online_moves, token=token, pacer=client.session.pacer, username=me,
                         lichess=client.url)
    if not online.enabled:
        online.close()
        return None
    engine.use_online(online)
    log.info("online sources", books=[s.name for s, _, _ in online.books],
             tables=[s.name for s, _, _ in online.tables])
    return online


def start_status_page(service: ServiceView) -> StatusServer | None:
    """Serve the status page (``status.enabled``) with the operator commands (``POST /api/command``); a port that
    cannot be bound is logged, not fatal. Returns the server, or None."""
    if service.status is None:
        return None
    from lichessbot.status.server import StatusServer  # noqa: PLC0415 - the web stack loads only for the page

    sc = service.config.status
    server = None
    try:
        server = StatusServer(service.status, sc.host, sc.port, commands=service.commands.run,
                              remote_commands=sc.remote_commands, allowed_hosts=sc.allowed_hosts).start()
        log.info("status page", url=server.url)
    except OSError as err:
        log.error("status page not started", host=sc.host, port=sc.port, error=str(err))
    publish_status(service)
    return server


def publish_status(service: ServiceView) -> None:
    """The service's figures for the status page (every loop turn, 0.2 s; never the token)."""
    if service.status is None:
        return
    counts = service.admission.figures()
    mm = service.matchmaker
    service.status.publish_service(service_figures(service.engine_name, service.engine_figures(), service.client, {
        "username": service.me, "games_running": counts["games_running"],
        "correspondence_games": counts["correspondence_games"], "games_started": service.games_played,
        "concurrency": service.config.challenge.concurrency, "stopping": service.stopping(),
        "playing_checks": service.playing_checks, "challenges_queued": counts["challenges_queued"],
        "bot_games_today": counts["bot_games_today"], "health_budget_s": service.health_budget_s,
        "event_stream_silent_s": round(service.event_stream_silence(), 1),
        "matchmaking": "off" if mm is None or mm.paused else "on",
        "arenas": sorted(service.arenas.joined)}))


def set_matchmaking(matchmaker: Matchmaker | None, on: bool, stopping: bool) -> str:
    """The operator's ``matchmaking on|off`` on ``matchmaker`` (None: the config has none and ``on`` was not
    asked, or the bot stops): resume or pause challenging; the answer in words."""
    if stopping:
        return "stopping: matchmaking stays off"
    if matchmaker is None:
        return "matchmaking is off"
    matchmaker.paused = not on
    matchmaker.wake()
    return f"matchmaking {'on' if on else 'off'}"


def check_unlisted(client: LichessClient, admission: Admission, ongoing: list[GameInfo]) -> set[str]:
    """The games lichess's full playing list (50 games at most) left out, asked about one by one
    (``client.game_over``): those over are finished in ``admission``; returns their ids."""
    freed: set[str] = set()
    for gid in sorted(admission.unlisted(ongoing)):
        try:
            over = client.game_over(gid)
        except LichessError as err:
            log.warning("game not checked", game_id=gid, error=str(err))
            continue
        if over:
            admission.game_finished(gid)
            freed.add(gid)
    return freed
