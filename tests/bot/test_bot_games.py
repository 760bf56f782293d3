"""Whole games of the bot service against the test server, with the real engine on the tiny net.

Every test captures the logs (JSON, debug level, *without* redaction) and checks that the token never
appears in them.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import chess
import pytest

from lichessbot import __version__
from lichessbot.bot.chat.commands import EVAL_REFUSAL
from lichessbot.bot.service.account import NotBotError
from lichessbot.config import parse_config
from lichessbot.thinker.engine import Engine
from tests.fake_lichess import BotRun, FakeLichess, mate_or_random, resign_after, scripted, staller

TOKEN = "lip_Secret0Token1For2Tests"
pytestmark = pytest.mark.usefixtures("logs")  # every test: no token in the logs, JSON lines
MATED_IN_ONE = "8/8/8/6r1/5q2/6k1/8/7K w - - 0 1"     # white's only move Kg1, then black mates
LAST_CAPTURE = "7k/8/8/8/8/8/1q6/K7 w - - 0 1"        # white's only move Kxb2: king against king


def _unique_plies(game) -> bool:
    plies = [p for p, _, _ in game.posts]
    return len(plies) == len(set(plies))


def test_game_ending_in_mate_is_saved_as_pgn(server, engine, tmp_path):
    with BotRun(server, engine, {"pgn_directory": str(tmp_path)}) as bot:
        game = bot.play(fen=MATED_IN_ONE, opponent=mate_or_random(), limit=60, increment=1)
        assert server.wait_for(lambda: list(tmp_path.glob("*.pgn")), 10)
    assert (game.status, game.winner) == ("mate", "black")
    assert game.posts == [(0, "h1g1", False)]
    pgn = next(tmp_path.glob("*.pgn")).read_text()
    assert '[Result "0-1"]' in pgn and f'[FEN "{MATED_IN_ONE}"]' in pgn and '[TimeControl "60+1"]' in pgn
    assert "1. Kg1 { [%eval" in pgn and "[%clk 0:01:0" in pgn


def test_game_ending_in_a_draw(server, engine, tmp_path):
    with BotRun(server, engine, {"pgn_directory": str(tmp_path)}) as bot:
        game = bot.play(fen=LAST_CAPTURE)
        assert server.wait_for(lambda: list(tmp_path.glob("*.pgn")), 10)
    assert (game.status, game.winner) == ("draw", None)
    assert '[Result "1/2-1/2"]' in next(tmp_path.glob("*.pgn")).read_text()


@pytest.mark.slow
def test_opponent_losing_on_time(server, engine):
    with BotRun(server, engine) as bot:
        game = bot.play(limit=2, speed="bullet", opponent=scripted(["e7e5", "g8f6"]))  # then it sits
    assert (game.status, game.winner) == ("outoftime", "white")
    assert game.ply() == 5 and _unique_plies(game)


def test_a_burst_of_challenges_never_exceeds_concurrency(server, engine):
    with BotRun(server, engine, {"challenge": {"concurrency": 2, "queue_wait": 0}}) as bot:  # no queue
        ids = [server.challenge(opponent=staller()) for _ in range(6)]
        assert server.wait_for(lambda: len(server.answers) == 6, 10)
        answers = [server.answers[i] for i in ids]
        assert Counter(answers) == {("accept", None): 2, ("decline", "later"): 4}
        assert server.wait_for(lambda: all(g.ply() == 1 for g in server.games.values()), 10)
        assert bot.service.busy() == 2
        bot.service.quit(resign=True)  # resign_on_quit: abort both (no one has moved twice)
        bot.join()
    assert [g.status for g in server.games.values()] == ["aborted", "aborted"]


def test_a_game_thread_is_never_reaped_while_it_starts(server, engine, monkeypatch):
    class SlowStart(threading.Thread):
        def start(self) -> None:
            if self.name.startswith("game-"):
                time.sleep(0.5)  # registered, not alive yet: the main loop reaps dead threads every 0.2 s
            super().start()

    monkeypatch.setattr(threading, "Thread", SlowStart)
    with BotRun(server, engine) as bot:
        cid = server.challenge(opponent=staller())
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() == 1, 10)
        assert cid in bot.service.games  # still tracked: the second Ctrl-C reaches it
        bot.service.quit(resign=True)
        bot.join()
    assert server.games[cid].status == "aborted"


def test_event_and_game_streams_dropped_mid_game_are_resumed(server, engine):
    with BotRun(server, engine):
        cid = server.challenge(opponent=resign_after(16))
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() >= 4, 10)
        server.drop_event_streams()
        server.drop_game_streams(cid)
        assert server.wait_for(lambda: server.games[cid].over, 20)
        game = server.games[cid]
        assert server.wait_for(lambda: server.event_connections >= 2, 5)
    assert game.status == "resign" and game.stream_connections >= 2
    assert _unique_plies(game) and not game.rejected_posts


@pytest.mark.parametrize("failures", [[429], [500, 502], [503, 429]])
@pytest.mark.slow
def test_move_post_answered_429_or_5xx_is_retried_with_the_same_move(server, engine, failures):
    server.move_failures = list(failures)
    server.limit_seconds = 0
    with BotRun(server, engine) as bot:
        game = bot.play(opponent=resign_after(6))
    assert game.status == "resign"
    assert [s for _, _, s in game.rejected_posts] == failures
    assert {u for p, u, _ in game.rejected_posts} == {game.posts[0][1]}  # retried the same move
    assert _unique_plies(game)


@pytest.mark.slow
def test_a_slow_failing_chat_never_holds_up_moves(server, engine):
    server.chat_status, server.chat_delay = 400, 4.0
    with BotRun(server, engine, {"chat": {"eval_room": "spectator", "eval_every": 1}}) as bot:
        game = bot.play(opponent=resign_after(11))
        chat_answers = [r for r in server.requests if r[1].endswith("/chat")]
    assert game.status == "resign" and len(game.posts) == 6
    assert len(chat_answers) <= 1  # the game ended while the first chat call was still hanging


def test_chat_answering_400_is_logged_and_play_goes_on(server, engine, logs):
    server.chat_status = 400
    with BotRun(server, engine) as bot:
        game = bot.play(opponent=resign_after(7))
        assert server.wait_for(lambda: bot.service.chat.failed >= 3, 5)
    assert game.status == "resign" and len(game.posts) == 4
    assert '"event": "chat not sent"' in logs.getvalue()


def test_malformed_lines_are_skipped(server, engine, logs):
    with BotRun(server, engine):
        cid = server.challenge(opponent=resign_after(12))
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() >= 2, 10)
        server.push_game_raw(cid, b"{garbage\n")
        server.push_game_raw(cid, b'{"type": "gameState", "moves": "e2e4 zz99", "wtime": 60000, "btime": 60000, '
                                  b'"winc": 0, "binc": 0, "status": "started"}\n')  # unparsable moves: resync
        server.push_event_raw(b"not json at all\n")
        assert server.wait_for(lambda: server.games[cid].over, 15)
        game = server.games[cid]
    assert game.status == "resign" and _unique_plies(game) and not game.rejected_posts
    assert logs.getvalue().count("malformed line skipped") == 2


def test_chat_commands_greetings_evals_and_claiming_a_win_when_the_opponent_leaves(server, engine):
    # command_interval 0: carol's two commands in a row are both answered (the limit: test_chat_commands.py)
    with BotRun(server, engine, {"chat": {"eval_room": "spectator", "eval_every": 1, "command_interval": 0}}):
        cid = server.challenge(opponent=scripted(["e7e5"]), challenger="carol")
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() == 3, 10)
        server.say(cid, "!eval")
        server.say(cid, "!name", room="spectator", username="watcher")
        server.say(cid, "!help")
        server.say(cid, "hello there")
        assert server.wait_for(lambda: len(server.games[cid].chat) >= 7, 10)
        server.opponent_gone(cid, claim_in=0)
        assert server.wait_for(lambda: server.games[cid].over, 10)
        assert server.wait_for(lambda: any("Good game, carol" in t for _, t in server.games[cid].chat), 5)
        game = server.games[cid]
    assert (game.status, game.winner) == ("timeout", "white")
    chat = game.chat
    assert chat[0] == ("player", "Hi! I'm TestBot, a neural-network bot. Good luck! Type !help for commands.")
    evals = [(r, t) for r, t in chat if t.startswith("eval") or t.startswith("mate")]
    assert len(evals) >= 2 and all(len(t) <= 140 for _, t in chat)  # after our moves
    assert {r for r, _ in evals} == {"spectator"}  # never the player room
    assert ("player", EVAL_REFUSAL) in chat  # !eval asked by the opponent
    assert ("spectator", f"TestBot running lichessbot with the tiny network (lichessbot {__version__})") in chat
    assert any(t.startswith("Commands:") for _, t in chat)


def test_first_stop_declines_new_challenges_and_finishes_the_running_game(server, engine):
    with BotRun(server, engine) as bot:
        cid = server.challenge(opponent=resign_after(10))
        assert server.wait_for(lambda: cid in server.games, 10)
        bot.service.stop()
        late = server.challenge()
        bot.join()
    assert server.games[cid].status == "resign" and server.answers[late] == ("decline", "later")
    assert bot.rc == 0 and bot.error is None


def test_resign_on_quit_resigns_a_running_game(server, engine):
    with BotRun(server, engine, {"resign_on_quit": True}) as bot:
        cid = server.challenge(opponent=scripted(["e7e5"]))
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() == 3, 10)
        bot.service.quit()
        bot.join()
    assert (server.games[cid].status, server.games[cid].winner) == ("resign", "black")


def test_quitting_leaves_a_game_running_on_lichess_and_a_restart_finds_and_finishes_it(server, engine):
    with BotRun(server, engine) as bot:
        cid = server.challenge(opponent=resign_after(8), limit=120, increment=1)
        assert server.wait_for(lambda: cid in server.games and server.games[cid].ply() >= 3, 10)
        bot.service.quit()  # a second signal: exit now, no resignation
        bot.join()
    game = server.games[cid]
    assert not game.over and game.status == "started"
    with BotRun(server, engine) as bot:  # a new process: lichess re-sends gameStart for the ongoing game
        assert server.wait_for(lambda: game.over, 30)
    assert (game.status, game.winner) == ("resign", "white") and not game.rejected_posts


def test_a_non_bot_account_is_refused_unless_upgrade(engine):
    with FakeLichess(token=TOKEN, title=None) as server:
        run = BotRun(server, engine)
        run.thread.start()
        run.join()
        assert isinstance(run.error, NotBotError) and "--upgrade" in str(run.error)
        with BotRun(server, engine, upgrade=True):
            pass
        assert server.title == "BOT"


def test_black_side_and_castling_sent_king_takes_rook(server, engine):
    server.castling_as_rook = True
    line = ["e2e4", "g1f3", "f1c4", "e1h1", "d2d3", "c1g5", "b1c3"]
    with BotRun(server, engine) as bot:
        game = bot.play(bot_color="black", opponent=scripted(line, then=resign_after(0)), limit=60)
    assert game.status == "resign" and _unique_plies(game)
    assert chess.Move.from_uci("e1g1") in game.board.move_stack or len(game.board.move_stack) < 7


@pytest.mark.slow
def test_pondering_games_play_on_and_hit_when_the_opponent_plays_the_expected_move(server, tmp_path, request):
    from tests.tinynet import build_tiny_onnx

    net = build_tiny_onnx(tmp_path / "tiny.onnx", seed=3)
    cfg = parse_config({"engine": {"network": str(net), "backend": "cpu", "threads": 1, "ponder": True,
                                   "search": {"minibatch_size": 8}}})
    pondering = Engine(cfg, nodes=24)
    request.addfinalizer(pondering.close)
    expected: list[chess.Move] = []

    def plays_the_ponder_move(board: chess.Board) -> chess.Move:  # the bot's expected reply when it has one
        thinker_moves = [d for d in expected if d in board.legal_moves]
        return thinker_moves[-1] if thinker_moves else next(iter(board.legal_moves))

    original = pondering.new_game

    def new_game(game_id=None):
        thinker = original(game_id)
        ponder = thinker.ponder

        def spy(board, reply):
            expected.append(reply)
            ponder(board, reply)
        thinker.ponder = spy
        return thinker
    pondering.new_game = new_game
    server.opponent_delay = 0.3  # the reply comes after the bot has started pondering, even on a loaded machine
    with BotRun(server, pondering, {"engine": {"ponder": True}}) as bot:  # the game core decides to ponder
        game = bot.play(opponent=resign_after(9, plays_the_ponder_move), limit=60, increment=1)
    assert game.status == "resign" and len(game.posts) == 5 and _unique_plies(game)
    assert pondering.ponders >= 3 and pondering.ponder_hits >= 2
