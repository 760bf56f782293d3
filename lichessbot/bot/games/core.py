"""A game as a pure state machine: lichess's game events (typed, :mod:`lichessbot.lichess.events`) and the
time in, actions out (:mod:`lichessbot.bot.games.actions`). No I/O, no threads, no clock of its own: every
call that depends on time takes ``now`` (monotonic seconds); the only outside effect is its log lines (the
takeback ledger's file too is the shell's: :class:`~lichessbot.bot.games.actions.CountTakeback`).

The board is rebuilt from each state's ``moves`` (both castling notations). One move is decided per position
(:meth:`GameCore.to_play`, :meth:`GameCore.decided`): a post that fails is retried with the *same* move after
a resync from the server's state, never with another, at most :data:`MAX_POST_ATTEMPTS` times. Resigning and
draw offers follow our scores (:class:`~lichessbot.bot.games.move_rules.ScoreRules`); the opponent who never makes
a first move is aborted after ``abort_time`` s (after a ``!wait``, no sooner than its one grace allows); a game
the opponent left is claimed while lila's ``opponentGone`` allows it; takeback offers are answered by
``max_takebacks_accepted``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import assert_never

import chess
import structlog
from structlog.typing import FilteringBoundLogger

from lichessbot.bot.chat.game_chat import GameChat
from lichessbot.bot.games.actions import (
    Abandon,
    Abort,
    Action,
    AnswerTakeback,
    Claim,
    CountTakeback,
    ForgetTakebacks,
    Ponder,
    PostMove,
    Resign,
    Resync,
    SetOpponent,
    ThinkRequest,
)
from lichessbot.bot.games.move_rules import ScoreRules, Unplayable, clocks_now, fake_think_s, parse_moves, post_patience
from lichessbot.bot.games.pgn import GameRecord
from lichessbot.bot.games.takeback import Takebacks, taken_back
from lichessbot.config import PLAYABLE_VARIANTS, BotConfig, GameFacts
from lichessbot.lichess.events import ChatLine, Connected, GameEvent, GameFull, GameState, OpponentGone, OtherEvent
from lichessbot.thinker.protocol import Clock, Decision
from lichessbot.timeman import OverheadEstimator, move_overhead_ms

__all__ = ["CLAIM_RETRY", "MAX_POST_ATTEMPTS", "GameCore"]

MAX_POST_ATTEMPTS = 3  # per position; then wait for the server's next state
#: Seconds between claims while ``opponentGone`` allows one (lila may answer 200 without effect, or 400).
CLAIM_RETRY = 1.0


class GameCore:
    """The decisions of game ``game_id`` of the account ``me`` (any case) on the server at ``url``.

    Args:
        config: the bot config (abort_time, draw_or_resign, max_takebacks_accepted, correspondence, chat, ...).
        engine_name: the network's name (``!name``).
        queued: reads the challengers waiting for a slot (``!queue``).
        rng: the fallback move's choice when the engine fails (seeded in tests).
        log: a bound structlog logger (default: ``lichessbot.game`` with ``game_id``).
        takebacks_before: takebacks accepted in this game before a restart (the takeback ledger's count, read by
            the shell; the core's :class:`CountTakeback` and :class:`ForgetTakebacks` ask the shell to write it).
    """

    def __init__(self, game_id: str, *, config: BotConfig, me: str, url: str, engine_name: str = "lichessbot",
                 queued: Callable[[], Sequence[str]] = tuple, rng: random.Random | None = None,
                 log: FilteringBoundLogger | None = None, takebacks_before: int = 0) -> None:
        self.id, self.config = game_id, config
        self.username, self.me = me, me.lower()
        self.log: FilteringBoundLogger = (log if log is not None else
                                          structlog.get_logger("lichessbot.game").bind(game_id=game_id))
        self.rng = rng or random.Random()
        self.over = False
        self.failures = 0                    # failures of the game (engine, posts, steps), for the last log line
        self.color: chess.Color | None = None
        self.initial: chess.Board | None = None
        self.board: chess.Board | None = None
        self.record = GameRecord(game_id=game_id, site=f"{url}/{game_id}")
        self.opponent = "opponent"
        self.level_text = "full strength"  # {level} of greetings: the game's strength (docs/strength.md)
        self.times = (0, 0, 0, 0)  # lichess's last wtime, btime, winc, binc (ms)
        self.state_at = 0.0        # monotonic time those clocks were true
        self.correspondence = False          # no clock: days per move or unlimited
        self.tournament: str | None = None   # tournamentId (arena games cannot be aborted)
        self.parked = False                  # correspondence: stream closed until our move (service check-in)
        self.abandoned = False               # left because the game cannot be played
        self.saw_running = False
        self.talk = GameChat(config, username=me, engine_name=engine_name, queued=queued, log=self.log)
        self._moves_str: str | None = None
        self._decided: dict[int, Decision] = {}
        self._posted: set[int] = set()
        self._attempts: dict[int, int] = {}
        self._rules = ScoreRules(config.draw_or_resign)
        self.game_config = config  # this game's config: ``game_overrides`` applied at its gameFull
        self._takebacks = Takebacks(config.max_takebacks_accepted, game_id, takebacks_before)
        self._our_moves = 0
        self._opp_offers_draw = False
        self._opp_wait_since: float | None = None
        self._wait_until: float | None = None  # !wait's grace: no abort before this monotonic time
        self._claim_at: float | None = None
        self._seen_at: float | None = None  # monotonic time of the last state seen on a stream
        self._opened_at: float | None = None  # monotonic time the current game stream was requested
        self._hello = False  # greet once the engine has chosen the level
        tm = config.timeman  # our moves' cost on the wire, learned from lichess's clocks (docs/timeman.md), or None
        self.overhead = OverheadEstimator(tm.move_overhead) if tm.learn_overhead else None

    # events ------------------------------------------------------------------------------------
    def on_event(self, event: Connected | GameEvent, now: float) -> list[Action]:
        """The actions an event of the game stream calls for. Raises ValueError for a ``gameState`` whose
        moves cannot be read (the shell resyncs); a ``gameFull`` the engine cannot play ends in :class:`Abandon`."""
        match event:
            case Connected():
                self._opened_at = event.opened_at
                if event.reconnect:
                    self.log.info("game stream reconnected")
                return []
            case GameFull():
                try:
                    actions = self._on_full(event)
                    return actions + self._on_state(event.state, now, full=True)
                except Unplayable as err:
                    return [self.abandon(str(err))]
            case GameState():
                return self._on_state(event, now)
            case ChatLine():
                return self._on_chat(event, now)
            case OpponentGone():
                if event.gone:
                    wait = float(event.claim_win_in_seconds or 0)
                    self._claim_at = now + wait
                    self.log.info("opponent gone", claim_in_s=wait)
                else:
                    self._claim_at = None
                return []
            case OtherEvent():
                self.log.debug("event ignored", type=event.type)
                return []
            case _:
                assert_never(event)  # mypy: an event of the union with no case here

    def _on_chat(self, line: ChatLine, now: float) -> list[Action]:
        said, grace = self.talk.answer(line, now=now, over=self.over,
                                       can_wait=not self.over and not self.correspondence and self.abortable())
        if grace:  # the abort deadline becomes max(deadline, now + grace); GameChat grants it once a game
            self._wait_until = max(self._wait_until or now, now + grace)
        return list(said)

    def _on_full(self, full: GameFull) -> list[Action]:
        white, black = full.white, full.black
        ids = ((white.id or white.name or "").lower(), (black.id or black.name or "").lower())
        self.color = chess.WHITE if ids[0] == self.me else chess.BLACK if ids[1] == self.me else None
        if self.color is None:
            self.log.error("we are neither white nor black in this game", white=ids[0], black=ids[1])
        variant = full.variant
        self.tournament = full.tournament_id
        self._takebacks.no_takebacks = self.tournament is not None  # lila: never in arena games
        self.correspondence = full.clock is None or full.speed == "correspondence"
        if variant not in PLAYABLE_VARIANTS:
            raise Unplayable(f"the engine does not play {variant}")
        fen = full.initial_fen or "startpos"
        try:
            self.initial = chess.Board(chess.STARTING_FEN if fen == "startpos" else fen,
                                       chess960=variant == "chess960")
        except ValueError as err:
            raise Unplayable(f"initialFen {fen!r} cannot be read ({err})") from None
        opp = black if self.color == chess.WHITE else white
        self.opponent = self.talk.opponent = opp.display
        own = self.config.for_game(GameFacts(full.speed, variant, "white" if self.color == chess.WHITE else "black",
                                             opp.is_bot, full.rated, self.tournament is not None))
        self.game_config = own  # game_overrides applied: draws, resignation, pondering of this game
        self._rules = ScoreRules(own.draw_or_resign)
        self._rules.opponent(opp.rating, opp.is_bot)
        self.record.take_game_full(full, self.initial, variant)
        if self.color is None:
            return []
        self._hello = len(full.state.moves.split()) < 2
        # the game's strength level follows the opponent's rating (docs/strength.md); greetings name it
        return [SetOpponent(opp.rating, self.record.rated, None if own is self.config else own,
                            opp.name or opp.id or "")]

    def level_chosen(self, text: str) -> list[Action]:
        """The engine chose the game's level (``text``, the greetings' ``{level}``): the greetings, if due."""
        self.level_text = self.talk.level = text
        if not self._hello:
            return []
        self._hello = False
        return list(self.talk.hello())

    def _on_state(self, state: GameState, now: float, full: bool = False) -> list[Action]:
        if self.initial is None:
            raise ValueError("gameState before gameFull")
        moves = state.moves
        self.times = (state.wtime, state.btime, state.winc, state.binc)
        # lila computes wtime/btime when it sends the line (scalachess Clock.remainingTime takes the
        # running side's pending time off). A gameFull answers our (re)connection, so it was computed
        # after we sent the request: count our clock from then, which never overstates our time however
        # slow the answer was. A gameState is pushed as it happens: from its arrival.
        self.state_at = min(now, self._opened_at) if full and self._opened_at is not None else now
        self._seen_at = now
        if moves != self._moves_str:
            try:
                board = parse_moves(self.initial, moves)
            except ValueError as err:
                if full:  # the server's own truth cannot be read: a reconnect would bring the same
                    raise Unplayable(f"moves {moves[-40:]!r} cannot be read ({err})") from None
                raise
            n = len(board.move_stack)
            if taken_back(n, self.board):  # think again from there
                self._posted = {p for p in self._posted if p < n}
                self._decided = {p: d for p, d in self._decided.items() if p < n}
                self._attempts = {p: k for p, k in self._attempts.items() if p < n}
            if self.board is not None and n == len(self.board.move_stack) + 1:  # exactly one new move: its clock
                mover_white = board.turn == chess.BLACK
                self.record.clocks[n - 1] = self.times[0] if mover_white else self.times[1]
            if self.overhead is not None and self.color is not None:  # what our last move cost on the wire
                self.overhead.seen(n, Clock.from_lichess(self.times, self.color))
            self.board, self._moves_str = board, moves
            self.record.moves = list(board.move_stack)
        self._opp_offers_draw = state.bdraw if self.color == chess.WHITE else state.wdraw
        actions: list[Action] = []
        answer = None if self._moved_since(state) else self._takebacks.answer(state, self.color)
        if answer is not None and self.board is not None:
            actions.append(AnswerTakeback(answer, len(self.board.move_stack)))
        self._update_abort_timer(now)
        if state.running:
            self.saw_running = True
        else:
            if not self.over and self._takebacks.accepted:  # its count leaves the ledger (the shell writes it)
                actions.append(ForgetTakebacks())
            self.over = True
            self.record.status, self.record.winner = state.status, state.winner
            self.log.info("game over", status=state.status, winner=state.winner, plies=len(self.record.moves))
        return actions

    def _moved_since(self, state: GameState) -> bool:
        """Whether our move in ``state``'s position went out already: the state was sent before lila had it (it
        waited in the queue while we thought). lila declines the opponent's takeback proposal with our move (round
        ``MovePlayer.postHumanOrBotPlay``: ``Takeback(player, false)``), so the offer this state shows is gone, and
        a yes to it would propose a takeback of ours; the state after our move shows the offers as they are."""
        b = self.board
        return (b is not None and state.running and b.turn == self.color
                and len(b.move_stack) in self._posted)

    def takeback_posted(self, answer: AnswerTakeback, error: str | None) -> list[Action]:
        """The shell posted ``answer`` (``error`` None) or failed to (the offer is answered again if it stays).
        An accepted takeback: no move in that position (lichess takes it back), and :class:`CountTakeback` (the
        shell adds it to the ledger)."""
        counted = self._takebacks.posted(answer.accept, ok=error is None)
        if error is not None:
            self.log.warning("takeback answer failed", error=error)
            return []
        self.log.info("takeback", accepted=answer.accept, taken=self._takebacks.accepted,
                      max_takebacks_accepted=self._takebacks.limit)
        if answer.accept:
            self._posted.add(answer.ply)
        return [CountTakeback()] if counted else []

    def _update_abort_timer(self, now: float) -> None:
        b, init = self.board, self.initial
        if b is None or init is None or self.color is None or self.correspondence or self.tournament:
            self._opp_wait_since = None  # no abort: lichess refuses it in arenas; days per move otherwise
            return
        opp_moved = any((init.turn if i % 2 == 0 else not init.turn) != self.color for i in range(len(b.move_stack)))
        waiting = not opp_moved and b.turn != self.color
        self._opp_wait_since = (self._opp_wait_since or now) if waiting else None

    def tick(self, now: float) -> list[Action]:
        """What the time calls for: the abort of an opponent who never moved, a claim while it is allowed."""
        actions: list[Action] = []
        deadline = None if self._opp_wait_since is None else max(self._opp_wait_since + self.config.abort_time,
                                                                  self._wait_until or 0.0)
        if deadline is not None and now > deadline:
            self._opp_wait_since = None
            self.log.info("opponent did not move: aborting", abort_time_s=self.config.abort_time)
            actions.append(Abort())
        if self._claim_at is not None and now >= self._claim_at:
            # retried every CLAIM_RETRY s while opponentGone allows it: lila may answer 400 (too early)
            # or 200 without effect; a gameState ending the game or opponentGone gone=false stops it
            self._claim_at = now + CLAIM_RETRY
            draw = self.config.draw_or_resign.claim_draw_when_gone
            self.log.info("claiming a draw" if draw else "claiming victory")
            actions.append(Claim(draw))
        return actions

    # leaving -----------------------------------------------------------------------------------
    def abortable(self) -> bool:
        """lichess still allows an abort: fewer than two moves, not an arena game."""
        return (len(self.board.move_stack) if self.board else 0) < 2 and not self.tournament

    def leave(self) -> list[Action]:
        """Quitting with ``resign_on_quit``: abort (before both sides moved, not in a tournament) or resign."""
        if self.over:
            return []
        abort = self.abortable()
        self.log.warning("leaving the game", action="abort" if abort else "resign")
        return [Abort() if abort else Resign()]

    def abandon(self, why: str) -> Abandon:
        """End our part in a game the engine cannot play: abort or resign once, and no more (the game is over
        for us: no reconnect)."""
        self.abandoned = self.over = True
        return Abandon(abort=self.abortable(), why=why)

    def park(self, now: float) -> bool:
        """A correspondence game off our move for ``correspondence.disconnect_time`` s gives its thread back
        (the service's check-in opens it again on our move). True: parked now."""
        if (self.correspondence and not self.over and self._seen_at is not None and self.board is not None
                and self.board.turn != self.color and self._claim_at is None
                and now - self._seen_at > self.config.correspondence.disconnect_time):
            self.parked = True
            self.log.info("correspondence game parked until our move",
                          disconnect_time_s=self.config.correspondence.disconnect_time)
        return self.parked

    def finish(self) -> list[Action]:
        """The goodbyes of a game seen running and over (not of one abandoned); the game's learned move overhead
        is logged (docs/timeman.md)."""
        if self.overhead is not None:
            self.log.info("move overhead", **vars(self.overhead.summary()))
        if self.over and self.saw_running and not self.abandoned:
            return list(self.talk.goodbye())
        return []

    # our move ----------------------------------------------------------------------------------
    def clock(self, now: float) -> tuple[Clock | None, float | None]:
        """Our clock now (with the game's initial clock and measured move overhead), and the correspondence
        clock's seconds left (:func:`~lichessbot.bot.games.move_rules.clocks_now`)."""
        ply = len(self.board.move_stack) if self.board is not None else 0
        since = now - self.state_at if ply >= 2 else 0.0  # lichess runs clocks from the 2nd moves
        return clocks_now(self.times, self.color, since, clocked=self.record.clock_initial_ms is not None,
                          correspondence=self.correspondence, initial=self.record.clock_initial_ms,
                          overhead=self.overhead)

    def to_play(self, now: float) -> ThinkRequest | None:
        """The position to answer now, or None: not our move, over, answered already (or its posts failed
        :data:`MAX_POST_ATTEMPTS` times: the server's next state decides), or no legal move."""
        b = self.board
        if self.over or b is None or self.color is None or b.turn != self.color:
            return None
        ply = len(b.move_stack)
        if ply in self._posted or self._attempts.get(ply, 0) >= MAX_POST_ATTEMPTS or b.is_game_over():
            return None
        clock, left = self.clock(now)
        return ThinkRequest(ply=ply, board=b.copy(), clock=clock, time_left_s=left, decided=self._decided.get(ply))

    def decided(self, request: ThinkRequest, decision: Decision | None, now: float) -> list[Action]:
        """The engine's ``decision`` for ``request`` (None: it failed; a random legal move is played rather
        than lose on time; an illegal one is replaced the same way): resign, or post the move (with a draw
        offer when our scores say so)."""
        ply, board = request.ply, request.board
        if ply not in self._decided:
            if decision is not None and decision.move not in board.legal_moves:
                self.log.error("thinker returned an illegal move", move=decision.move.uci())
                decision = None
            if decision is None:
                self.failures += 1
                decision = Decision(move=self.rng.choice(list(board.legal_moves)), source="search", note="fallback")
            self._decided[ply] = decision
            self._rules.add(decision.score_cp, decision.tablebase_wdl)
        decision = self._decided[ply]
        if self._rules.should_resign():
            self.log.info("resigning", scores=self._rules.scores[-self.config.draw_or_resign.resign_moves:])
            self._posted.add(ply)
            return [Resign()]
        offer_draw = self._rules.should_offer_draw(board)
        if offer_draw and self._opp_offers_draw:
            self.log.info("accepting the opponent's draw offer")
        self._attempts[ply] = self._attempts.get(ply, 0) + 1
        clock = self.clock(now)[0]
        deadline = None if clock is None else now + post_patience(clock.time,
                                                                  int(move_overhead_ms(clock, self.config.timeman)))
        if self.overhead is not None and self.color is not None and clock is not None:  # to measure its cost
            self.overhead.posted(ply, Clock.from_lichess(self.times, self.color), now - self.state_at)
        not_before = None
        if self.config.fake_think_time and clock is not None:  # from our clock at the position's state
            ours = self.times[0] if self.color == chess.WHITE else self.times[1]
            not_before = self.state_at + fake_think_s(ours, int(move_overhead_ms(clock, self.config.timeman)), ply)
        return [PostMove(ply, decision.move, offer_draw, deadline, not_before)]

    def _may_ponder(self) -> bool:
        """Think on the opponent's time in this game: ``correspondence.ponder`` in a correspondence game (one the
        bot is connected to), else ``engine.ponder`` (lichess-bot lib/lichess_bot.py: the same choice)."""
        own = self.game_config
        return own.correspondence.ponder if self.correspondence else own.engine.ponder

    def move_refused(self, post: PostMove, error: str) -> list[Action]:
        """lichess did not take the move: resync from its state (the same move is posted again there)."""
        self.failures += 1
        self.log.warning("move not accepted; resyncing", move=post.move.uci(), error=error,
                         attempt=self._attempts.get(post.ply, 0))
        return [Resync()]

    def move_posted(self, post: PostMove) -> list[Action]:
        """lichess took the move: it is recorded and logged; the eval line for the chat, and the ponder search
        on the expected reply."""
        ply, decision = post.ply, self._decided[post.ply]
        self._posted.add(ply)
        self.record.decisions[ply] = decision
        self._our_moves += 1
        sc = decision.score
        self.log.info("move", ply=ply, move=decision.move.uci(), source=decision.source,
                      time_s=round(decision.time, 3), nodes=decision.nodes, reused=decision.reused_nodes,
                      nps=decision.nps, depth=decision.depth, seldepth=decision.seldepth,
                      cp=sc.cp if sc else None, mate=sc.mate if sc else None, wdl=sc.wdl if sc else None,
                      stop=decision.stop_reason, draw_offer=post.offer_draw or None)
        board = self.board  # the position of ``ply``: no event comes between the post and its answer
        assert board is not None and len(board.move_stack) == ply
        actions: list[Action] = list(self.talk.after_move(decision, board, self._our_moves))
        if decision.ponder is not None and self._may_ponder():
            after = board.copy()
            after.push(decision.move)
            actions.append(Ponder(after, decision.ponder))
        return actions
