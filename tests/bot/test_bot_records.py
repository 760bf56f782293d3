"""Eval chat lines, chat commands, PGN records, move parsing and log redaction (no server needed)."""

from __future__ import annotations

import io
import json
import threading

import chess
import chess.pgn
import structlog

from lichessbot import __version__
from lichessbot.bot.chat.commands import (
    EVAL_REFUSAL,
    HELP,
    HOWTO,
    WAIT_GRANTED,
    WAIT_REFUSAL,
    WAIT_REPLY,
    WAIT_S,
    ChatContext,
    Reply,
    WaitGrace,
    reply_to,
)
from lichessbot.bot.chat.lines import MAX_CHAT, ChatSender, eval_line
from lichessbot.bot.games.move_rules import parse_moves
from lichessbot.bot.games.pgn import GameRecord, result_string, to_pgn
from lichessbot.logs import configure_logging
from lichessbot.score import Score
from lichessbot.search import SearchResult
from lichessbot.thinker.protocol import Decision

E4 = chess.Move.from_uci("e2e4")


def _decision(move: chess.Move = E4, *, cp: int = 35, mate: int | None = None, nodes: int = 12345,
              nps: int = 850, pv: tuple[chess.Move, ...] | None = None, reused: int = 0) -> Decision:
    """A search decision with depth 6, seldepth 9 and WDL 41/33/26 %; ``pv`` defaults to e4 c5 Nf3."""
    pv = pv or (E4, chess.Move.from_uci("c7c5"), chess.Move.from_uci("g1f3"))
    score = Score(cp=cp, wdl=(0.41, 0.33, 0.26), mate=mate)
    result = SearchResult(best_move=move, ponder_move=None, pv=list(pv), q=0.0, score=score, nodes=nodes,
                          playouts=nodes - reused, reused_nodes=reused, nps=nps, depth=6, seldepth=9, time=1.0,
                          stop_reason="")
    return Decision(move=move, source="search", result=result)


def test_eval_line_has_score_wdl_stats_and_pv_in_san():
    line = eval_line(_decision(), chess.Board())
    assert line == "eval +0.35 | W 41% D 33% L 26% | nodes 12.3k nps 850 depth 6/9 | pv e4 c5 Nf3"
    # lc0's figures as the search gives them, and the nodes kept from the previous tree apart
    reused = eval_line(_decision(reused=4000), chess.Board())
    assert "nodes 12.3k (reused 4000) nps 850 depth 6/9" in reused


def test_eval_line_is_from_white_s_side_as_lichess_shows_evals_also_for_a_move_of_black():
    board = chess.Board()
    board.push_uci("e2e4")  # black to move: the search's +0.35 and W 41% are black's
    line = eval_line(_decision(move=chess.Move.from_uci("c7c5"), pv=(chess.Move.from_uci("c7c5"),)), board)
    assert line.startswith("eval -0.35 | W 26% D 33% L 41% |"), line
    mated = eval_line(_decision(move=chess.Move.from_uci("c7c5"), pv=(chess.Move.from_uci("c7c5"),), mate=3), board)
    assert mated.startswith("mate -3 |"), mated


def test_eval_line_stays_within_140_characters_with_a_long_pv():
    board = chess.Board()
    pv = []
    b = board.copy()
    for uci in "g1f3 g8f6 b1c3 b8c6 f3g1 f6g8 c3b1 c6b8 g1f3 g8f6 b1c3 b8c6 f3g1 f6g8 c3b1 c6b8".split():
        pv.append(chess.Move.from_uci(uci))
        b.push(pv[-1])
    line = eval_line(_decision(move=pv[0], pv=tuple(pv), nodes=123_456_789, nps=2_345_678, mate=-12), board)
    assert len(line) <= MAX_CHAT and line.startswith("mate -12 |") and "pv Nf3 Nf6" in line


def test_book_moves_say_book():
    assert eval_line(Decision(move=E4, source="book"), chess.Board()) == "book move e4"


def answer_command(text: str, **context) -> str | None:
    reply = reply_to(text, ChatContext(**context))
    return None if reply is None else reply.text


def test_chat_commands():
    assert answer_command("!eval", last_eval="eval +0.10") == "eval +0.10"
    assert answer_command("!EVAL please") == "No evaluation yet."
    assert answer_command(" !name", name="Bot running x") == f"Bot running x (lichessbot {__version__})"
    assert answer_command("!help").startswith("Commands: !wait")
    assert answer_command("!commands") == HELP
    assert answer_command("!howto") == HOWTO
    assert answer_command("!wait", can_wait=True) == WAIT_REPLY
    assert answer_command("!wait") == WAIT_REFUSAL
    assert answer_command("!queue") == "No challenges queued."
    assert answer_command("!Queue", queue=("ann", "bob")) == "Challenge queue: @ann, @bob"
    assert answer_command("!eval", last_eval="eval +0.10", room="player", in_game=True) == EVAL_REFUSAL
    assert answer_command("!eval", last_eval="eval +0.10", room="spectator", in_game=True) == "eval +0.10"
    assert answer_command("good luck") is None
    assert answer_command("") is None


def test_wait_grants_its_grace_as_an_effect_not_as_a_text():
    """The grace is the reply's effect (the game reads it, never the reply's words): the first !wait while an
    abort is possible has it, a later one or one after the abort window has none."""
    assert reply_to("!wait", ChatContext(can_wait=True)) == Reply(WAIT_REPLY, WaitGrace(WAIT_S))
    assert reply_to("!wait", ChatContext(can_wait=True, wait_granted=True)) == Reply(WAIT_GRANTED)
    assert reply_to("!wait", ChatContext()) == Reply(WAIT_REFUSAL)
    assert all(reply_to(c, ChatContext(can_wait=True)).effect is None for c in ("!eval", "!name", "!help", "!queue"))


def test_chat_sender_cuts_long_lines_and_survives_failures():
    sent = []

    def post(game_id, room, text):
        if text == "boom":
            raise RuntimeError("HTTP 400")
        sent.append((game_id, room, text))
    chat = ChatSender(post)
    chat.send("g", "player", "boom")
    chat.send("g", "spectator", "x" * 300)
    chat.close()
    assert chat.failed == 1 and sent == [("g", "spectator", "x" * 139 + "…")]


def test_chat_sender_close_drops_what_it_cannot_send_in_time():
    release, sent = threading.Event(), []

    def post(game_id, room, text):
        release.wait(10)
        sent.append(text)
    chat = ChatSender(post)
    for text in ("one", "two", "three"):
        chat.send("g", "player", text)
    chat.close(timeout=0.2)
    release.set()
    chat._thread.join(5)
    assert not chat._thread.is_alive() and sent == ["one"] and chat.failed == 2


def test_moves_are_parsed_in_both_castling_notations():
    moves = "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 e1h1 g8f6"
    board = parse_moves(chess.Board(), moves)
    assert board.move_stack[6] == chess.Move.from_uci("e1g1")
    assert board == parse_moves(chess.Board(), moves.replace("e1h1", "e1g1"))


def test_pgn_has_headers_evals_clocks_and_result():
    record = GameRecord(game_id="abc12345", site="https://lichess.org/abc12345", white="TestBot", black="alice",
                        white_elo=2000, black_elo=1500, rated=True, speed="blitz", clock_initial_ms=180_000,
                        clock_increment_ms=2000, status="mate", winner="white")
    board = chess.Board()
    for ply, uci in enumerate("f2f3 e7e5 g2g4 d8h4".split()):  # reversed fool's mate for the record's sake
        record.moves.append(chess.Move.from_uci(uci))
        record.clocks[ply] = 180_000 - 1000 * ply
        board.push(record.moves[-1])
    record.decisions[0] = _decision(move=record.moves[0], cp=-20)
    record.decisions[2] = _decision(move=record.moves[2], mate=-1)
    record.status, record.winner = "mate", "black"
    game = chess.pgn.read_game(io.StringIO(to_pgn(record)))
    assert game.headers["Result"] == "0-1" and game.headers["TimeControl"] == "180+2"
    assert game.headers["Event"] == "Rated blitz game" and game.headers["WhiteElo"] == "2000"
    nodes = list(game.mainline())
    assert nodes[0].eval().white() == chess.engine.Cp(-20) and nodes[0].clock() == 180.0
    assert nodes[2].eval().white() == chess.engine.Mate(-1) and nodes[3].clock() == 177.0
    assert nodes[1].eval() is None


def test_results():
    assert result_string("outoftime", "black") == "0-1"
    assert result_string("stalemate", None) == "1/2-1/2"
    assert result_string("aborted", None) == "*"


def test_logs_redact_the_token_everywhere():
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, secrets=["lip_SUPERSECRET"])
    log = structlog.get_logger("t").bind(game_id="g1")
    log.info("an event with lip_SUPERSECRET", url="https://x/?t=lip_SUPERSECRET", nested={"a": ["lip_SUPERSECRET"]})
    try:
        raise ValueError("bad token lip_SUPERSECRET")
    except ValueError:
        log.exception("failed")
    import logging
    logging.getLogger("urllib3").warning("header %s", "Bearer lip_SUPERSECRET")
    text = buf.getvalue()
    assert "lip_SUPERSECRET" not in text and text.count("***") >= 5
    first = json.loads(text.splitlines()[0])
    assert first["game_id"] == "g1" and first["level"] == "info"


def test_bot_games_are_counted_in_lilas_fixed_day_window_from_its_first_game():
    """lila BotLimit over memo RateLimit: the window opens at the first game and closes a day later, whatever
    games came meanwhile (issue 40, point 6); a rolling window would still count the late game."""
    from lichessbot.bot.challenges.records import BOT_GAMES_KEPT, DeclineRecords

    rec = DeclineRecords()
    t0 = 1_000_000.0
    rec.count_bot_game("g1", t0)
    rec.count_bot_game("g2", t0 + 23 * 3600)
    assert rec.bot_games_in_day(t0 + 23 * 3600) == 2
    assert rec.bot_window_ends(t0 + 3600) == t0 + BOT_GAMES_KEPT
    assert rec.bot_games_in_day(t0 + BOT_GAMES_KEPT + 1) == 0  # the window closed: g2 no longer counts
    rec.count_bot_game("g3", t0 + BOT_GAMES_KEPT + 10)  # opens the next window
    assert rec.bot_games_in_day(t0 + BOT_GAMES_KEPT + 20) == 1
    assert rec.bot_window_ends(t0 + BOT_GAMES_KEPT + 20) == t0 + BOT_GAMES_KEPT + 10 + BOT_GAMES_KEPT
    rec.prune(t0 + BOT_GAMES_KEPT + 20)
    assert set(rec.bot_games) == {"g3"}
