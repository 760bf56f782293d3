"""training/dataset.py: generated games become exactly the planes and targets the engine would feed.

The training pipeline is not a package of the runtime (it needs torch); its data step does not, so it is
loaded here from its file and checked against what the search itself feeds the network: the planes the
core's ``gather`` writes for the root of ``position [startpos|fen F] moves ...`` and the policy indices of the
root's edges (a path of its own: the search's expansion, not the encoder the dataset calls).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
from pathlib import Path

import chess
import chess.engine
import numpy as np
import pytest

from lichessbot import _core
from lichessbot.config import SearchParams
from lichessbot.neural.position_eval import encode_boards
from lichessbot.search.searcher import core_params

REPO = Path(__file__).resolve().parents[2]


def _training_module(name: str):
    spec = importlib.util.spec_from_file_location(f"training_{name}", REPO / "training" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def dataset():
    return _training_module("dataset")


def engine_feed(board: chess.Board) -> tuple[np.ndarray, dict[str, int]]:
    """What the search feeds the network at ``board`` (its move stack is the game): the root's planes float32
    [112, 8, 8] as the core gathers them with the default search parameters, and {uci: policy index} of the
    root's edges."""
    core = _core.SearchCore(core_params(SearchParams(), input_format=1, minibatch_size=1), _core.NNCache(0))
    core.set_position(board.root().fen(), [m.uci() for m in board.move_stack])
    planes = np.zeros((1, 112, 8, 8), np.float32)
    assert core.gather(planes) == 1
    return planes[0], dict(zip(core.root_moves(), core.root_nn_indices()))


def _record(board: chess.Board, ply: int, wdl=(500, 300, 200)) -> dict:
    moves = list(board.legal_moves)[:3]
    return {"ply": ply, "moves": [m.uci() for m in moves], "probs": [0.5, 0.3, 0.2][:len(moves)],
            "wdl": list(wdl), "cp": 0}


def _game(start_fen: str | None, ucis: list[str], result: str) -> tuple[dict, list[chess.Board]]:
    board = chess.Board(start_fen) if start_fen else chess.Board()
    boards, positions = [], []
    for ply, uci in enumerate(ucis + [None]):
        boards.append(board.copy())
        positions.append(_record(board, ply))
        if uci:
            board.push_uci(uci)
    game = {"moves": ucis, "result": result, "positions": positions}
    if start_fen:
        game["fen"] = start_fen
    return game, boards


@pytest.mark.parametrize("start_fen", [None, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"])
def test_encoded_games_equal_the_engine_planes_with_play_time_history_fill(dataset, start_fen):
    ucis = ["g1f3", "g8f6", "f3g1", "f6g8", "e2e4", "d7d5", "e4d5"] if start_fen is None else \
        ["f1c4", "g8f6", "d2d3", "f8c5", "e1g1", "e8g8"]
    game, boards = _game(start_fen, ucis, "1-0")
    planes, pol_idx, pol_p, wdl = dataset.encode_game(game, sf_weight=0.7)
    assert planes.shape == (len(boards), 112, 8, 8) and planes.dtype == np.float32
    for k, board in enumerate(boards):
        # what the engine feeds for `position [startpos|fen F] moves ...` (lc0's default fill, fen_only)
        expected, root_index = engine_feed(board)
        np.testing.assert_array_equal(planes[k], expected, err_msg=f"ply {k}")
        rec = game["positions"][k]
        assert list(pol_idx[k][:len(rec["moves"])]) == [root_index[m] for m in rec["moves"]]
        assert (pol_idx[k][len(rec["moves"]):] == -1).all()
        np.testing.assert_allclose(pol_p[k].sum(), 1.0, rtol=1e-6)
        # value target: 0.7 x Stockfish's WDL (side to move) + 0.3 x the result from the side to move's view
        result = np.array([1.0, 0.0, 0.0]) if board.turn == chess.WHITE else np.array([0.0, 0.0, 1.0])
        np.testing.assert_allclose(wdl[k], 0.7 * np.array([0.5, 0.3, 0.2]) + 0.3 * result, atol=1e-6)
    if start_fen:
        # the FEN's missing history is filled with copies of it: the previous-position planes are not empty
        assert planes[0, 13:26].any()
    else:
        assert not planes[0, 13:104].any()  # the start position has no history and gets none
        # repetitions: after g1f3 g8f6 f3g1 f6g8 the start position occurs for the second time (plane 12)
        assert planes[4, 12].all() and not planes[3, 12].any()


def test_packing_round_trips_the_planes(dataset):
    game, _ = _game(None, ["e2e4", "e7e5", "g1f3"], "1/2-1/2")
    planes = dataset.encode_game(game, sf_weight=1.0)[0]
    planes[:, 109] = np.arange(len(planes))[:, None, None]  # the rule-50 plane holds a count, not a bit
    bits, r50 = dataset.pack_planes(planes)
    assert bits.shape == (len(planes), 112, 8) and bits.dtype == np.uint8
    np.testing.assert_array_equal(dataset.unpack_planes(bits, r50), planes)


def test_prepare_packs_shards_in_parallel_processes_and_repacks_only_what_grew(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "training"))  # spawned workers import dataset by name
    import dataset as ds  # noqa: PLC0415

    raw = tmp_path / "raw"
    raw.mkdir()
    games = [_game(None, ["e2e4", "e7e5", "g1f3"], "1-0")[0], _game(None, ["d2d4", "d7d5"], "0-1")[0]]
    for i, g in enumerate(games):
        (raw / f"t{i}-000.jsonl").write_text(json.dumps(g) + "\n")
    logged: list[str] = []
    files = ds.prepare(tmp_path, log=logged.append, workers=2)
    assert [f.name for f in files] == ["t0-000.npz", "t1-000.npz"] and len(logged) == 2
    data = ds.load_all(files)
    assert len(data["wdl"]) == 4 + 3
    want = np.concatenate([ds.encode_game(g, ds.SF_WEIGHT)[0] for g in games])
    np.testing.assert_array_equal(ds.unpack_planes(data["planes"], data["rule50"]), want)
    logged.clear()
    with (raw / "t1-000.jsonl").open("a") as f:
        f.write(json.dumps(games[0]) + "\n")
    ds.prepare(tmp_path, log=logged.append, workers=2)
    assert logged == ["packed t1-000.jsonl: 2 games, 7 positions"]


STOCKFISH = "/usr/games/stockfish"


@pytest.fixture(scope="module")
def generate():
    return _training_module("generate")


@pytest.mark.skipif(not Path(STOCKFISH).exists(), reason="stockfish is not installed")
def test_own_engine_games_play_the_network_on_one_side_and_label_every_position(generate):
    args = argparse.Namespace(random_plies=2, fen_start=0.0, max_plies=44, nodes=300, multipv=3, record_from=0,
                              policy_temp=60.0, play_temp=40.0, blunder=0.0, net_games=1.0, net_nodes=1)
    evaluator = generate.evaluate.make_evaluator("default")
    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as sf:
        sf.configure({"Threads": 1, "Hash": 16, "UCI_ShowWDL": True})
        game = generate.play_game(sf, random.Random(3), args, evaluator)
    assert game["net"] in ("white", "black")
    net_color = chess.WHITE if game["net"] == "white" else chess.BLACK
    board = chess.Board()
    assert [p["ply"] for p in game["positions"]] == list(range(len(game["positions"])))
    assert len(game["positions"]) >= len(game["moves"]) - 1
    net_plies = 0
    for ply, uci in enumerate(game["moves"]):
        move = chess.Move.from_uci(uci)
        assert move in board.legal_moves
        assert game["positions"][ply]["wdl"] is not None  # Stockfish labels the network's positions too
        if board.turn == net_color and ply >= 30:  # past the sampled phase the network plays its top prior
            assert move == generate.net_move(evaluator, board, random.Random(0), sample=False)
            net_plies += 1
        board.push(move)
    assert game["result"] in ("1-0", "0-1", "1/2-1/2")
    if len(game["moves"]) > 32:
        assert net_plies > 0


@pytest.mark.skipif(not Path(STOCKFISH).exists(), reason="stockfish is not installed")
@pytest.mark.slow
def test_with_net_nodes_our_engines_side_is_played_by_the_search(generate):
    from lichessbot.search.searcher import Searcher

    args = argparse.Namespace(random_plies=2, fen_start=0.0, max_plies=24, nodes=300, multipv=3, record_from=0,
                              policy_temp=60.0, play_temp=40.0, blunder=0.0, net_games=1.0, net_nodes=40)
    evaluator = generate.evaluate.make_evaluator("default")
    searches = []

    class Spy(Searcher):
        def search(self, board, limits, **kw):
            res = super().search(board, limits, **kw)
            searches.append((board.fen(), limits.nodes, res))
            return res

    with chess.engine.SimpleEngine.popen_uci(STOCKFISH) as sf, Spy(evaluator) as searcher:
        sf.configure({"Threads": 1, "Hash": 16, "UCI_ShowWDL": True})
        game = generate.play_game(sf, random.Random(3), args, evaluator, searcher)
    assert game["net_nodes"] == 40
    net_color = chess.WHITE if game["net"] == "white" else chess.BLACK
    board = chess.Board()
    played = []
    for ply, uci in enumerate(game["moves"]):
        if board.turn == net_color and ply >= 2:  # after the random opening plies, every move is a search's
            played.append((board.fen(), chess.Move.from_uci(uci)))
        board.push(chess.Move.from_uci(uci))
    assert played and [(f, 40) for f, _ in played] == [(f, n) for f, n, _ in searches]
    for (_, move), (_, _, res) in zip(played, searches, strict=True):  # sampled from the visited root moves
        assert move in [rm.move for rm in res.root_moves if rm.n > 0]


def _mirror_move(m: chess.Move) -> chess.Move:
    return chess.Move(m.from_square ^ 7, m.to_square ^ 7, m.promotion)  # files a<->h


def test_mirror_augmentation_equals_encoding_the_mirrored_game(dataset):
    # no castling rights; the last move is a double pawn push, so en passant lives only in the history
    fen = "r3k2r/1p3ppp/8/2P5/8/8/P4PPP/R3K2R b - - 0 20"
    ucis = ["a8d8", "a1d1", "b7b5"]
    board = chess.Board(fen)
    mirrored = chess.Board(fen).transform(chess.flip_horizontal)
    for uci in ucis:
        board.push_uci(uci)
        mirrored.push(_mirror_move(chess.Move.from_uci(uci)))
    assert board.has_legal_en_passant() and mirrored.has_legal_en_passant()
    planes, (index, _, start_index) = encode_boards([board, board, chess.Board()], input_format=1,
                                                    history_fill="fen_only")
    want, (mindex,) = encode_boards([mirrored], input_format=1, history_fill="fen_only")
    want = want[0]
    pol = np.array([[index[m.uci()] for m in list(board.legal_moves)[:5]]] * 3, np.int64)
    pol[2] = [start_index[m.uci()] for m in list(chess.Board().legal_moves)[:5]]
    orig = planes.copy()
    n = dataset.mirror_augment(planes, pol, np.random.default_rng(0), p=1.0)
    assert n == 2  # the start position keeps its castling rights and is left alone
    np.testing.assert_array_equal(planes[0], want)
    np.testing.assert_array_equal(planes[2], orig[2])
    assert not np.array_equal(planes[0], orig[0])
    want_idx = [mindex[_mirror_move(m).uci()] for m in list(board.legal_moves)[:5]]
    assert pol[0].tolist() == want_idx
    # every legal move of the mirrored position is the image of one of the original's
    perm = dataset.mirror_permutation()
    assert sorted(perm.tolist()) == list(range(1858))
    assert sorted(perm[[index[m.uci()] for m in board.legal_moves]].tolist()) == sorted(mindex.values())
