"""The GPU path on an emulated GPU host (issue 38): onnxruntime's provider layer as on an H200 machine, run on
the CPU (tests/neural/gpu_host.py: TensorRT and CUDA listed, their failures with onnxruntime's real texts, the options
every session was created with recorded, TF32's rounding where CUDA or TensorRT would use it)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import chess
import numpy as np
import onnxruntime as ort
import pytest

from lichessbot.config import SearchParams
from lichessbot.diagnostics.bench_gpu import FP32_MAX_LOGIT_DELTA, check_against_cpu, within_limits
from lichessbot.diagnostics.bench_nn import bench_positions
from lichessbot.logs import configure_logging
from lichessbot.neural import gpu, providers
from lichessbot.neural.compact import MASKS_NAME, VALUES_NAME
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.service import EvalService
from lichessbot.neural.session import BoundRunner
from lichessbot.search import Searcher
from lichessbot.timeman import VisitsStopper
from lichessbot.uci import UciEngine
from tests.conftest import REPO
from tests.neural.gpu_host import CPU, CUDA, H200, NO_CUBLASLT, NO_LIBNVINFER, TRT, EmulatedGpuHost


@pytest.fixture
def host(monkeypatch):
    def make(**kw) -> EmulatedGpuHost:
        return EmulatedGpuHost(**kw).install(monkeypatch)
    return make


@pytest.fixture(scope="module")
def default_net():
    return load_network("default")


def _warnings(buf: io.StringIO) -> list[str]:
    return [json.loads(line)["event"] for line in buf.getvalue().splitlines() if '"warning"' in line]


def _uci(*commands: str) -> list[str]:
    out = io.StringIO()
    eng = UciEngine(out=out)
    for command in commands:
        eng.handle(command)
    eng.handle("quit")
    return out.getvalue().splitlines()


# -- what onnxruntime itself does on such a host (the emulation reproduces issue 38's findings) -------------
def test_onnxruntimes_own_fallback_drops_cudas_options_and_prints_on_stdout(host, default_net, capfd):
    h = host(tensorrt="missing", cuda="ok")
    ort.InferenceSession(default_net.model, providers=[
        (TRT, {"trt_fp16_enable": "0"}), (CUDA, providers.cuda_options("fp32")), CPU])
    assert h.last().providers == [CUDA, CPU] and h.last().options == [{}, {}]  # the retry: no options at all
    assert "Falling back to ['CUDAExecutionProvider', 'CPUExecutionProvider']" in capfd.readouterr().out


# -- Done when: fp32 CUDA sessions always carry use_tf32=0 and their options -------------------------------
@pytest.mark.parametrize("backend", ["auto", "cuda", "tensorrt"])
def test_fp32_cuda_sessions_carry_use_tf32_0_and_their_options(host, tiny_net, backend):
    h = host(tensorrt="missing", cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend=backend, threads=1, cache_size=0)
    assert ev.provider == CUDA and ev.precision_run == "fp32"
    cuda_sessions = [c for c in h.created if CUDA in c.providers]
    assert cuda_sessions and all(c.options_of(CUDA) == providers.cuda_options("fp32", 0) for c in cuda_sessions)
    assert h.last().options_of(CUDA)["use_tf32"] == "0"
    assert h.last().options_of(CUDA)["cudnn_conv_algo_search"] == "HEURISTIC"  # onnxruntime issue 23006
    assert ev.provider_options == providers.cuda_options("fp32", 0)


@pytest.mark.slow
def test_fp32_on_cuda_computes_what_the_cpu_computes_and_tf32_would_not(host, default_net):
    """On the emulated host CUDA rounds to TF32 unless use_tf32=0, as an H100 does: the default network's
    fp32 check against the CPU then passes (|dlogit| <= 1e-3), and tf32 passes only its own limits."""
    host(cuda="ok")
    boards = bench_positions(96)
    fp32 = Evaluator(default_net, backend="auto", cache_size=0)
    check = check_against_cpu(fp32, default_net, boards)
    assert check["max_logit_delta"] <= FP32_MAX_LOGIT_DELTA and within_limits(check, fp32.precision_run)
    tf32 = Evaluator(default_net, backend="auto", precision="tf32", cache_size=0)
    check = check_against_cpu(tf32, default_net, boards)
    assert tf32.precision_run == "tf32" and tf32.provider_options["use_tf32"] == "1"
    assert check["max_logit_delta"] > FP32_MAX_LOGIT_DELTA  # TF32 is not fp32 ...
    assert within_limits(check, "tf32") and not within_limits(check, "fp32")  # ... and is held to its own limits


def test_fp16_on_cuda_runs_the_float16_copy_on_tensor_cores(host, default_net):
    h = host(cuda="ok")
    ev = Evaluator(default_net, backend="cuda", precision="fp16", cache_size=0)
    assert ev.provider == CUDA and ev.precision_run == "fp16"
    assert h.last().options_of(CUDA)["use_tf32"] == "1"  # fp16 convolutions keep their tensor-core engines
    assert ev._session.get_inputs()[0].type == "tensor(float)"  # float32 in and out, float16 inside
    check = check_against_cpu(ev, default_net, bench_positions(64))
    assert within_limits(check, "fp16") and check["max_logit_delta"] > 0


# -- Done when: TensorRT failing leaves CUDA with its options -----------------------------------------------
def test_tensorrt_failing_leaves_cuda_with_its_options_and_says_why(host, tiny_net):
    h = host(tensorrt="missing", cuda="ok")
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    ev = Evaluator(load_network(str(tiny_net)), backend="tensorrt", threads=1, cache_size=0, precision="tf32")
    assert ev.provider == CUDA and h.last().options_of(CUDA) == providers.cuda_options("tf32", 0)
    assert [f.provider for f in ev.failures] == [TRT] and NO_LIBNVINFER in ev.failures[0].reason
    assert ev.gpu_warning and gpu.TENSORRT_FIX in ev.gpu_warning and ev.gpu_warning in _warnings(buf)


def test_tensorrt_is_not_tried_in_auto(host, tiny_net):
    h = host(tensorrt="ok", cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.provider == CUDA and not ev.failures
    assert not h.trt_registrations and all(TRT not in c.providers for c in h.created)


def test_tensorrt_gets_its_own_options_and_its_fp32_is_reported_as_tf32(host, tiny_net, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    h = host(tensorrt="ok", cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend="tensorrt", threads=1, cache_size=0, device=0)
    opts = h.last().options_of(TRT)
    assert ev.provider == TRT and ev.precision_run == "tf32"  # TensorRT's default; onnxruntime cannot clear it
    assert opts["trt_profile_min_shapes"] == "/input/planes:1x112x8x8"
    assert opts["trt_profile_max_shapes"] == "/input/planes:1024x112x8x8"
    assert opts["trt_engine_cache_path"] == str(tmp_path / "cache" / "lichessbot" / "tensorrt")
    assert opts["trt_fp16_enable"] == "0" and h.last().options_of(CUDA) == providers.cuda_options("fp32", 0)


def test_the_tensorrt_profile_names_the_compact_inputs(host, tiny_net, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    h = host(tensorrt="ok", cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend="tensorrt", threads=1, cache_size=0, compact=True)
    assert ev.provider == TRT, ev.failures
    assert h.last().options_of(TRT)["trt_profile_opt_shapes"] == f"{MASKS_NAME}:256x112x8,{VALUES_NAME}:256x112"


# -- Done when: TensorRT and CUDA both failing still plays on the CPU and says why --------------------------
def test_tensorrt_and_cuda_both_failing_still_play_on_the_cpu_and_say_why(host, tiny_net):
    host(tensorrt="missing", cuda="no-device")
    lines = _uci(f"setoption name WeightsFile value {tiny_net}", "setoption name Backend value tensorrt",
                 "setoption name Threads value 1", "isready", "go nodes 30")
    best = [line for line in lines if line.startswith("bestmove")]
    assert best and chess.Move.from_uci(best[0].split()[1]) in chess.Board().legal_moves, lines
    assert not any("error" in line for line in lines), lines
    warning = next(line for line in lines if line.startswith("info string WARNING"))
    assert "CUDA failure 100: no CUDA-capable device is detected" in warning and NO_LIBNVINFER in warning
    assert "loaded network tiny on CPUExecutionProvider" in "\n".join(lines)


def test_auto_with_cuda_failing_plays_on_the_cpu(host, tiny_net):
    host(cuda="old-driver")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.failures[0].reason.startswith("CUDA failure 35")
    assert ev.gpu_warning and gpu.DRIVER_FIX in ev.gpu_warning and "NVIDIA H200" in ev.gpu_warning
    assert "cudaSetDevice" in ev.failures[0].detail  # the full text is kept for doctor


def test_missing_cuda_libraries_are_a_failure_not_a_silent_cpu_session(host, tiny_net):
    host(cuda="no-libraries")
    ev = Evaluator(load_network(str(tiny_net)), backend="cuda", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.failures[0].reason == NO_CUBLASLT
    assert ev.gpu_warning and gpu.CUDA_FIX in ev.gpu_warning


@pytest.mark.slow
def test_in_uci_mode_nothing_but_uci_reaches_stdout():
    """A real ``lichessbot uci`` process on the emulated host where TensorRT and CUDA both fail: every line on
    its stdout is UCI, and it plays."""
    proc = subprocess.run([sys.executable, "-m", "tests.neural.gpu_host", "missing", "no-device", "--", "uci",
                           "--backend", "tensorrt", "--log-level", "info"],
                          input="uci\nsetoption name Threads value 1\nisready\ngo nodes 20\nquit\n",
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    lines = proc.stdout.splitlines()
    uci = ("id ", "option ", "uciok", "readyok", "info ", "bestmove ")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert lines and all(line.startswith(uci) for line in lines), lines
    assert any(line.startswith("bestmove ") and line != "bestmove 0000" for line in lines), lines
    assert "CUDA failure 100" in proc.stdout  # said once, as a UCI info string
    assert "network ready" in proc.stderr  # the log went to stderr


# -- Done when: an unwritable home still plays ----------------------------------------------------------------
def test_an_unwritable_home_still_plays(host, tiny_net, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the home's folders would go")
    monkeypatch.setenv("HOME", str(blocker / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    h = host(tensorrt="ok", cuda="ok")
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    ev = Evaluator(load_network(str(tiny_net)), backend="tensorrt", threads=1, cache_size=0)
    assert ev.provider == TRT and "trt_engine_cache_enable" not in h.last().options_of(TRT)
    assert any("without its engine cache" in w for w in _warnings(buf)) and ev.notes
    with Searcher(ev, SearchParams()) as searcher:
        assert searcher.search(chess.Board(), VisitsStopper(20)).best_move in chess.Board().legal_moves


@pytest.mark.slow
def test_an_unwritable_home_still_plays_in_uci(host, tiny_net, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HOME", str(blocker / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    host(tensorrt="ok", cuda="ok")
    for backend in ("auto", "tensorrt"):
        lines = _uci(f"setoption name WeightsFile value {tiny_net}", f"setoption name Backend value {backend}",
                     "isready", "go nodes 20")
        assert any(line.startswith("bestmove") and line != "bestmove 0000" for line in lines), lines


# -- engine.device, Docker, the driver line -----------------------------------------------------------------
def test_engine_device_picks_the_gpu_and_a_missing_one_is_named(host, tiny_net):
    h = host(cuda="ok", gpus=[H200, gpu.GpuInfo("NVIDIA H200", 143771, "580.159.03", 1)])
    ev = Evaluator(load_network(str(tiny_net)), backend="cuda", threads=1, cache_size=0, device=1)
    assert ev.provider == CUDA and h.last().options_of(CUDA)["device_id"] == "1"
    ev = Evaluator(load_network(str(tiny_net)), backend="cuda", threads=1, cache_size=0, device=2)
    assert ev.provider == CPU and ev.failures[0].reason == "CUDA failure 101: invalid device ordinal"
    assert "engine.device" in ev.gpu_warning


@pytest.mark.slow
def test_the_config_wires_engine_device_and_precision(host, tiny_net):
    from lichessbot.config import EngineConfig
    from lichessbot.thinker import wiring

    h = host(cuda="ok", gpus=[H200, H200])
    ec = EngineConfig.model_validate({"network": str(tiny_net), "device": 1, "precision": "tf32"})
    ev = wiring.evaluator_of(ec, wiring.network_of(ec))
    assert ev.provider == CUDA and h.last().options_of(CUDA)["device_id"] == "1"
    assert h.last().options_of(CUDA)["use_tf32"] == "1"


def test_docker_without_gpus_names_gpus_all_and_the_container_toolkit(host, tiny_net):
    host(cuda="no-driver", gpus=[], container=True, container_gpu=True)
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.gpu_warning
    assert "--gpus all" in ev.gpu_warning and "NVIDIA Container Toolkit" in ev.gpu_warning
    assert gpu.CUDA_FIX not in ev.gpu_warning


def test_auto_on_a_machine_without_a_gpu_is_quiet(host, tiny_net):
    host(cuda="no-driver", gpus=[], container=False)
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.provider == CPU and ev.gpu_warning is None and ev.failures  # recorded for doctor, not shouted


@pytest.mark.parametrize(("line", "version"), [
    # the proprietary kernel module (a 535 driver's /proc/driver/nvidia/version)
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Thu Apr  3 01:14:19 UTC 2025\n"
     "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n", "535.216.03"),
    # the open kernel module, default for Hopper and later
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.195.03  Release Build  "
     "(dvs-builder@U22-I3-H04-03-1)  Sat Sep 20 00:47:16 UTC 2025\n"
     "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n", "570.195.03"),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.142  Release Build  "
     "(dvs-builder@U22-I3-AD05-51-5)  Tue Mar  3 19:14:46 UTC 2026\n", "580.142"),
    ("no driver here", ""),
])
def test_the_driver_version_is_read_from_both_kernel_modules_lines(line, version):
    assert gpu.driver_version(line) == version


# -- doctor and bench gpu say what ran ----------------------------------------------------------------------
def test_doctor_lists_the_gpus_every_failure_and_the_precision_that_ran(host, tiny_net, capsys):
    from lichessbot.cli import main

    host(tensorrt="missing", cuda="no-device", gpus=[H200, gpu.GpuInfo("NVIDIA H200", 143771, "580.159.03", 1)])
    rc = main(["doctor", "--network", str(tiny_net), "--backend", "tensorrt", "--precision", "tf32",
               "--seconds", "0.3"])
    out = capsys.readouterr().out
    assert rc == 1
    for needle in ("GPU 0: NVIDIA H200, 143771 MiB, driver 580.159.03", "GPU 1: NVIDIA H200",
                   f"provider not started: {TRT}: its libraries do not load: {NO_LIBNVINFER}",
                   f"provider not started: {CUDA}: CUDA failure 100: no CUDA-capable device is detected",
                   "provider started: CPUExecutionProvider (device 0, precision fp32 for tf32)", "WARNING:"):
        assert needle in out, out


def test_doctor_on_a_machine_without_a_gpu_says_so_in_one_line(host, tiny_net, capsys):
    """onnxruntime-gpu installed, no NVIDIA driver, backend auto: one line says there is no GPU; none of the GPU
    libraries or GPU providers a CPU user cannot act on (they stay in --json), and no log line on stderr."""
    from lichessbot.cli import main

    host(cuda="no-driver", gpus=[], container=False)
    rc = main(["doctor", "--network", str(tiny_net), "--seconds", "0.2"])
    out, err = capsys.readouterr()
    assert rc == 0 and "GPU: none (no NVIDIA driver answers): the network runs on the CPU" in out
    for noise in ("missing", "provider not started", "CUDA", "TensorRT", "providers listed"):
        assert noise not in out, out
    assert err == ""


def test_doctor_reports_the_cuda_options_and_the_planned_shapes(host, tiny_net, capsys):
    from lichessbot.cli import main

    host(cuda="ok")
    main(["doctor", "--network", str(tiny_net), "--seconds", "0.3", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert rep["provider_started"] == CUDA and rep["network"]["precision_run"] == "fp16"  # auto on an H200
    assert rep["provider_options"]["use_tf32"] == "1" and rep["providers_failed"] == []
    assert rep["shapes_planned"] == [8, 16, 32, 64, 128, 256, 512, 1024] and rep["warm_up_s"] > 0
    assert rep["sessions"]["count"] == 8 and rep["sessions"]["weights_mib"] > 0  # a session per bucket


@pytest.mark.slow
def test_bench_gpu_measures_the_precisions_side_by_side_each_held_to_its_limits(host, tiny_net, capsys):
    from lichessbot.cli import main

    host(cuda="ok")
    rc = main(["bench", "gpu", "--network", str(tiny_net), "--batches", "8,32", "--seconds", "0.1",
               "--search-seconds", "0.3", "--games", "2", "--first-nodes", "32", "--stop-runs", "1",
               "--check-positions", "48", "--precisions", "fp32,tf32,fp16", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["provider"] == CUDA and out["check"]["ok"] and out["unplanned_shapes"] == []
    rows = {r["precision"]: r for r in out["precisions"]}
    assert {p: r["precision_run"] for p, r in rows.items()} == {"fp32": "fp32", "tf32": "tf32", "fp16": "fp16"}
    assert rows["fp32"]["check"]["max_logit_delta"] <= FP32_MAX_LOGIT_DELTA
    assert all(r["check"]["ok"] and r["network_alone"][0]["evals_per_s"] > 0 for r in rows.values())


# -- batch shapes --------------------------------------------------------------------------------------------
def test_after_the_warm_up_a_search_sends_no_shape_the_warm_up_did_not(host, tiny_net):
    """Every batch size the evaluation service can send (one game and several merged, up to the GPU maximum)
    was run by the warm-up, so no move waits on a cuDNN plan."""
    host(cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    assert ev.buckets
    ev.warm_up()
    service = EvalService(ev)
    boards = [chess.Board(), chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")]
    searchers = [Searcher(service, SearchParams(), game=f"g{k}") for k in range(3)]
    handles = [s.start(boards[k % 2], VisitsStopper(600)) for k, s in enumerate(searchers)]
    for handle in handles:
        handle.wait()
    for s in searchers:
        s.close()
    service.close()
    with Searcher(ev, SearchParams()) as alone:
        alone.search(chess.Board(), VisitsStopper(300))
    assert len(ev.shapes_sent) > 1 and ev.unplanned_shapes() == [], (sorted(ev.shapes_sent), ev.shapes_planned)


def test_plain_runs_after_a_refused_binding_keep_to_the_planned_shapes(host, tiny_net, monkeypatch):
    host(cuda="ok")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", cache_size=0)
    ev.warm_up(64)
    monkeypatch.setattr(BoundRunner, "run", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("refused")))
    planes = np.random.default_rng(4).integers(0, 2, size=(13, 112, 8, 8)).astype(np.float32)
    plain = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0)
    np.testing.assert_array_equal(ev.run(planes).logits, plain.run(planes).logits)
    assert ev._bound is None and ev.unplanned_shapes() == [] and ev.provider == CUDA
