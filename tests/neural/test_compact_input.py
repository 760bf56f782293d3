"""The compact network input (issue 27): the core's mask and value pairs, expanded by an ONNX prologue, give
the network exactly the planes, and a search over them is the same search."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.compact import COMPACT_BYTES, compact_of, expand
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.service import EvalService
from lichessbot.search import Searcher
from lichessbot.search.searcher import core_params
from lichessbot.timeman import VisitsStopper

GAMES = [
    (chess.STARTING_FEN, []),
    (chess.STARTING_FEN, ["e2e4", "c7c5", "g1f3", "d7d6"]),
    ("8/8/4k3/8/2R5/8/4K3/8 b - - 37 80", ["e6d5", "c4c8"]),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", ["e1g1"]),
]


def _gathered(fmt: int, compact: bool, fen: str, moves: list[str]) -> tuple[int, np.ndarray]:
    core = _core.SearchCore(core_params(SearchParams(), input_format=fmt, minibatch_size=64), _core.NNCache(0))
    core.set_position(fen, moves, False, False)
    buf = np.zeros((64, COMPACT_BYTES), np.uint8) if compact else np.zeros((64, 112, 8, 8), np.float32)
    rows = core.gather_compact(buf, None) if compact else core.gather(buf, None)  # the root
    core.apply(np.zeros((rows, 1858), np.float32), np.tile(np.float32([0.3, 0.4, 0.3]), (rows, 1)))
    rows = core.gather_compact(buf, None) if compact else core.gather(buf, None)  # its children
    return rows, buf[:rows]


@pytest.mark.parametrize("fmt", [1, 2, 3, 4, 5, 132, 133])
def test_the_compact_rows_expand_to_the_planes_in_every_input_format(fmt):
    for fen, moves in GAMES:
        rows, planes = _gathered(fmt, False, fen, moves)
        crows, compact = _gathered(fmt, True, fen, moves)
        assert rows == crows > 1
        np.testing.assert_array_equal(expand(compact), planes)


def test_compact_of_gives_back_the_planes_it_was_made_from():
    for fmt in (1, 4):  # rule 50 in plies and in hectoplies
        for fen, moves in GAMES:
            _, planes = _gathered(fmt, False, fen, moves)
            np.testing.assert_array_equal(expand(compact_of(planes)), planes)


def test_the_compact_network_gives_the_outputs_of_the_network(tiny_net):
    net = load_network(str(tiny_net))
    plain = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    _, planes = _gathered(1, False, *GAMES[1])
    _, compact = _gathered(1, True, *GAMES[1])
    for bound in (False, True):
        ev = Evaluator(net, backend="cpu", threads=1, cache_size=0, compact=True, io_binding=bound)
        a, b = plain.run(planes), ev.run(compact)
        np.testing.assert_array_equal(a.logits, b.logits)
        np.testing.assert_array_equal(a.wdl, b.wdl)
        with pytest.raises(ValueError, match="compact inputs must be uint8"):
            ev.run(planes)


def test_a_search_over_the_compact_input_is_the_same_search(tiny_net):
    net = load_network(str(tiny_net))
    board = chess.Board()
    for uci in GAMES[1][1]:
        board.push_uci(uci)
    visits = []
    for compact in (False, True):
        ev = Evaluator(net, backend="cpu", threads=1, cache_size=10_000, compact=compact)
        service = EvalService(ev)
        with Searcher(service, SearchParams(minibatch_size=16), pipeline=False) as searcher:
            result = searcher.search(board, VisitsStopper(300))
        service.close()
        visits.append({rm.move.uci(): rm.n for rm in result.root_moves})
    assert visits[0] == visits[1] and sum(visits[0].values()) >= 299
