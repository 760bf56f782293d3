"""``lichessbot eval`` and ``lichessbot bench nn`` end to end (in-process through lichessbot.cli.main)."""

from __future__ import annotations

import json

import chess
import pytest

from lichessbot.cli import main
from lichessbot.config import SearchParams
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.position_eval import evaluate_boards


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_json_is_the_networks_view_through_the_search_encoder_and_policy_map(capsys, tiny_net):
    code, out, _ = run_cli(capsys, "eval", "--network", str(tiny_net), "--startpos", "--moves", "e2e4 c7c5",
                           "--json", "--policy-temperature", "1.7", "--history-fill", "always")
    assert code == 0
    doc = json.loads(out)
    board = chess.Board()
    for uci in ("e2e4", "c7c5"):
        board.push_uci(uci)
    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", cache_size=0)
    (want,) = evaluate_boards(ev, [board], input_format=1,
                              params=SearchParams(policy_temperature=1.7, history_fill="always"))
    assert doc["moves"] == {m.uci(): round(p, 6) for m, p in sorted(zip(want.moves, want.priors.tolist()),
                                                                      key=lambda mp: -mp[1])}
    assert doc["wdl"] == [round(x, 6) for x in want.wdl] and doc["q"] == round(want.q, 6)
    assert list(doc["moves"]) != [m.uci() for m in want.moves]  # ranked by prior, not in move order


def test_eval_json_uses_e1g1_castling_and_moves_from_fen(capsys, tiny_net):
    code, out, _ = run_cli(capsys, "eval", "--network", str(tiny_net), "--fen",
                           "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "--moves", "a1b1 a8b8", "--json",
                           "--policy-temperature", "1.359")
    assert code == 0
    moves = json.loads(out)["moves"]
    assert "e1g1" in moves and "e1h1" not in moves and "e1c1" not in moves  # white lost O-O-O
    assert list(moves.values()) == sorted(moves.values(), reverse=True)


def test_eval_table_names_moves_and_values(capsys, tiny_net):
    code, out, _ = run_cli(capsys, "eval", "--network", str(tiny_net), "--startpos", "--moves", "e2e4")
    assert code == 0 and "Nf6" in out and "Q " in out and out.count("%") == 20


@pytest.mark.parametrize(("args", "message"), [
    (["--fen", "not a fen"], "invalid FEN"),
    (["--fen", "8/8/8/8/8/8/8/8 w - - 0 1"], "invalid FEN"),
    (["--startpos", "--moves", "e2e5"], "illegal move 'e2e5'"),
    (["--startpos", "--moves", "e2"], "malformed move 'e2'"),
    (["--startpos", "--policy-temperature", "0"], "policy-temperature"),
])
def test_eval_bad_position_input_is_one_line_exit_2(capsys, tiny_net, args, message):
    code, out, err = run_cli(capsys, "eval", "--network", str(tiny_net), *args)
    assert code == 2 and out == ""
    assert err.startswith("lichessbot: ") and message in err and err.count("\n") == 1


def test_eval_missing_or_wrong_network_is_one_line_exit_2(capsys, tmp_path):
    code, _, err = run_cli(capsys, "eval", "--network", str(tmp_path / "missing.onnx"), "--startpos")
    assert code == 2 and "not found" in err and err.count("\n") == 1
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"garbage")
    code, _, err = run_cli(capsys, "eval", "--network", str(bad), "--startpos")
    assert code == 2 and "not a readable ONNX model" in err


def test_bench_nn_json_reports_every_batch_size(capsys, tiny_net):
    code, out, _ = run_cli(capsys, "bench", "nn", "--network", str(tiny_net), "--json", "--backend", "cpu",
                           "--seconds", "0.01", "--batches", "1,8,32")
    assert code == 0
    doc = json.loads(out)
    assert [r["batch"] for r in doc["results"]] == [1, 8, 32]
    assert all(r["evals_per_s"] > 0 for r in doc["results"]) and doc["provider"] == "CPUExecutionProvider"
    assert doc["encode_us_per_position"] > 0 and doc["evaluate_per_s"] > 0


def test_bench_nn_refuses_bad_batches(capsys, tiny_net):
    code, _, err = run_cli(capsys, "bench", "nn", "--network", str(tiny_net), "--batches", "0,8")
    assert code == 2 and "--batches" in err
