"""Gaviota tables at the root (issue 40: lichess-bot's ``lichess_bot_tbs.gaviota``, read with python-chess).

No Gaviota table files are in the repository (they are large downloads), so the prober here is a DTM oracle
computed on the board by an exhaustive search of short mates and of dead draws, with python-chess's
``probe_dtm`` convention (plies to mate, > 0 when the side to move mates, 0 a draw); everything after the
probe (scoring each move, the WDL rule, the choice, the pipeline) is the product's.
"""

from __future__ import annotations

import chess
import pytest

from lichessbot.config.engine import GaviotaConfig
from lichessbot.gaviota import GaviotaError, GaviotaTables, gaviota_tables, move_wdl
from lichessbot.thinker.sources import GaviotaSource
from lichessbot.thinker.types import Decision, MoveRequest, SearchOnly


def _mates_in(board: chess.Board, plies: int) -> bool:
    """The side to move mates within ``plies`` plies (1 or 3), whatever the defence."""
    for move in board.legal_moves:
        board.push(move)
        try:
            if board.is_checkmate():
                return True
            if plies >= 3 and not board.is_game_over() and all(_then_mates(board, r) for r in list(board.legal_moves)):
                return True
        finally:
            board.pop()
    return False


def _then_mates(board: chess.Board, reply: chess.Move) -> bool:
    board.push(reply)
    try:
        return _mates_in(board, 1)
    finally:
        board.pop()


class Oracle:
    """python-chess's ``probe_dtm`` for KQ v K, by search on the board: exact mates within 3 plies, a draw
    when the lone king can take the queen, otherwise the side with the queen wins in a long mate (51 plies,
    the sign as ``probe_dtm`` gives it). ``missing``: answer as a missing table (KeyError)."""

    def __init__(self, missing: bool = False) -> None:
        self.probes = 0
        self.missing = missing

    def probe_dtm(self, board: chess.Board) -> int:
        self.probes += 1
        if self.missing:
            raise KeyError("gaviota table KQvK not found")
        if board.is_insufficient_material():
            return 0
        has_queen = bool(board.pieces(chess.QUEEN, board.turn))
        if has_queen:
            return 1 if _mates_in(board, 1) else 3 if _mates_in(board, 3) else 51
        for move in board.legal_moves:
            board.push(move)
            drawn = board.is_insufficient_material()
            board.pop()
            if drawn:
                return 0
        replies = list(board.legal_moves)
        if all(_then_mates(board, r) for r in replies):
            return -2
        return -50


#: White (to move) mates in one (Qg7#) or in more with other queen moves; KQ v K.
MATE_IN_ONE = chess.Board("7k/8/5KQ1/8/8/8/8/8 w - - 0 1")


def test_a_win_plays_the_fastest_mate_and_says_so():
    tables = GaviotaTables([], probe=Oracle())
    found = tables.root_move(MATE_IN_ONE)
    assert found is not None and len(found.moves) == 1
    board = MATE_IN_ONE.copy()
    board.push(found.moves[0])
    assert board.is_checkmate()
    assert (found.wdl, found.plies, found.describe()) == (2, 1, "gaviota win, mate in 1")
    assert found.score.mate == 1 and found.score.wdl == (1.0, 0.0, 0.0)


def test_suggest_hands_the_search_every_move_that_keeps_the_win():
    tables = GaviotaTables([], probe=Oracle(), move_quality="suggest")
    board = chess.Board("7k/8/5K2/8/8/8/6Q1/8 w - - 0 1")  # Qg2: several quiet moves mate in 3 plies or less
    found = tables.root_move(board)
    assert found is not None and found.wdl == 2 and len(found.moves) > 1
    decision = GaviotaSource(tables).move(board, MoveRequest())
    assert isinstance(decision, SearchOnly) and set(decision.moves) == set(found.moves)


def test_a_table_move_is_a_decision_with_the_tables_verdict():
    decision = GaviotaSource(GaviotaTables([], probe=Oracle())).move(MATE_IN_ONE, MoveRequest())
    assert isinstance(decision, Decision) and decision.source == "tablebase"
    assert (decision.tablebase_wdl, decision.note) == (2, "gaviota win, mate in 1")


def test_a_missing_table_or_too_many_pieces_leave_the_move_to_the_search():
    oracle = Oracle()
    tables = GaviotaTables([], probe=oracle, max_pieces=3)
    assert tables.root_move(chess.Board("7k/8/5KQ1/8/8/8/8/7R w - - 0 1")) is None  # 4 pieces
    assert oracle.probes == 0
    quiet = chess.Board("k7/8/8/8/8/8/8/4K2Q w - - 0 1")
    assert GaviotaTables([], probe=Oracle(missing=True)).root_move(quiet) is None  # no table: the search decides


def test_a_lost_position_resists_longest():
    board = chess.Board("8/8/8/8/8/5k2/8/4K2Q b - - 0 1")  # the lone king: Kg4 runs, others walk into a mate
    found = GaviotaTables([], probe=Oracle()).root_move(board)
    assert found is not None and (found.moves, found.wdl, found.plies) == ((chess.Move.from_uci("f3g4"),), -2, -52)
    assert found.describe() == "gaviota loss, mate in 26" and found.score.mate == -26


@pytest.mark.parametrize(("plies", "clock", "wdl"), [
    (7, 0, 2), (119, 0, 2), (120, 0, 1), (101, 19, 1), (100, 19, 2),  # wins: under 120 plies with the counter
    (-7, 0, -2), (-99, 0, -2), (-90, 10, -1),                        # losses: under 100 plies with the counter
    (0, 50, 0),
])
def test_the_wdl_of_a_dtm_counts_the_50_move_counter_as_lichess_bot_does(plies, clock, wdl):
    assert move_wdl(plies, clock, 120) == wdl


def test_the_config_names_the_key_and_the_reason(tmp_path):
    assert gaviota_tables(GaviotaConfig()) is None
    with pytest.raises(GaviotaError, match=r"tablebases\.gaviota\.paths: .* holds no Gaviota tables"):
        gaviota_tables(GaviotaConfig(enabled=True, paths=[str(tmp_path)]))
    with pytest.raises(GaviotaError, match="does not exist"):
        gaviota_tables(GaviotaConfig(enabled=True, paths=[str(tmp_path / "nope")]))
    with pytest.raises(ValueError, match="enabled without paths"):
        GaviotaConfig(enabled=True)
