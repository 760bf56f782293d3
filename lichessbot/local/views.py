"""The JSON the embedded lichess sends, in lila's shapes: a game's ``gameFull``/``gameState`` (lila
modules/bot/src/main/BotJsonView.scala), the event stream's game summary (lichess-org/api
doc/specs/schemas/GameEventInfo.yaml), challenges (schemas/ChallengeJson.yaml) and users. Keys lila writes with
``.add`` (false or absent) are left out, as lila leaves them out."""

from __future__ import annotations

from typing import Any

from lichessbot.local.lila_rules import remaining
from lichessbot.local.model import DECLINE_REASONS, STATUS_IDS, VARIANT_NAMES, Account, Challenge, Game, color_name

__all__ = ["account_json", "challenge_json", "compat", "game_full", "game_info", "game_state", "moves_text",
           "perf_name", "variant_json"]

#: lichess's perf icons by speed (lila modules/rating/src/main/PerfType.scala, the icon font's letters).
_ICONS = {"ultraBullet": "{", "bullet": "T", "blitz": ")", "rapid": "#", "classical": "+", "correspondence": ";"}
_SHORT = {"standard": "Std", "chess960": "960", "fromPosition": "FEN", "crazyhouse": "ZH", "antichess": "Anti",
          "atomic": "Atom", "horde": "Horde", "kingOfTheHill": "KotH", "racingKings": "RK", "threeCheck": "3check"}


def perf_name(speed: str, variant: str = "standard") -> str:
    """The perf's name (lila modules/rating PerfType, ``PerfPicker.perfType``): a variant's own ("Chess960",
    "Crazyhouse", "King of the Hill", ...), else the speed's ("Bullet", "UltraBullet", ...; standard and From
    Position)."""
    if variant not in ("standard", "fromPosition"):
        return VARIANT_NAMES.get(variant, variant)
    return "UltraBullet" if speed == "ultraBullet" else speed.capitalize()


def variant_json(key: str) -> dict[str, str]:
    return {"key": key, "name": VARIANT_NAMES.get(key, key), "short": _SHORT.get(key, key[:3])}


def compat(speed: str, source: str = "friend") -> dict[str, bool]:
    """Whether a game may be played with the Bot API and with the Board API (lila modules/game/src/main/Game.scala
    ``isBotCompatible``: not UltraBullet; ``isBoardCompatible``: Rapid and slower, or Blitz in a challenge game)."""
    slow = speed in ("rapid", "classical", "correspondence")
    return {"bot": speed != "ultraBullet", "board": slow or (speed == "blitz" and source == "friend")}


def moves_text(g: Game) -> str:
    """The moves in UCI, space separated (chess960 castling as king takes rook, as lila writes it)."""
    return " ".join(m.uci() for m in g.board.move_stack)


def game_state(g: Game, now: float) -> dict[str, Any]:
    """``gameState``: the moves, both clocks as at ``now`` (the running one counted down), increments, status and
    the offers."""
    st: dict[str, Any] = {"type": "gameState", "moves": moves_text(g), "wtime": remaining(g, True, now),
                          "btime": remaining(g, False, now), "winc": g.increment_ms, "binc": g.increment_ms,
                          "status": g.status}
    for key, on in (("wdraw", g.white.offering_draw), ("bdraw", g.black.offering_draw),
                    ("wtakeback", g.white.proposing_takeback), ("btakeback", g.black.proposing_takeback)):
        if on:
            st[key] = True
    if g.winner:
        st["winner"] = g.winner
    if g.rematch:
        st["rematch"] = g.rematch
    return st


def _player(a: Account) -> dict[str, Any]:
    d: dict[str, Any] = {"id": a.id, "name": a.username, "rating": a.rating}
    if a.title:
        d["title"] = a.title
    if a.provisional:
        d["provisional"] = True
    return d


def game_full(g: Game, now: float) -> dict[str, Any]:
    """``gameFull``: the game's immutable facts and its ``state``."""
    full: dict[str, Any] = {
        "type": "gameFull", "id": g.id, "variant": variant_json(g.variant), "speed": g.speed,
        "perf": {"name": perf_name(g.speed, g.variant)}, "rated": g.rated,
        "createdAt": g.created_ms, "white": _player(g.white.account), "black": _player(g.black.account),
        "initialFen": g.initial_fen, "state": game_state(g, now)}
    if g.has_clock:
        full["clock"] = {"initial": g.initial_ms, "increment": g.increment_ms}
    if g.days is not None:
        full["daysPerTurn"] = g.days
    if g.tournament:
        full["tournamentId"] = g.tournament
    return full


def game_info(g: Game, white: bool, now: float) -> dict[str, Any]:
    """The game as ``gameStart``/``gameFinish`` and ``/api/account/playing`` give it to the player of ``white``
    (lila modules/game/src/main/JsonView.scala ``ownerPreview``)."""
    opp = g.seat(not white).account
    last = g.board.peek().uci() if g.board.move_stack else ""
    info: dict[str, Any] = {
        "gameId": g.id, "fullId": g.id + g.seat(white).id, "id": g.id, "color": color_name(white), "fen": g.board.fen(),
        "isMyTurn": g.board.turn == white and not g.over, "hasMoved": any(
            (i % 2 == 0) == (g.board.root().turn == white) for i in range(g.ply())),
        "lastMove": last, "opponent": {"id": opp.id, "username": opp.username, "rating": opp.rating},
        "rated": g.rated, "speed": g.speed, "perf": g.speed, "source": "arena" if g.tournament else g.source,
        "status": {"id": STATUS_IDS.get(g.status, 20), "name": g.status}, "variant": variant_json(g.variant),
        "compat": compat(g.speed, g.source)}
    if g.has_clock:
        info["secondsLeft"] = remaining(g, white, now) // 1000
    if g.winner:
        info["winner"] = g.winner
    if g.tournament:
        info["tournamentId"] = g.tournament
    return info


def challenge_json(ch: Challenge, base_url: str, direction: str | None = None) -> dict[str, Any]:
    """A challenge (``direction`` "in" for its destination, "out" for its challenger, absent elsewhere)."""
    speed = ch.speed
    if ch.limit_s is not None:
        limit = int(ch.limit_s) if float(ch.limit_s).is_integer() else ch.limit_s
        tc: dict[str, Any] = {"type": "clock", "limit": limit, "increment": ch.increment_s,
                              "show": f"{_minutes(ch.limit_s)}+{ch.increment_s}"}
    elif ch.days is not None:
        tc = {"type": "correspondence", "daysPerTurn": ch.days}
    else:
        tc = {"type": "unlimited"}
    d: dict[str, Any] = {
        "id": ch.id, "url": f"{base_url}/{ch.id}", "status": ch.status, "challenger": ch.challenger.light(),
        "destUser": ch.dest.light(), "variant": variant_json(ch.variant), "rated": ch.rated, "speed": speed,
        "timeControl": tc, "color": ch.color, "finalColor": ch.final_color,
        "perf": {"icon": _ICONS.get(speed, ""), "name": perf_name(speed, ch.variant)}}
    if direction:
        d["direction"] = direction
    if ch.initial_fen is not None:
        d["initialFen"] = ch.initial_fen
    if ch.rematch_of:
        d["rematchOf"] = ch.rematch_of
    if ch.status == "declined" and ch.decline_reason:
        d["declineReason"] = DECLINE_REASONS.get(ch.decline_reason, ch.decline_reason)
        d["declineReasonKey"] = ch.decline_reason.lower()  # lila: DeclineReason key = toString.toLowerCase
    return d


def _minutes(limit_s: float) -> str:
    """The clock's base as lichess shows it: minutes, or ¼ ½ ¾ 1½ (lila ``Clock.Config.limitString``)."""
    return {15: "¼", 30: "½", 45: "¾", 90: "1.5"}.get(int(limit_s), f"{limit_s / 60:g}")


def account_json(a: Account, *, online: bool = False) -> dict[str, Any]:
    """``/api/account`` and the users of ``/api/bot/online`` (lila modules/user/src/main/JsonView.scala ``full``):
    id, username, title, perfs (one rating in every speed), and ``online`` where it is true."""
    d: dict[str, Any] = {"id": a.id, "username": a.username,
                         "perfs": {s: {"rating": a.rating, "games": 0, "rd": 150, "prog": 0, "prov": True}
                                   for s in ("bullet", "blitz", "rapid", "classical", "correspondence", "chess960")}}
    if a.title:
        d["title"] = a.title
    if online:
        d["online"] = True
    return d
