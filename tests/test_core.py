"""The Rust core's Python boundary: lc0's planes and policy indices, bad input, panics, the NN cache."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.search import Limits, Searcher, SearchError
from lichessbot.search.fake import FakeEvaluator
from tests.conftest import shared_file


def _ref_cases():
    path = shared_file("ref/lc0ref_maia1100.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _game(uci_position: str) -> tuple[str, list[str]]:
    words = uci_position.split()
    if words[1] == "startpos":
        fen, rest = chess.STARTING_FEN, words[2:]
    else:
        k = words.index("moves") if "moves" in words else len(words)
        fen, rest = " ".join(words[2:k]), words[k:]
    return fen, rest[1:] if rest and rest[0] == "moves" else rest


def test_core_planes_and_policy_indices_equal_lc0s_own():
    for case in _ref_cases():
        fen, moves = _game(case["uci_position"])
        planes, indices = _core.encode_game(fen, moves)
        ref = case["lc0_input_planes"]
        for p, (mask, value) in enumerate(zip(ref["masks_hex"], ref["values"])):
            bits = np.unpackbits(np.frombuffer(int(mask, 16).to_bytes(8, "little"), np.uint8), bitorder="little")
            np.testing.assert_array_equal(planes[p].reshape(64), bits.astype(np.float32) * np.float32(value),
                                          err_msg=f"plane {p} of {case['uci_position']}")
        assert dict(indices) == case["moves_nn_index"], case["uci_position"]


def test_bad_positions_and_moves_are_value_errors_naming_them():
    core = _core.SearchCore({}, _core.NNCache(0))
    with pytest.raises(ValueError, match="invalid FEN"):
        core.set_position("not a fen", [])
    with pytest.raises(ValueError, match="illegal move \"e2e5\""):
        core.set_position(chess.STARTING_FEN, ["e2e5"])
    with pytest.raises(ValueError, match="opposite check"):
        core.set_position("k7/8/1K6/8/8/8/8/7Q w - - 0 1", [])
    with pytest.raises(ValueError, match="minibatch_size"):
        _core.SearchCore({"minibatch_size": 0}, _core.NNCache(0))
    with pytest.raises(ValueError, match="input format"):
        _core.SearchCore({"input_format": 7}, _core.NNCache(0))


def test_an_illegal_position_is_a_search_error():
    board = chess.Board("k7/8/1K6/8/8/8/8/7Q w - - 0 1")  # the side to move gives check
    with pytest.raises(SearchError, match="opposite check"):
        Searcher(FakeEvaluator()).start(board, Limits(nodes=10))


def test_a_panic_in_the_core_is_a_runtime_error_and_python_goes_on():
    with pytest.raises(RuntimeError, match="search core panic: deliberate"):
        _core._panic_for_tests()
    assert Searcher(FakeEvaluator()).search(chess.Board(), Limits(nodes=50)).nodes == 50


def test_a_failing_core_surfaces_as_search_error_and_the_tree_is_dropped():
    searcher = Searcher(FakeEvaluator(), SearchParams(minibatch_size=8))
    searcher.search(chess.Board(), Limits(nodes=100))

    class Broken:
        def __getattr__(self, name):
            return getattr(real, name)

        def gather(self, *a):
            raise RuntimeError("search core panic: test")

    real = searcher._core
    searcher._core = Broken()
    with pytest.raises(SearchError, match="search core panic"):
        searcher.search(chess.Board(), Limits(nodes=200))
    searcher._core = real
    assert searcher.search(chess.Board(), Limits(nodes=50)).reused_nodes == 0
    searcher.close()


def test_the_nn_cache_is_shared_by_the_searches_of_a_process():
    ev = FakeEvaluator(cache_size=10_000)
    Searcher(ev, SearchParams(minibatch_size=8)).search(chess.Board(), Limits(nodes=300))
    entries, hits, misses = ev.search_cache.stats()
    assert entries > 0 and len(ev.search_cache) == entries
    before = ev.evaluations
    # A second game's search finds the same positions in the cache: far fewer network evaluations.
    Searcher(ev, SearchParams(minibatch_size=8)).search(chess.Board(), Limits(nodes=300))
    assert ev.evaluations - before < before / 2
    assert ev.search_cache.stats()[1] > hits
    ev.clear_cache()
    assert len(ev.search_cache) == 0
