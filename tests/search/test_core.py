"""The Rust core's Python boundary: lc0's planes and policy indices, the search parameters (declared once, in
Python; the core refuses a missing or unknown one), statistics as frozen values, bad input, panics, the NN cache."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.diagnostics.fake_net import FakeEvaluator
from lichessbot.search import Searcher, SearchError
from lichessbot.search.searcher import SAMPLING_PARAMS, core_params
from lichessbot.timeman import VisitsStopper
from tests.conftest import LC0REF, REPO


def ref_positions() -> list[dict]:
    """lc0's reference positions (tests/data/lc0ref/positions.jsonl): 59 games with lc0's planes and indices."""
    return [json.loads(line) for line in (LC0REF / "positions.jsonl").read_text().splitlines() if line.strip()]


def game_of(uci_position: str) -> tuple[str, list[str]]:
    """(FEN, UCI moves) of a UCI ``position`` command."""
    words = uci_position.split()
    if words[1] == "startpos":
        fen, rest = chess.STARTING_FEN, words[2:]
    else:
        k = words.index("moves") if "moves" in words else len(words)
        fen, rest = " ".join(words[2:k]), words[k:]
    return fen, rest[1:] if rest and rest[0] == "moves" else rest


def lc0_planes(ref: dict) -> np.ndarray:
    """lc0's (masks_hex, values) -> float32 [112, 8, 8]: the value where the bit is set, else 0."""
    masks = np.array([int(h, 16) for h in ref["masks_hex"]], dtype=np.uint64)
    bits = np.unpackbits(masks.view(np.uint8).reshape(112, 8), axis=-1, bitorder="little").astype(np.float32)
    return (bits * np.array(ref["values"], dtype=np.float32)[:, None]).reshape(112, 8, 8)


def test_core_planes_and_policy_indices_equal_lc0s_own():
    cases = ref_positions()
    assert len(cases) == 59
    planes, indices = _core.encode_positions([game_of(c["uci_position"]) for c in cases], input_format=1,
                                             history_fill="fen_only")
    assert planes.shape == (59, 112, 8, 8) and planes.dtype == np.float32
    for case, got, idx in zip(cases, planes, indices):
        want = lc0_planes(case["lc0_input_planes"])
        bad = [p for p in range(112) if not np.array_equal(got[p], want[p])]
        assert not bad, (case["tag"], bad)
        assert dict(idx) == case["moves_nn_index"], case["tag"]


def _params(**over) -> dict:
    return {**core_params(SearchParams(), input_format=1, minibatch_size=8), **over}


def test_search_parameters_cross_as_declared_and_unknown_or_missing_keys_are_refused():
    sent = _params()
    assert set(sent) == set(SearchParams.model_fields) - SAMPLING_PARAMS | {"input_format"}
    _core.SearchCore(sent, _core.NNCache(0))
    with pytest.raises(ValueError, match='unknown search parameter "cpuctt"'):
        _core.SearchCore(_params(cpuctt=2.0), _core.NNCache(0))
    without = {k: v for k, v in sent.items() if k != "policy_temperature"}
    with pytest.raises(ValueError, match='missing search parameter "policy_temperature"'):
        _core.SearchCore(without, _core.NNCache(0))
    with pytest.raises(ValueError, match='unknown search parameter "temperature"'):  # the Python face's own
        _core.SearchCore(_params(temperature=1.0), _core.NNCache(0))
    with pytest.raises(ValueError, match='"two_fold_draws" must be true or false'):
        _core.SearchCore(_params(two_fold_draws="yes"), _core.NNCache(0))
    with pytest.raises(ValueError, match="minibatch_size"):
        _core.SearchCore(_params(minibatch_size=0), _core.NNCache(0))
    with pytest.raises(ValueError, match="input format"):
        _core.SearchCore(_params(input_format=7), _core.NNCache(0))
    with pytest.raises(ValueError, match="history_fill"):
        _core.SearchCore(_params(history_fill="sometimes"), _core.NNCache(0))


def test_the_rust_tests_parameters_are_the_declared_defaults():
    """rust/core/tests/data/search_params.txt (the core's own tests read it) is SearchParams() as sent."""

    def text(v) -> str:
        return ("true" if v else "false") if isinstance(v, bool) else repr(v) if isinstance(v, float) else str(v)

    want = [f"{k} {text(v)}" for k, v in sorted(_params(minibatch_size=256).items())]
    path = REPO / "rust" / "core" / "tests" / "data" / "search_params.txt"
    got = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    assert got == want, "rewrite rust/core/tests/data/search_params.txt as:\n" + "\n".join(want)


def test_the_history_fill_and_policy_temperature_reach_the_core():
    """Both are search parameters only: a search with another fill or temperature sees other planes or priors."""
    fen = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"
    for fill, history in (("fen_only", True), ("no", False)):
        core = _core.SearchCore(_params(history_fill=fill), _core.NNCache(0))
        core.set_position(fen, [])
        planes = np.zeros((8, 112, 8, 8), np.float32)
        assert core.gather(planes) == 1
        assert planes[0, 13:104].any() == history, fill
    logits = np.zeros((1, 1858), np.float32)
    logits[0, _core.POLICY_MOVES.index("e2e4")] = 1.0
    priors = {}
    for temp in (1.0, 2.0):
        core = _core.SearchCore(_params(policy_temperature=temp), _core.NNCache(0))
        core.set_position(fen, [])
        core.gather(np.zeros((8, 112, 8, 8), np.float32))
        core.apply(logits, np.array([[0.3, 0.4, 0.3]], np.float32))
        priors[temp] = max(e.p for e in core.root_edges())
    assert priors[1.0] > priors[2.0] > 1 / 6


def test_root_statistics_are_frozen_values_with_named_fields():
    searcher = Searcher(FakeEvaluator(value=0.1), SearchParams(minibatch_size=8), pipeline=False)
    searcher.search(chess.Board(), VisitsStopper(60))
    core = searcher._core
    edges = core.root_edges()
    assert isinstance(edges[0], _core.RootEdge) and len(edges) == 20
    assert sum(e.n for e in edges) == core.root_info().n - 1 == 59
    assert edges[0].n == max(e.n for e in edges) and edges[0].proven is None and edges[0].v0 is not None
    with pytest.raises(AttributeError):
        edges[0].n = 5  # type: ignore[misc]
    c = core.counters()
    assert (c.playouts, c.nn_evals) == (60, 60) and c.seldepth >= 1 and c.tbhits == 0
    v = core.edge_values(edges[0].edge)
    assert v.pv[0] == core.root_moves()[edges[0].edge] and v.mate is None
    node = core.node_info([v.pv[0]])
    assert node.n == edges[0].n and node.expanded and sum(n for _, n in node.children) == node.n - 1
    assert core.node_info(["a2a3", "a7a6", "h2h3"]) is None
    assert "RootEdge" in repr(edges[0])
    searcher.close()


def test_bad_positions_and_moves_are_value_errors_naming_them():
    core = _core.SearchCore(_params(), _core.NNCache(0))
    with pytest.raises(ValueError, match="invalid FEN"):
        core.set_position("not a fen", [])
    with pytest.raises(ValueError, match="illegal move \"e2e5\""):
        core.set_position(chess.STARTING_FEN, ["e2e5"])
    with pytest.raises(ValueError, match="opposite check"):
        core.set_position("k7/8/1K6/8/8/8/8/7Q w - - 0 1", [])


def test_an_illegal_position_is_a_search_error():
    board = chess.Board("k7/8/1K6/8/8/8/8/7Q w - - 0 1")  # the side to move gives check
    with pytest.raises(SearchError, match="opposite check"):
        Searcher(FakeEvaluator()).start(board, VisitsStopper(10))


def test_a_panic_in_the_core_is_a_runtime_error_and_python_goes_on():
    with pytest.raises(RuntimeError, match="search core panic: deliberate"):
        _core._panic_for_tests()
    assert Searcher(FakeEvaluator()).search(chess.Board(), VisitsStopper(50)).nodes == 50


def test_a_failing_core_surfaces_as_search_error_and_the_tree_is_dropped():
    searcher = Searcher(FakeEvaluator(), SearchParams(minibatch_size=8))
    searcher.search(chess.Board(), VisitsStopper(100))

    class Broken:
        def __getattr__(self, name):
            return getattr(real, name)

        def gather(self, *a):
            raise RuntimeError("search core panic: test")

    real = searcher._core
    searcher._core = Broken()
    with pytest.raises(SearchError, match="search core panic"):
        searcher.search(chess.Board(), VisitsStopper(200))
    searcher._core = real
    assert searcher.search(chess.Board(), VisitsStopper(50)).reused_nodes == 0
    searcher.close()


def test_the_nn_cache_is_shared_by_the_searches_of_a_process():
    ev = FakeEvaluator(cache_size=10_000)
    Searcher(ev, SearchParams(minibatch_size=8)).search(chess.Board(), VisitsStopper(300))
    entries, hits, misses = ev.search_cache.stats()
    assert entries > 0 and len(ev.search_cache) == entries
    before = ev.evaluations
    # A second game's search finds the same positions in the cache: far fewer network evaluations.
    Searcher(ev, SearchParams(minibatch_size=8)).search(chess.Board(), VisitsStopper(300))
    assert ev.evaluations - before < before / 2
    assert ev.search_cache.stats()[1] > hits
    ev.clear_cache()
    assert len(ev.search_cache) == 0
