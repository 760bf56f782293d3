"""One batch shape per GPU session (onnxruntime issue 23006: the CUDA Conv re-plans cuDNN whenever a node's
input shape changes), on the emulated GPU host (tests/neural/gpu_host.py) that counts every session's shapes
and makes a change cost a re-plan."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from lichessbot.config import EngineConfig, SearchParams
from lichessbot.diagnostics.bench_gpu import (
    FP16_MAX_WDL_DELTA,
    FP16_MIN_ARGMAX_SHARE,
    _position,
    check_against_cpu,
    within_limits,
)
from lichessbot.diagnostics.bench_nn import bench_positions
from lichessbot.logs import configure_logging
from lichessbot.neural import gpu
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.service import EvalService
from lichessbot.neural.session import BATCH_BUCKETS
from lichessbot.search import Searcher
from lichessbot.timeman import VisitsStopper
from lichessbot.uci import UciEngine
from tests.neural.gpu_host import CPU, CUDA, EmulatedGpuHost
from tests.neural.replan import measure, nps


@pytest.fixture
def gpu_host(monkeypatch):
    return EmulatedGpuHost(cuda="ok").install(monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("games", [1, 8])
def test_after_the_warm_up_no_cuda_session_sees_a_second_shape(gpu_host, tiny_net, games):
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up()
    sessions = gpu_host.gpu_sessions()
    assert sorted(c.shapes[0] for c in sessions) == list(BATCH_BUCKETS)  # one session a bucket, each warmed
    assert nps(ev, games, 1.0) > 0
    used = [c for c in gpu_host.gpu_sessions() if len(c.shapes) > 1]
    assert used, "the search ran on the GPU sessions"
    assert all(len(set(c.shapes)) == 1 for c in gpu_host.gpu_sessions()), [sorted(set(c.shapes)) for c in used]
    assert len(gpu_host.gpu_sessions()) == len(BATCH_BUCKETS) and ev.unplanned_shapes() == []


@pytest.mark.slow
@pytest.mark.parametrize("games", [1, 8])
def test_a_search_keeps_its_nps_when_a_shape_change_costs_a_replan(gpu_host, tiny_net, games):
    """Done when of issue 47: >= 80 % of the nps with changes free, when each costs 50 ms. No shape change
    after the warm-up means no re-plan is ever paid; the nps figures carry the noise of a machine shared with
    other work, so the ratio gets three tries (the one-session layout stays far below: 0.23 with one game)."""
    tries = []
    for _ in range(3):
        figures = measure(gpu_host, load_network(str(tiny_net)), games, 1.0, 0.05, rounds=3)
        tries.append(figures)
        assert figures["shape_changes"] == 0, figures
        if figures["ratio"] >= 0.8:
            break
    assert tries[-1]["ratio"] >= 0.8, tries


def test_the_sessions_share_one_host_copy_of_the_weights(gpu_host, tiny_net):
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up(64)
    sessions, weight_bytes = ev.sessions
    assert sessions == 4 and weight_bytes > 0.9 * len(load_network(str(tiny_net)).model) // 2


def test_the_cpu_keeps_one_session_for_every_shape(tiny_net):
    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0)
    assert ev.provider == CPU and not ev.buckets
    ev.warm_up()
    for b in (1, 5, 17):
        ev.run(ev.neutral_inputs(b))
    assert ev.sessions[0] == 1 and {1, 5, 17} <= ev.shapes_sent


def test_the_sessions_run_on_cuda_with_the_same_options(gpu_host, tiny_net):
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up(32)
    cuda = [c for c in gpu_host.created if c.outcome == CUDA]
    assert len(cuda) == 3 and all(c.options == cuda[0].options for c in cuda)


# -- fp16 as lc0 runs it: engine.precision auto ---------------------------------------------------------------
@pytest.mark.parametrize(("capability", "name", "runs"), [(9.0, "NVIDIA H200", "fp16"), (7.0, "Tesla V100", "fp16"),
                                                          (7.5, "NVIDIA GeForce GTX 1660", "fp32"),
                                                          (6.1, "GeForce GTX 1080", "fp32"), (None, "GPU", "fp32")])
def test_auto_precision_is_fp16_where_lc0_finds_tensor_cores(monkeypatch, tiny_net, capability, name, runs):
    host = EmulatedGpuHost(cuda="ok", gpus=[gpu.GpuInfo(name, 16000, "580.1", 0)]).install(monkeypatch)
    host.capability = capability
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", precision="auto", cache_size=0)
    assert ev.provider == CUDA and ev.precision_run == runs
    assert host.last().options_of(CUDA)["use_tf32"] == ("1" if runs == "fp16" else "0")


def test_auto_precision_on_the_cpu_is_int8(tiny_net):
    """auto runs the int8 copy on the CPU (it beat fp32 at equal time: docs/engine.md, "int8"); fp32 stays
    the float network."""
    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", precision="auto", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.precision_run == "int8"
    assert ev.int8_path is not None and ev.int8_path.exists()
    assert EngineConfig().precision == "auto"
    fp = Evaluator(load_network(str(tiny_net)), backend="cpu", precision="fp32", threads=1, cache_size=0)
    assert fp.precision_run == "fp32" and fp.int8_path is None


def test_auto_runs_fp32_on_the_cpu_when_the_network_has_no_int8_copy(monkeypatch, tiny_net):
    """A network onnxruntime cannot quantize still plays under auto (fp32); under int8 it is an error."""
    import lichessbot.neural.evaluator as evaluator_module
    from lichessbot.errors import NetworkError

    def refuse(network):
        raise NetworkError(f"onnxruntime cannot quantize {network.name}")

    monkeypatch.setattr(evaluator_module, "int8_copy", refuse)
    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", precision="auto", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.precision_run == "fp32" and ev.int8_path is None
    assert ev._session.get_inputs()[0].type == "tensor(float)"
    assert np.isfinite(ev.run(ev.neutral_inputs(2)).wdl).all()
    with pytest.raises(NetworkError, match="cannot quantize"):
        Evaluator(load_network(str(tiny_net)), backend="cpu", precision="int8", threads=1, cache_size=0)


def test_uci_chooses_the_precision(gpu_host, tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for command in ("uci", f"setoption name WeightsFile value {tiny_net}", "setoption name Precision value fp32",
                    "isready", "go nodes 20"):
        eng.handle(command)
    declared = "option name Precision type combo default auto var auto var fp32 var tf32 var fp16 var bf16"
    assert declared in out.getvalue()
    assert eng.engine.evaluator is not None and eng.engine.evaluator.precision_run == "fp32"
    for command in ("setoption name Precision value fp16", "isready", "go nodes 20"):
        eng.handle(command)
    eng.handle("quit")
    assert eng.engine.evaluator.precision_run == "fp16", out.getvalue()
    assert gpu_host.last().options_of(CUDA)["use_tf32"] == "1"
    assert any(line.startswith("bestmove") and line != "bestmove 0000" for line in out.getvalue().splitlines())


def test_doctor_names_the_precision_that_auto_chose(gpu_host, tiny_net, capsys):
    from lichessbot.cli import main

    main(["doctor", "--network", str(tiny_net), "--seconds", "0.2"])
    assert "precision fp16 for auto" in capsys.readouterr().out


@pytest.mark.slow
def test_the_fp16_network_on_the_cpu_is_within_the_stated_tolerance_of_fp32():
    """The float16 copy (onnxconverter-common, what CUDA runs for fp16) on the CPU against the fp32 network,
    on 256 real positions: the same best legal move on >= 99 % of them and |ΔWDL| <= 0.01
    (bench_gpu.FP16_MIN_ARGMAX_SHARE, FP16_MAX_WDL_DELTA); a network run in fp32 fails the fp32 limit only if it
    differs, so the fp16 copy must differ (it is not the fp32 network again)."""
    net = load_network("default")
    ev = Evaluator(net, backend="cpu", precision="fp16", threads=1, cache_size=0)
    assert ev.precision_run == "fp16"
    check = check_against_cpu(ev, net, bench_positions(256))
    assert check["argmax_share"] >= FP16_MIN_ARGMAX_SHARE and check["max_wdl_delta"] <= FP16_MAX_WDL_DELTA, check
    assert within_limits(check, "fp16") and check["max_logit_delta"] > 0


# -- a GPU failure never ends a game ----------------------------------------------------------------------------
def _warnings(buf: io.StringIO) -> list[str]:
    return [json.loads(line)["event"] for line in buf.getvalue().splitlines() if '"warning"' in line]


def test_a_cuda_failure_in_the_warm_up_moves_the_network_to_the_cpu(gpu_host, tiny_net):
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    gpu_host.fail_after = 3
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up()
    assert ev.provider == CPU and not ev.buckets and ev.runtime_failure
    assert max(ev.shapes_sent) == 64  # the warm-up stopped planning buckets once on the CPU
    warnings = _warnings(buf)
    assert len(warnings) == 1 and "CUDNN failure 8: CUDNN_STATUS_EXECUTION_FAILED" in warnings[0], warnings
    assert "runs on the CPU" in warnings[0] and "Fix:" in warnings[0]
    plain = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0)
    planes = ev.neutral_inputs(5)
    np.testing.assert_allclose(ev.run(planes).logits, plain.run(planes).logits, atol=1e-5)


@pytest.mark.slow
def test_a_cuda_failure_mid_game_leaves_eight_games_playing_on_the_cpu_with_one_warning(gpu_host, tiny_net):
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up()
    gpu_host.fail_after = gpu_host.gpu_runs + 4  # a few calls into the games
    service = EvalService(ev)
    boards = [_position(k) for k in range(8)]
    searchers = [Searcher(service, SearchParams(), game=f"g{k}") for k in range(8)]
    handles = [s.start(b, VisitsStopper(400)) for s, b in zip(searchers, boards)]
    results = [h.wait() for h in handles]
    for s in searchers:
        s.close()
    service.close()
    assert all(r.best_move in b.legal_moves for r, b in zip(results, boards))
    assert all(r.nodes >= 400 for r in results), [r.nodes for r in results]
    assert ev.provider == CPU and gpu_host.gpu_runs > gpu_host.fail_after
    warnings = _warnings(buf)
    assert len(warnings) == 1 and "CUDNN_STATUS_EXECUTION_FAILED" in warnings[0], warnings


def test_a_cuda_failure_mid_game_in_uci_plays_on(gpu_host, tiny_net):
    out = io.StringIO()
    eng = UciEngine(out=out)
    for command in (f"setoption name WeightsFile value {tiny_net}", "isready", "go nodes 50"):
        eng.handle(command)
    gpu_host.fail_after = gpu_host.gpu_runs + 1
    for command in ("position startpos moves e2e4", "go nodes 50", "position startpos moves e2e4 e7e5",
                    "go nodes 50"):
        eng.handle(command)
    eng.handle("quit")
    best = [line for line in out.getvalue().splitlines() if line.startswith("bestmove")]
    assert len(best) == 3 and "bestmove 0000" not in best, out.getvalue()
    assert eng.engine.evaluator is not None and eng.engine.evaluator.provider == CPU
