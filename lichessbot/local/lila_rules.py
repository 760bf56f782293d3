"""lila's rules of a game in progress, as functions of a :class:`~lichessbot.local.model.Game` and the time:
moves and the clocks, the end of a game, aborting, draw offers and takebacks. No I/O, no locks (the server
calls them under its lock). Times: ``now`` is a ``time.monotonic()`` second; clocks are milliseconds."""

from __future__ import annotations

import re

import chess

from lichessbot.local.model import EXPIRABLE_SOURCES, Game, color_name

__all__ = ["MoveError", "abortable", "apply_move", "clock_running", "decline_draw", "drawable", "expirable",
           "expiry", "finish", "flag", "flag_grace_ms", "force_resignable", "gone_timeout_ms", "long_gone",
           "offer_draw", "out_of_time", "parse_move", "remaining", "takeback", "takeback_allowed_by_prefs",
           "takeback_offerable", "time_for_first_move"]

#: What lila reads as UCI (scalachess ``Uci.apply``: a move, a promotion or a drop such as ``P@e4``).
_UCI = re.compile(r"^(?:[a-h][1-8][a-h][1-8][qrbnk]?|[PNBRQ]@[a-h][1-8])$")
#: The most a flag waits past zero, ms (scalachess ``Clock.outOfTime``: the lag quota ``atMost Centis(200)``).
MAX_FLAG_GRACE_MS = 2000
#: Milliseconds in a day (a correspondence clock: ``days`` per move).
DAY_MS = 86_400_000
#: Plies within which a player's second draw offer is ignored (lila modules/game/src/main/GameExt.scala
#: ``playerHasOfferedDrawRecently``: an offer at ``ply >= current - 20``).
DRAW_OFFER_PLIES = 20


class MoveError(ValueError):
    """A move lila refuses (the message is lila's: modules/bot/src/main/BotPlayer.scala and scalachess)."""


def parse_move(g: Game, uci: str) -> chess.Move:
    """The legal move ``uci`` of the side to move.

    Raises:
        MoveError: "Invalid UCI: ..." (not UCI), "No piece on e3" or "Piece on e2 cannot move to e5" (illegal;
            scalachess ``Situation.move``).
    """
    if not _UCI.match(uci):
        raise MoveError(f"Invalid UCI: {uci}")
    try:
        return g.board.parse_uci(uci)
    except ValueError:
        pass
    if "@" in uci:
        raise MoveError(f"Cannot drop {uci[0]} on {uci[2:]}")
    piece = g.board.piece_at(chess.parse_square(uci[:2]))
    if piece is None or piece.color != g.board.turn:
        raise MoveError(f"No piece on {uci[:2]}")
    raise MoveError(f"Piece on {uci[:2]} cannot move to {uci[2:4]}")


def clock_running(g: Game) -> bool:
    """A clock runs once both sides made their first move (scalachess ``Clock.start`` is called at ply 2; lila
    modules/round/src/main/Player.scala), until the game ends. A correspondence clock (``days`` per move) runs
    from the start for the side to move (scalachess ``CorrespondenceClock``: the time left is the last move's
    time plus ``daysPerTurn`` less now)."""
    if g.over:
        return False
    return g.ply() >= 2 if g.has_clock else g.days is not None


def remaining(g: Game, white: bool, now: float) -> int:
    """Milliseconds left to ``white`` (True) or black at ``now`` (the running clock counted down, not below 0)."""
    t = g.wtime if white else g.btime
    if clock_running(g) and g.board.turn == white:
        t -= int((now - g.last_move_at) * 1000)
    return max(0, t)


def _settle(g: Game, now: float) -> None:
    """Charge the running clock up to ``now`` (``wtime``/``btime`` then hold the times at ``now``)."""
    if clock_running(g):
        g.wtime, g.btime = remaining(g, True, now), remaining(g, False, now)
    g.last_move_at = now


def finish(g: Game, status: str, winner: str | None, now: float) -> None:
    """End the game at ``now``: offers lapse, the running clock stops at what it shows."""
    _settle(g, now)
    g.status, g.winner = status, winner
    for seat in (g.white, g.black):
        seat.offering_draw = seat.proposing_takeback = False


def _end_of_play(g: Game) -> tuple[str, str | None] | None:
    """The status and winner when the position ends the game: mate, stalemate, insufficient material, fifty moves
    and fivefold repetition (scalachess ``Situation.end``/``autoDraw``), threefold repetition (lichess claims it
    for a player who lets it: lila modules/round/src/main/Drawer.scala ``autoThreefold``), or a variant's end."""
    outcome = g.board.outcome(claim_draw=False)
    if outcome is not None:
        if outcome.termination == chess.Termination.CHECKMATE:
            return "mate", color_name(bool(outcome.winner))
        if outcome.termination == chess.Termination.STALEMATE:
            return "stalemate", None
        if outcome.termination == chess.Termination.VARIANT_WIN:
            return "variantEnd", color_name(bool(outcome.winner))
        return "draw", None
    if g.board.is_repetition(3) or g.board.halfmove_clock >= 100:
        return "draw", None
    return None


def apply_move(g: Game, move: chess.Move, now: float) -> None:
    """Play ``move`` for the side to move at ``now``: its clock is charged and gets the increment once the
    clocks run (no lag compensation, as lila gives bots none: modules/round/src/main/MovePlayer.scala); the
    opponent's draw offer and takeback proposal are declined by the move, the mover's own stand (lila
    MovePlayer.scala ``postHumanOrBotPlay``); the game may end."""
    mover = g.board.turn
    if clock_running(g):
        # a correspondence move gives the mover its days again (scalachess CorrespondenceClock ``giveTime``)
        # not floored at 0: a move made inside the flag's grace carries its overdraft into the next move, so the
        # grace is not granted afresh each move (scalachess Clock ``step``: ``takeTime`` then ``giveTime``, signed
        # centiseconds; only ``remainingTime``, what players are shown, is floored: :func:`remaining`)
        spent = int((now - g.last_move_at) * 1000)
        left = (g.wtime if mover else g.btime) - spent + g.increment_ms if g.has_clock else (g.days or 0) * DAY_MS
        if mover:
            g.wtime = left
        else:
            g.btime = left
    g.last_move_at = now
    g.board.push(move)
    g.clocks.append(max(0, g.wtime if mover else g.btime))
    g.seat(not mover).offering_draw = False
    g.seat(not mover).proposing_takeback = False
    end = _end_of_play(g)
    if end is not None:
        finish(g, *end, now)


def flag_grace_ms(g: Game, white: bool) -> int:
    """How long past zero ``white``'s flag waits, ms: its lag quota, at most 2 s (scalachess ``Clock.outOfTime``
    ``withGrace``). The quota starts at 3 quota gains and grows by one a move up to 7, as no lag is compensated
    here (scalachess ``LagTracker.init``: gain ``min(100, estimateTotalSeconds * 2 / 5 + 15)`` centiseconds,
    ``quota = gain * 3``, ``quotaMax = gain * 7``; ``onMove``: ``quota + gain - comp``). A correspondence clock
    has none."""
    if not g.has_clock:
        return 0
    gain_cs = min(100, int(g.initial_ms / 1000 + 40 * g.increment_ms / 1000) * 2 // 5 + 15)
    root_white = g.board.root().turn
    moves = sum(1 for i in range(g.ply()) if (i % 2 == 0) == (root_white == white))
    quota_cs = min(gain_cs * 7, gain_cs * (3 + moves))
    return min(MAX_FLAG_GRACE_MS, quota_cs * 10)


def out_of_time(g: Game, now: float) -> bool:
    """Whether the side to move is out of time at ``now``, its grace (:func:`flag_grace_ms`) spent (scalachess
    ``Clock.outOfTime(withGrace = true)``, as lila's round checks a bot's move and its quiet flag)."""
    if not clock_running(g):
        return False
    mover = g.board.turn
    t = g.wtime if mover else g.btime
    return (now - g.last_move_at) * 1000 >= t + flag_grace_ms(g, mover)


def flag(g: Game, now: float) -> bool:
    """End the game when the side to move is out of time at ``now`` (True; :func:`out_of_time`): lost on time, or
    a draw when the other side cannot mate or offers a draw (lila modules/round/src/main/Finisher.scala
    ``outOfTime``)."""
    if not out_of_time(g, now):
        return False
    mover = g.board.turn
    if mover:
        g.wtime = 0
    else:
        g.btime = 0
    g.last_move_at = now
    if g.seat(not mover).offering_draw:
        finish(g, "draw", None, now)
    else:
        winner = None if g.board.has_insufficient_material(not mover) else color_name(not mover)
        finish(g, "outoftime", winner, now)
    return True


def time_for_first_move(g: Game) -> float:
    """Seconds a side has for its first move (lila modules/round/src/main/RoundGame.scala ``timeForFirstMove``):
    by speed 15/20/25/30/35 s (UltraBullet, Bullet, Blitz, Rapid, else), 11/16/21/25/30 in tournaments, x5/4 in
    chess960."""
    table = {"ultraBullet": (15, 11), "bullet": (20, 16), "blitz": (25, 21), "rapid": (30, 25)}
    base = table.get(g.speed, (35, 30))[1 if g.tournament else 0]
    return base * 5 / 4 if g.variant == "chess960" else float(base)


def expirable(g: Game) -> bool:
    """Whether a missing first move ends the game: a game of a lobby, an arena, a pool or a swiss, never a
    challenge's (lila modules/core/src/main/game/misc.scala ``Source.expirable``; round RoundGame.scala
    ``expirable``)."""
    return g.source in EXPIRABLE_SOURCES or g.tournament is not None


def expiry(g: Game, now: float) -> float | None:
    """Seconds left until the game expires for want of a first move, or None when it cannot expire: an
    :func:`expirable` game with a clock not yet running, counted from the game's start or from white's first move
    (lila RoundGame.scala ``expirable``, ``timeBeforeExpiration``, from ``movedAt``)."""
    if g.over or not g.has_clock or g.ply() >= 2 or not expirable(g):
        return None
    return max(0.0, g.last_move_at + time_for_first_move(g) - now)


def abortable(g: Game) -> bool:
    """Before both sides moved, outside tournaments (lila modules/game/src/main/Game.scala ``abortable``)."""
    return not g.over and g.ply() < 2 and g.tournament is None


def drawable(g: Game) -> bool:
    """A game past its abortable start (lila GameExt ``drawable``: playable and not abortable)."""
    return not g.over and not abortable(g)


def offer_draw(g: Game, white: bool, now: float) -> bool:
    """``white``'s draw offer or agreement (lila modules/bot/src/main/BotPlayer.scala ``offerDraw``,
    modules/round/src/main/Drawer.scala ``yes``): the opponent's standing offer is accepted (the game is drawn);
    otherwise an offer stands unless one was made in the last :data:`DRAW_OFFER_PLIES` plies; an offer against an
    opponent who cannot mate (scalachess ``opponentHasInsufficientMaterial``) is a claim that ends the game drawn,
    status ``insufficientMaterialClaim`` (Drawer.scala ``yes``: ``finisher.other(.., InsufficientMaterialClaim,
    None)``). True: changed."""
    if not drawable(g):
        return False
    me, other = g.seat(white), g.seat(not white)
    if other.offering_draw:
        finish(g, "draw", None, now)
        return True
    if me.offering_draw or any(p >= g.ply() - DRAW_OFFER_PLIES for p in me.draw_offers):
        return False
    if g.board.has_insufficient_material(not white):
        finish(g, "insufficientMaterialClaim", None, now)
        return True
    me.offering_draw = True
    me.draw_offers.append(g.ply())
    return True


def decline_draw(g: Game, white: bool) -> bool:
    """``white`` says no: the opponent's offer ends, or its own is withdrawn (Drawer.scala ``no``)."""
    changed = g.seat(not white).offering_draw or g.seat(white).offering_draw
    g.white.offering_draw = g.black.offering_draw = False
    return changed


def takeback(g: Game, white: bool, yes: bool, now: float) -> bool:
    """``white``'s ``takeback/yes`` or ``/no`` (lila modules/round/src/main/Takebacker.scala): yes accepts the
    opponent's proposal (its last move is taken back, and the reply to it when the proposer is to move again) or
    proposes one; no declines the opponent's or withdraws its own. Not in tournaments, and a yes only where both
    players' preferences allow takebacks (:func:`takeback_allowed_by_prefs`; lila ``IfAllowed`` fails the yes,
    the round logs it and the API has already answered 200). True: changed."""
    if g.over or g.tournament is not None:
        return False
    me, other = g.seat(white), g.seat(not white)
    if not yes:
        changed = me.proposing_takeback or other.proposing_takeback
        if other.proposing_takeback:  # a decline: the next proposal waits (lila RoundAsyncActor ``TakebackBoard``)
            g.takebacks_declined += 1
            g.takeback_declined_at = now
        me.proposing_takeback = other.proposing_takeback = False
        return changed
    if not takeback_allowed_by_prefs(g):
        return False
    if other.proposing_takeback:
        proposer = not white
        plies = 2 if g.board.turn == proposer else 1
        if g.ply() < plies:
            return False
        _settle(g, now)
        for _ in range(plies):
            g.board.pop()
            g.clocks.pop()
            g.evals.pop(g.ply(), None)
        other.proposing_takeback = False
        return True
    if me.proposing_takeback or g.ply() < 2 or not takeback_offerable(g, now):
        return False
    me.proposing_takeback = True
    return True


def takeback_allowed_by_prefs(g: Game) -> bool:
    """Whether both players' takeback preferences allow takebacks in ``g``: each is "always", or "casual" and the
    game is not rated (lila modules/round/src/main/Takebacker.scala ``isAllowedByPrefs``: ``_.forall`` over both
    players' ``Pref.takeback``). A BOT account's is "never" (lila PrefApi ``setBot``), so no takeback is ever
    proposed in a game with a bot on lichess, by either side."""
    return all(a.takeback == "always" or (a.takeback == "casual" and not g.rated) for a in g.players())


def takeback_offerable(g: Game, now: float) -> bool:
    """Whether a takeback may be proposed at ``now``: both players have moved (lila Takebacker: a proposal needs
    ``game.bothPlayersHaveMoved``) and the back-off after declines is over: ``min(declines, 10)² × 10`` seconds
    since the last (lila RoundAsyncActor ``TakebackBoard.delaySeconds``, ``offerable``)."""
    if g.ply() < 2:
        return False
    if g.takeback_declined_at is None:
        return True
    return now >= g.takeback_declined_at + min(g.takebacks_declined, 10) ** 2 * 10


#: Piece values of scalachess ``Board.materialImbalance`` (pawn 1, knight and bishop 3, rook 5, queen 9).
_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
#: lila modules/round/src/main/RoundSocket.scala: ``disconnectTimeout`` 40 s, ``ragequitTimeout`` 10 s (the least).
DISCONNECT_TIMEOUT_MS, RAGEQUIT_TIMEOUT_MS = 40_000, 10_000
#: A player offline this long before its opponent hears of it, ms (lila RoundAsyncActor ``showMillisToGone``).
GONE_NOTICE_MS = 5000


def gone_timeout_ms(g: Game, white: bool) -> int:
    """How long ``white`` may be away before its opponent may claim, ms (lila RoundSocket
    ``povDisconnectTimeout``, at least ``ragequitTimeout``): 40 s, ×3 classical, ×2 rapid, ÷3 when that player is
    down 4 or more in material (not in antichess, crazyhouse or horde)."""
    ms = DISCONNECT_TIMEOUT_MS * {"classical": 3, "rapid": 2}.get(g.speed, 1)
    imbalance = sum(_VALUES[p.piece_type] * (1 if p.color else -1) for p in g.board.piece_map().values())
    down = imbalance <= -4 if white else imbalance >= 4
    if down and g.variant not in ("antichess", "crazyhouse", "horde"):
        ms //= 3
    return max(RAGEQUIT_TIMEOUT_MS, ms)


def force_resignable(g: Game) -> bool:
    """A game whose absent player may be claimed against: resignable (in play, past its abortable start) with a
    clock (lila modules/game Game.scala ``forceResignable``; ``forceResignableNow`` also wants both players to
    have moved, which a game past its abortable start has)."""
    return not g.over and not abortable(g) and g.has_clock


def long_gone(g: Game, white: bool, now: float) -> bool:
    """Whether ``white`` has had no stream of the game for :func:`gone_timeout_ms` (lila RoundAsyncActor
    ``isLongGone``)."""
    since = g.offline_since[0 if white else 1]
    return since is not None and (now - since) * 1000 > gone_timeout_ms(g, white)
