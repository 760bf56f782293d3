"""Real lc0 networks against lc0's own figures: the Maia nets (tests/data/fetch.sh puts them in tests/data/nets;
without them this test skips) converted from lc0's .pb.gz and exported by lc0's leela2onnx, on lc0's 59
reference positions (tests/data/lc0ref). One test, so that a clone without the nets skips one test."""

from __future__ import annotations

import json

import chess
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from lichessbot.cli import main
from lichessbot.config import SearchParams
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.lc0_weights import convert_pb_gz
from lichessbot.neural.network import load_network
from lichessbot.neural.onnx_build import conv_policy_map
from lichessbot.neural.position_eval import encode_boards, evaluate_boards
from tests.conftest import LC0REF, maia_net
from tests.neural.test_encoding import board_from_uci_position


def _run(model: bytes | str, x: np.ndarray) -> dict[str, np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"/input/planes": x})))


def _lc0_planes(positions: list[dict]) -> np.ndarray:
    """float32 [B, 112, 8, 8] straight from lc0's own masks/values (bit i = row i//8, column i%8)."""
    x = np.zeros((len(positions), 112, 64), np.float32)
    for i, pos in enumerate(positions):
        planes = pos["lc0_input_planes"]
        masks = np.array([int(h, 16) for h in planes["masks_hex"]], np.uint64)
        bits = np.unpackbits(masks.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        x[i] = bits * np.asarray(planes["values"], np.float32)[:, None]
    return x.reshape(-1, 112, 8, 8)


def _conversion_matches_lc0_and_leela2onnx(name: str, positions: list[dict], outputs: list[dict]) -> None:
    """Our conversion of the .pb.gz, run on lc0's own planes, gives lc0's exact logits and Q, and equals
    leela2onnx's export (outputs, and the conv policy head's mapping table) to 1e-4."""
    model, input_format = convert_pb_gz(maia_net(f"{name}.pb.gz"))
    assert input_format == 1
    x = _lc0_planes(positions)
    ours = _run(model, x)
    assert ours["/output/policy"].shape == (len(x), 1858) and ours["/output/wdl"].shape == (len(x), 3)
    for i, (pos, out) in enumerate(zip(positions, outputs)):
        ref = out["nn_exact_blas"]
        idx = [pos["moves_nn_index"][m] for m in ref["policy_logits"]]
        np.testing.assert_allclose(ours["/output/policy"][i, idx], list(ref["policy_logits"].values()), atol=1e-4)
        wdl = ours["/output/wdl"][i]
        assert abs((wdl[0] - wdl[2]) - ref["q"]) < 1e-4, pos["tag"]
    exported = maia_net(f"{name}.onnx")
    theirs = _run(str(exported), x)
    for key in ("/output/policy", "/output/wdl"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=0, atol=1e-4)
    table = next(numpy_helper.to_array(t) for t in onnx.load(str(exported)).graph.initializer
                 if t.name == "/const/mapping_table")
    np.testing.assert_array_equal(conv_policy_map(), table)


def _eval_path_gives_lc0s_outputs(name: str, outputs: list[dict]) -> None:
    """Through the search's encoder and policy map (lichessbot.neural.position_eval), both files of the net:
    lc0's exact logits, W/D/L and softmax at temperature 1, and its printed priors at the search's default
    policy temperature."""
    boards = [board_from_uci_position(r["uci_position"]) for r in outputs]
    for path in (maia_net(f"{name}.pb.gz"), maia_net(f"{name}.onnx")):
        net = load_network(str(path))
        assert net.has_wdl and not net.has_mlh and net.name == name and net.input_format == 1
        ev = Evaluator(net, backend="cpu", cache_size=0)
        planes, indices = encode_boards(boards, input_format=1, history_fill="fen_only")
        logits, wdl, mlh = ev.run(planes)
        assert logits.shape == (len(boards), 1858) and wdl.shape == (len(boards), 3) and mlh is None
        evals = evaluate_boards(ev, boards, input_format=1, params=SearchParams(policy_temperature=1.0))
        for rec, lg, idx, e in zip(outputs, logits, indices, evals):
            ref = rec["nn_exact_blas"]
            np.testing.assert_allclose(lg[[idx[m] for m in ref["policy_logits"]]], list(ref["policy_logits"].values()),
                                       atol=1e-4, err_msg=rec["tag"])
            assert abs(e.q - ref["q"]) < 1e-4 and e.m is None, rec["tag"]
            np.testing.assert_allclose(e.wdl, ref["wdl"], atol=1e-4)
            priors = dict(zip([m.uci() for m in e.moves], e.priors.tolist()))
            for uci, pct in ref["policy_softmax_pct"].items():
                assert priors[uci] == pytest.approx(pct / 100, abs=1e-5), (rec["tag"], uci)
        (start,) = evaluate_boards(ev, [chess.Board()], input_format=1)  # the search's policy temperature
        priors = dict(zip([m.uci() for m in start.moves], start.priors.tolist()))
        for uci, pct in outputs[0]["moves_policy_default_temp_1.359"].items():
            assert priors[uci] * 100 == pytest.approx(pct, abs=0.08), uci


@pytest.mark.slow
def test_maia_nets_match_lc0_through_the_conversion_and_the_eval_path(capsys):
    positions = [json.loads(line) for line in (LC0REF / "positions.jsonl").read_text().splitlines()]
    for name in ("maia-1100", "maia-1900"):
        outputs = [json.loads(line) for line in (LC0REF / f"{name}.jsonl").read_text().splitlines()]
        assert [o["uci_position"] for o in outputs] == [p["uci_position"] for p in positions]
        _conversion_matches_lc0_and_leela2onnx(name, positions, outputs)
        _eval_path_gives_lc0s_outputs(name, outputs)
    # `lichessbot eval --json` prints lc0's startpos softmax (percent: 66.06 e2e4, 20.98 d2d4) and Q.
    capsys.readouterr()
    assert main(["eval", "--network", str(maia_net("maia-1100.pb.gz")), "--startpos", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["moves"]["e2e4"] == pytest.approx(0.6606, abs=1e-4)
    assert doc["moves"]["d2d4"] == pytest.approx(0.2098, abs=1e-4)
    assert doc["q"] == pytest.approx(0.04558, abs=1e-4) and len(doc["moves"]) == 20
