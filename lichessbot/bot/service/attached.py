"""What the bot service attaches around its games: the online move sources (built once the account is known)
and the status page (served, its figures published, the operator commands it takes)."""

from __future__ import annotations

from typing import Any

import structlog

from lichessbot.bot.games.publish import service_figures
from lichessbot.lichess.client import LichessError
from lichessbot.online import OnlineMoves

__all__ = ["check_unlisted", "publish_status", "set_matchmaking", "start_online", "start_status_page", "use_online"]

log = structlog.get_logger("lichessbot.bot")


def use_online(engine: Any, online: OnlineMoves | None) -> bool:
    """Hand ``online`` (None: take them back) to an engine that asks online sources (``use_online``, the real
    engine's); False for one that does not (stand-ins of the tests and benchmarks)."""
    use = getattr(engine, "use_online", None)
    if use is None:
        return False
    use(online)
    return True


def start_online(service: Any) -> OnlineMoves | None:
    """Build the online sources (one for every game: its cache and switch-offs are shared) with the bot's token,
    its client's request budget (``other`` requests: a move post never waits for them), its account name and
    its lichess server, and hand them to the engine; None when no source is on."""
    online = OnlineMoves(service.config.online_moves, token=service._token, pacer=service.client.session.pacer,
                         username=service.me, lichess=service.client.url)
    if not online.enabled or not use_online(service.engine, online):
        online.close()
        return None
    log.info("online sources", books=[s.name for s, _, _ in online.books],
             tables=[s.name for s, _, _ in online.tables])
    return online


def start_status_page(service: Any) -> Any:
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


def publish_status(service: Any) -> None:
    """The service's figures for the status page (every loop turn, 0.2 s; never the token)."""
    if service.status is None:
        return
    counts = service.admission.figures()
    mm = service.matchmaker
    service.status.publish_service(service_figures(service.engine, service.client, {
        "username": service.me, "games_running": counts["games_running"],
        "correspondence_games": counts["correspondence_games"], "games_started": service.games_played,
        "concurrency": service.config.challenge.concurrency, "stopping": service.stopping(),
        "playing_checks": service.playing_checks, "challenges_queued": counts["challenges_queued"],
        "bot_games_today": counts["bot_games_today"], "health_budget_s": service.health_budget_s,
        "event_stream_silent_s": round(service.event_stream_silence(), 1),
        "matchmaking": "off" if mm is None or mm.paused else "on",
        "arenas": sorted(service.arenas.joined)}))


def set_matchmaking(matchmaker: Any, on: bool, stopping: bool) -> str:
    """The operator's ``matchmaking on|off`` on ``matchmaker`` (None: the config has none and ``on`` was not
    asked, or the bot stops): resume or pause challenging; the answer in words."""
    if stopping:
        return "stopping: matchmaking stays off"
    if matchmaker is None:
        return "matchmaking is off"
    matchmaker.paused = not on
    matchmaker.wake()
    return f"matchmaking {'on' if on else 'off'}"


def check_unlisted(client: Any, admission: Any, ongoing: list[Any]) -> set[str]:
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
