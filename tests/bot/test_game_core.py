"""A game's decisions as plain function calls on its core (:class:`lichessbot.bot.games.core.GameCore`): typed
lichess events and the time in, actions out. No thread, no socket, no clock: ``now`` is an argument; no file
either: every test here runs with the file functions raising (:func:`no_files`)."""

from __future__ import annotations

import builtins
import os
import random

import chess
import pytest

from lichessbot.bot.chat.commands import EVAL_REFUSAL, HOWTO, WAIT_REFUSAL, WAIT_REPLY, WAIT_S
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
    Say,
    SetOpponent,
)
from lichessbot.bot.games.core import CLAIM_RETRY, MAX_POST_ATTEMPTS, GameCore
from lichessbot.config import parse_config
from lichessbot.lichess.events import (
    ChatLine,
    ClockSetting,
    Connected,
    GameFull,
    GamePlayer,
    GameState,
    OpponentGone,
)
from tests.fake_lichess import stand_in_decision


@pytest.fixture(autouse=True)
def no_files(monkeypatch):
    """The core is pure: a file opened, written or renamed while a test of it runs fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"the game core did file I/O: {args[:1]}")

    import lichessbot.bot.games.takeback as takeback
    import lichessbot.files as files

    monkeypatch.setattr(files, "write_atomic", refuse)
    monkeypatch.setattr(takeback, "write_atomic", refuse)
    for name in ("open", "replace", "rename", "mkdir", "makedirs"):
        monkeypatch.setattr(os, name, refuse)
    monkeypatch.setattr(builtins, "open", refuse)


def test_the_core_tests_fail_on_file_io():
    with pytest.raises(AssertionError, match="file I/O"):
        open(os.devnull)  # the fixture refuses it
    from lichessbot.bot.games.takeback import TakebackLedger

    with pytest.raises(AssertionError, match="file I/O"):
        TakebackLedger("/nonexistent/takebacks.json").add("g1")


ME, OPP = GamePlayer(id="testbot", name="TestBot", title="BOT"), GamePlayer(id="alice", name="alice", rating=1620)
T0 = 1000.0  # monotonic seconds of the first event
BLITZ = ClockSetting(60_000, 0)


def core_of(config: dict | None = None, **kw) -> GameCore:
    return GameCore("g1", config=parse_config(config or {}), me="TestBot", url="https://lichess.org",
                    engine_name="tiny", rng=random.Random(0), **kw)


def state(moves: str = "", *, wtime: int = 60_000, btime: int = 60_000, inc: int = 0, status: str = "started",
          **kw) -> GameState:
    return GameState(moves=moves, wtime=wtime, btime=btime, winc=inc, binc=inc, status=status, **kw)


def full(moves: str = "", *, white: GamePlayer = ME, black: GamePlayer = OPP, clock: ClockSetting | None = BLITZ,
         speed: str = "blitz", **kw) -> GameFull:
    return GameFull(id="g1", state=state(moves), white=white, black=black, speed=speed, clock=clock,
                    rated=True, **kw)


def started(config: dict | None = None, moves: str = "", now: float = T0, **kw) -> tuple[GameCore, list[Action]]:
    """A core after its gameFull, the level chosen; the actions of both."""
    core = core_of(config)
    actions = core.on_event(full(moves, **kw), now)
    actions += core.level_chosen("1450 Elo") if any(isinstance(a, SetOpponent) for a in actions) else []
    return core, actions


def play(core: GameCore, now: float, decision=None, *, posted: bool = True) -> list[Action]:
    """Our move now: the core's request, ``decision`` (default: the stand-in's first legal move with cp 12),
    and, when the core posts it, lichess taking it (``posted``) or refusing it."""
    request = core.to_play(now)
    assert request is not None, "not our move"
    if decision is None and request.decided is None:
        move = sorted(request.board.legal_moves, key=chess.Move.uci)[0]
        decision = stand_in_decision(move, cp=12, nodes=16, nps=1000.0, depth=2.0, seconds=0.01, reason="test")
    actions = core.decided(request, decision, now)
    post = next((a for a in actions if isinstance(a, PostMove)), None)
    if post is not None:
        actions += core.move_posted(post) if posted else core.move_refused(post, "500")
    return actions


def said(actions: list[Action]) -> list[tuple[str, str]]:
    return [(a.room, a.text) for a in actions if isinstance(a, Say)]


def test_game_full_names_the_opponent_to_the_engine_and_greets_with_the_level_it_chose():
    core = core_of({"greeting": {"hello": "Hi {opponent}, I play at {level}"}})
    actions = core.on_event(full(), T0)
    assert actions == [SetOpponent(rating=1620, rated=True, name="alice")]
    assert said(core.level_chosen("1450 Elo")) == [("player", "Hi alice, I play at 1450 Elo"),
                                                   ("spectator", "Hi! I'm TestBot. Type !help for commands.")]
    assert core.color == chess.WHITE and core.record.white == "TestBot" and core.record.black_elo == 1620
    assert core.level_chosen("1450 Elo") == []  # greeted once


def test_a_game_joined_late_is_not_greeted_and_a_game_we_do_not_play_asks_nothing():
    core, actions = started(moves="e2e4 e7e5")
    assert said(actions) == []
    stranger = core_of()
    assert stranger.on_event(full(white=OPP, black=GamePlayer(id="bob")), T0) == []
    assert stranger.color is None and stranger.to_play(T0) is None


def test_our_move_is_decided_once_posted_with_its_deadline_and_recorded():
    core, _ = started()
    request = core.to_play(T0 + 1)
    assert request is not None and request.ply == 0 and request.first_moves_unclocked
    assert request.clock is not None and request.clock.time == 60_000 and request.clock.initial == 60_000
    actions = play(core, T0 + 1)
    post = actions[0]
    assert isinstance(post, PostMove) and post.ply == 0 and not post.offer_draw
    assert post.deadline == pytest.approx(T0 + 1 + 2.0)  # post_patience: a tenth of 59.7 s, at most 2 s
    assert 0 in core.record.decisions and core.to_play(T0 + 2) is None  # not our move any more
    core.on_event(state(f"{post.move.uci()}"), T0 + 2)
    assert core.to_play(T0 + 2) is None


def test_our_clock_counts_the_time_since_the_state_from_the_second_moves_on():
    core, _ = started()
    core.on_event(state("e2e4 e7e5", wtime=50_000, btime=40_000, inc=2000), T0 + 10)
    request = core.to_play(T0 + 13)
    assert request is not None and not request.first_moves_unclocked
    c = request.clock
    assert c is not None and (c.time, c.inc, c.opp_time, c.opp_inc) == (47_000, 2000, 40_000, 2000)


def test_a_game_full_counts_our_clock_from_the_request_that_opened_the_stream():
    core = core_of()
    core.on_event(Connected(reconnect=True, opened_at=T0), T0)
    core.on_event(full("e2e4 e7e5"), T0 + 3)  # answered 3 s after we asked
    request = core.to_play(T0 + 3)
    assert request is not None and request.clock is not None and request.clock.time == 57_000


def test_a_refused_post_resyncs_and_posts_the_same_move_again_then_waits_for_the_server():
    core, _ = started()
    first = play(core, T0, posted=False)
    assert isinstance(first[0], PostMove) and first[1:] == [Resync()] and core.failures == 1
    move = first[0].move
    for attempt in range(2, MAX_POST_ATTEMPTS + 1):
        request = core.to_play(T0 + attempt)
        assert request is not None and request.decided is not None and request.decided.move == move
        actions = play(core, T0 + attempt, posted=False)
        assert actions[0] == PostMove(0, move, False, actions[0].deadline)
    assert core.to_play(T0 + 9) is None  # the server's next state decides


def test_a_state_seen_twice_never_asks_for_a_second_move():
    core, _ = started()
    actions = play(core, T0)
    core.on_event(state(f"{actions[0].move.uci()} e7e5"), T0 + 1)
    play(core, T0 + 1)
    core.on_event(state(f"{actions[0].move.uci()} e7e5"), T0 + 2)  # the same state again
    assert core.to_play(T0 + 2) is None


def test_an_illegal_or_missing_decision_is_replaced_by_a_legal_move():
    core, _ = started()
    bad = stand_in_decision(chess.Move.from_uci("a1a8"), cp=0, nodes=1, nps=1.0, depth=1.0, seconds=0.0, reason="x")
    post = play(core, T0, bad)[0]
    assert isinstance(post, PostMove) and post.move in chess.Board().legal_moves
    assert core.record.decisions[0].note == "fallback" and core.failures == 1
    core.on_event(state(f"{post.move.uci()} e7e5"), T0 + 1)
    request = core.to_play(T0 + 1)
    assert request is not None
    post = core.decided(request, None, T0 + 1)[0]  # the engine failed
    assert isinstance(post, PostMove) and post.move in request.board.legal_moves and core.failures == 2


def test_resigns_after_resign_moves_bad_scores():
    core, _ = started({"draw_or_resign": {"resign_enabled": True, "resign_score": -300, "resign_moves": 2}})
    bad = stand_in_decision(chess.Move.from_uci("e2e4"), cp=-500, nodes=1, nps=1.0, depth=1.0, seconds=0.0,
                            reason="x")
    assert isinstance(play(core, T0, bad)[0], PostMove)  # one bad score is not enough
    core.on_event(state("e2e4 e7e5"), T0 + 1)
    bad = stand_in_decision(chess.Move.from_uci("d2d4"), cp=-400, nodes=1, nps=1.0, depth=1.0, seconds=0.0,
                            reason="x")
    assert play(core, T0 + 1, bad) == [Resign()]
    assert core.to_play(T0 + 2) is None


def test_offers_a_draw_with_the_move_after_offer_draw_moves_level_scores_and_accepts_the_opponents():
    core, _ = started({"draw_or_resign": {"offer_draw_enabled": True, "offer_draw_score": 20, "offer_draw_moves": 2}})
    assert play(core, T0)[0].offer_draw is False
    core.on_event(state("a2a3 e7e5", bdraw=True), T0 + 1)  # the opponent offers a draw
    assert play(core, T0 + 1)[0].offer_draw is True  # two level scores: offered (and so accepted)


def test_the_eval_line_goes_to_spectators_every_eval_every_moves_and_the_ponder_follows_the_move():
    core, _ = started({"chat": {"eval_room": "spectator", "eval_every": 2}})
    board = chess.Board()
    lines = []
    for ply in range(0, 8, 2):
        actions = play(core, T0 + ply)
        post = actions[0]
        lines += said(actions)
        board.push(post.move)
        reply = sorted(board.legal_moves, key=chess.Move.uci)[0]
        board.push(reply)
        core.on_event(state(" ".join(m.uci() for m in board.move_stack)), T0 + ply + 1)
    assert [room for room, _ in lines] == ["spectator", "spectator"]  # after our 2nd and 4th moves
    assert all(text.startswith("eval +0.12") for _, text in lines)
    assert not any(isinstance(a, Ponder) for a in actions)  # the stand-in gives no expected reply


def test_an_opponent_who_never_moves_is_aborted_after_abort_time_and_wait_grants_a_minute_from_then():
    core, _ = started({"abort_time": 20})
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)  # the opponent's first move is due from T0 + 1
    assert core.tick(T0 + 20) == []
    answer = core.on_event(ChatLine("player", "alice", "!wait"), T0 + 5)
    assert said(answer) == [("player", WAIT_REPLY)]
    assert core.tick(T0 + 22) == []  # abort_time passed, but !wait allows WAIT_S from T0 + 5
    assert core.tick(T0 + 5 + WAIT_S) == []
    assert core.tick(T0 + 5 + WAIT_S + 0.1) == [Abort()]
    assert core.tick(T0 + 30 + WAIT_S) == []  # asked once


def test_a_wait_never_shortens_abort_time():
    core, _ = started({"abort_time": 100})
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)
    assert said(core.on_event(ChatLine("player", "alice", "!wait"), T0 + 2)) == [("player", WAIT_REPLY)]
    assert core.tick(T0 + 2 + WAIT_S + 1) == []  # the later of the two deadlines: T0 + 1 + 100
    assert core.tick(T0 + 101.1) == [Abort()]


@pytest.mark.parametrize("kw", [{"tournament_id": "arena1"}, {"clock": None, "speed": "correspondence"}])
def test_an_arena_or_correspondence_game_is_never_aborted(kw):
    core, _ = started({"abort_time": 1}, **kw)
    play(core, T0)
    core.on_event(state("e2e4"), T0 + 1)
    assert core.tick(T0 + 1000) == []


def test_wait_after_both_sides_moved_is_refused_and_chat_commands_are_answered_in_their_room():
    core, _ = started({"chat": {"eval_every": 1}})
    play(core, T0)
    core.on_event(state("a2a3 e7e5"), T0 + 1)
    play(core, T0 + 1)
    assert said(core.on_event(ChatLine("player", "alice", "!wait"), T0 + 2)) == [("player", WAIT_REFUSAL)]
    # one answer per user and room every chat.command_interval (5 s): the next ones come later
    assert said(core.on_event(ChatLine("player", "alice", "!eval"), T0 + 8)) == [("player", EVAL_REFUSAL)]
    spectators = said(core.on_event(ChatLine("spectator", "watcher", "!eval"), T0 + 2))
    assert spectators[0][0] == "spectator" and spectators[0][1].startswith("eval +0.12")
    assert said(core.on_event(ChatLine("spectator", "watcher", "!howto"), T0 + 8)) == [("spectator", HOWTO)]
    assert core.on_event(ChatLine("player", "TestBot", "!help"), T0 + 2) == []  # never our own lines


def test_queue_reads_the_challengers_waiting():
    core = core_of(queued=lambda: ["dave", "erin"])
    core.on_event(full(), T0)
    assert said(core.on_event(ChatLine("player", "alice", "!queue"), T0)) == [
        ("player", "Challenge queue: @dave, @erin")]


@pytest.mark.parametrize(("draw", "claim"), [(False, Claim(draw=False)), (True, Claim(draw=True))])
def test_a_gone_opponent_is_claimed_once_lichess_allows_it_and_again_each_second(draw, claim):
    core, _ = started({"draw_or_resign": {"claim_draw_when_gone": draw}})
    core.on_event(OpponentGone(gone=True, claim_win_in_seconds=5), T0)
    assert core.tick(T0 + 4) == []
    assert core.tick(T0 + 5) == [claim]
    assert core.tick(T0 + 5 + CLAIM_RETRY / 2) == []
    assert core.tick(T0 + 5 + CLAIM_RETRY) == [claim]  # lichess answered without effect: again
    core.on_event(OpponentGone(gone=False), T0 + 7)
    assert core.tick(T0 + 9) == []


def test_takebacks_are_accepted_up_to_the_limit_and_the_position_is_thought_again():
    core, _ = started({"max_takebacks_accepted": 1})
    play(core, T0)
    core.on_event(state("a2a3 e7e5"), T0 + 1)
    ours = play(core, T0 + 1)[0].move.uci()  # a1a2: the stand-in's first move in sorted order
    offer = core.on_event(state(f"a2a3 e7e5 {ours}", btakeback=True), T0 + 2)
    assert offer == [AnswerTakeback(accept=True, ply=3)]
    assert core.on_event(state(f"a2a3 e7e5 {ours}", btakeback=True), T0 + 2) == []  # answered once
    assert core.takeback_posted(offer[0], None) == [CountTakeback()]  # the shell writes the ledger
    core.on_event(state("a2a3 e7e5"), T0 + 3)  # lichess takes our move back
    request = core.to_play(T0 + 3)
    assert request is not None and request.ply == 2 and request.decided is None  # thought again
    other = chess.Move.from_uci("b2b3")
    play(core, T0 + 3, stand_in_decision(other, cp=0, nodes=1, nps=1.0, depth=1.0, seconds=0.0, reason="x"))
    again = core.on_event(state("a2a3 e7e5 b2b3", btakeback=True), T0 + 4)
    assert again == [AnswerTakeback(accept=False, ply=3)]  # the limit is reached
    assert core.takeback_posted(again[0], None) == []  # a no is not counted
    assert core.on_event(state("a2a3 e7e5 b2b3", status="resign", winner="white"), T0 + 5) == [ForgetTakebacks()]
    assert core.on_event(state("a2a3 e7e5 b2b3", status="resign", winner="white"), T0 + 6) == []  # once


def test_a_takeback_count_from_before_a_restart_holds_and_is_forgotten_at_the_end():
    core = core_of({"max_takebacks_accepted": 1}, takebacks_before=1)
    core.on_event(full(), T0)
    play(core, T0)
    assert core.on_event(state("a2a3 e7e5", btakeback=True), T0 + 1) == [AnswerTakeback(accept=False, ply=2)]
    assert core.on_event(state("a2a3 e7e5", status="mate", winner="white"), T0 + 2) == [ForgetTakebacks()]
    fresh, _ = started()
    assert fresh.on_event(state("a2a3", status="resign", winner="white"), T0 + 1) == []  # nothing in the ledger


def test_an_offer_our_move_declined_is_not_answered():
    """The opponent's offer came while we thought, and our move went out before its state was read: lila declined
    the offer with our move (round MovePlayer: ``Takeback(player, false)``), so a yes now would propose a takeback
    of ours (found by the 100-game soak). An offer shown after our move is answered."""
    core, _ = started({"max_takebacks_accepted": 2})
    play(core, T0)
    core.on_event(state("a2a3 e7e5"), T0 + 1)
    ours = play(core, T0 + 1)[0].move.uci()
    assert core.on_event(state("a2a3 e7e5", btakeback=True), T0 + 2) == []  # sent before lila had our move
    assert core.on_event(state(f"a2a3 e7e5 {ours}"), T0 + 3) == []
    offer = core.on_event(state(f"a2a3 e7e5 {ours}", btakeback=True), T0 + 4)
    assert offer == [AnswerTakeback(accept=True, ply=3)]


def test_a_takeback_answer_that_failed_is_given_again():
    core, _ = started()
    play(core, T0)
    offer = core.on_event(state("a2a3", btakeback=True), T0 + 1)
    assert offer == [AnswerTakeback(accept=False, ply=1)]
    assert core.takeback_posted(offer[0], "500 server error") == []
    assert core.on_event(state("a2a3", btakeback=True), T0 + 2) == offer


@pytest.mark.parametrize("kw", [{"variant": "crazyhouse"}, {"initial_fen": "not a fen"}])
def test_a_game_the_engine_cannot_play_is_abandoned_once(kw):
    core = core_of()
    actions = core.on_event(full(**kw), T0)
    assert len(actions) == 1 and isinstance(actions[0], Abandon) and actions[0].abort  # before any move: abort
    assert core.over and core.abandoned and core.to_play(T0) is None and core.finish() == []


def test_unreadable_moves_abandon_a_game_full_and_resync_a_game_state():
    core = core_of()
    actions = core.on_event(full("e2e4 P@e5"), T0)
    assert isinstance(actions[0], Abandon) and core.over and core.abandoned
    core, _ = started()
    with pytest.raises(ValueError):
        core.on_event(state("e2e4 zz99"), T0)  # the shell resyncs: the next gameFull is the truth
    assert not core.over


def test_castling_sent_as_king_takes_rook_is_read():
    core, _ = started(moves="e2e4 e7e5 g1f3 b8c6 f1c4 g8f6")
    core.on_event(state("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1h1 f8c5"), T0 + 1)
    assert core.board is not None and chess.Move.from_uci("e1g1") in core.board.move_stack


def test_the_game_over_is_recorded_and_the_goodbyes_said_once():
    core, _ = started({"greeting": {"goodbye": "GG {opponent}"}})
    play(core, T0)
    core.on_event(state("a2a3", status="resign", winner="white"), T0 + 1)
    assert core.over and (core.record.status, core.record.winner) == ("resign", "white")
    assert said(core.finish())[0] == ("player", "GG alice") and core.finish() == []
    assert core.to_play(T0 + 2) is None and core.leave() == []


def test_leaving_aborts_before_both_sides_moved_and_resigns_after():
    core, _ = started()
    assert core.leave() == [Abort()]
    core, _ = started(moves="e2e4 e7e5")
    assert core.leave() == [Resign()]


def test_a_correspondence_game_thinks_by_its_clock_and_parks_off_our_move():
    config = {"correspondence": {"disconnect_time": 60}}
    core, _ = started(config, clock=None, speed="correspondence", days_per_turn=3)
    core.on_event(state("", wtime=3 * 86_400_000, btime=3 * 86_400_000), T0)
    request = core.to_play(T0 + 5)
    assert request is not None and request.clock is None and request.time_left_s == pytest.approx(3 * 86_400)
    play(core, T0 + 5)
    core.on_event(state("e2e4"), T0 + 6)
    assert not core.park(T0 + 60) and core.park(T0 + 67) and core.parked


def test_no_move_is_made_in_a_position_whose_takeback_we_accepted():
    core, _ = started({"max_takebacks_accepted": 1})
    play(core, T0)
    offer = core.on_event(state("a2a3 e7e5", btakeback=True), T0 + 1)  # on our move: lichess takes back two plies
    assert offer == [AnswerTakeback(accept=True, ply=2)]
    assert core.takeback_posted(offer[0], None) == [CountTakeback()]
    assert core.to_play(T0 + 1) is None


def test_the_core_measures_what_its_moves_cost_on_the_wire_and_puts_it_in_the_clock():
    # lichess charges a bot's round trip (lila MovePlayer botLag): our move at ply 2 cost 300 ms beyond the
    # 1 s between the state's arrival and the post; the next clock carries it (docs/timeman.md)
    core, _ = started()
    core.on_event(state("e2e4 e7e5", wtime=50_000, btime=40_000), T0 + 10)
    request = core.to_play(T0 + 10)
    assert request is not None and request.clock is not None and request.clock.overhead == 100  # the start
    play(core, T0 + 11)  # posted 1 s after the state arrived
    moved = " ".join(m.uci() for m in core.record.decisions[2].pv[:1]) or "b1a3"
    core.on_event(state(f"e2e4 e7e5 {moved}", wtime=50_000 - 1_300, btime=40_000), T0 + 11.4)
    core.on_event(state(f"e2e4 e7e5 {moved} b8c6", wtime=50_000 - 1_300, btime=39_000), T0 + 12)
    assert core.overhead is not None and core.overhead.samples == [300]
    nxt = core.to_play(T0 + 12)
    assert nxt is not None and nxt.clock is not None and (nxt.clock.overhead, nxt.clock.overhead_typical) == (300, 300)
