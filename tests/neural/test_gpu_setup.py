"""A GPU that onnxruntime cannot use is reported loudly, with the reason and the fix (issue 27), and the
install extras bring one onnxruntime each (issue 36).

The tests of the missing CUDA libraries run where onnxruntime-gpu is installed without them (``.[gpu,test]``
on a machine without CUDA's wheels loaded): the reason they expect is the dynamic loader's real answer for
onnxruntime's CUDA provider library. With the CPU package (``.[cpu,test]``, the README's test install) they
skip, and the test of the CPU package's advice runs instead.
"""

from __future__ import annotations

import io
import json

import onnxruntime as ort
import pytest

from lichessbot.logs import configure_logging
from lichessbot.neural import gpu
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.uci import UciEngine

H100 = [gpu.GpuInfo("NVIDIA H100 80GB HBM3", 81559, "580.65.06")]


@pytest.fixture
def no_cuda_libraries():
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("onnxruntime has no CUDA provider here")
    reason = gpu.cuda_provider_error()
    if reason is None:
        pytest.skip("CUDA's libraries load here")
    return reason


def test_the_cuda_provider_error_names_the_missing_library(no_cuda_libraries):
    assert "cannot open shared object file" in no_cuda_libraries
    assert any(lib.split(".so")[0] in no_cuda_libraries for lib in gpu.CUDA_LIBRARIES)


def test_a_present_gpu_left_unused_is_a_warning_with_the_reason_and_the_fix(tiny_net, monkeypatch,
                                                                            no_cuda_libraries):
    monkeypatch.setattr(gpu, "nvidia_gpus", lambda: H100)
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.provider == "CPUExecutionProvider"
    warnings = [json.loads(line) for line in buf.getvalue().splitlines() if '"warning"' in line]
    assert warnings, buf.getvalue()
    text = warnings[0]["event"]
    assert "NVIDIA H100" in text and no_cuda_libraries in text and gpu.CUDA_FIX in text


def test_without_a_gpu_the_cpu_is_no_warning(tiny_net, monkeypatch):
    monkeypatch.setattr(gpu, "nvidia_gpus", lambda: [])
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert ev.gpu_warning is None


def test_uci_says_it_at_start_up(tiny_net, monkeypatch, no_cuda_libraries):
    monkeypatch.setattr(gpu, "nvidia_gpus", lambda: H100)
    out = io.StringIO()
    eng = UciEngine(out=out)
    eng.handle(f"setoption name WeightsFile value {tiny_net}")
    eng.handle("setoption name Threads value 1")
    eng.handle("isready")
    lines = out.getvalue().splitlines()
    warning = [line for line in lines if line.startswith("info string WARNING")]
    assert warning and gpu.CUDA_FIX in warning[0] and "NVIDIA H100" in warning[0], lines
    assert lines[-1] == "readyok"


def _installed_by(extra: str, platform: tuple[str, str] = ("linux", "x86_64")) -> set[str]:
    """The requirements an install of lichessbot with ``extra`` ("" for none) pulls on ``platform``
    (sys_platform, platform_machine), read from pyproject.toml (not the installed metadata: the environment may
    hold the distribution under its former name)."""
    import tomllib

    from packaging.requirements import Requirement

    from tests.conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    env = {"sys_platform": platform[0], "platform_machine": platform[1]}
    reqs = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"].get(extra, [])]
    return {f"{r.name}[{','.join(sorted(r.extras))}]" if r.extras else r.name
            for r in reqs if r.marker is None or r.marker.evaluate(env)}


def test_the_cpu_and_gpu_extras_each_bring_one_onnxruntime_and_the_base_neither():
    base = _installed_by("")
    assert not any(name.startswith(("onnxruntime", "nvidia-", "onnxconverter")) for name in base), base
    assert _installed_by("cpu") - base == {"onnxruntime"}
    # onnxruntime-gpu's own extras bring cudart, cuFFT, cuRAND (cuda) and cuDNN 9 (cudnn); cuBLAS 13 is ours;
    # onnxconverter-common makes the float16 copy for engine.precision fp16, a GPU setting
    gpu_extra = _installed_by("gpu") - base
    assert gpu_extra == {"onnxruntime-gpu[cuda,cudnn]", "nvidia-cublas", "onnxconverter-common"}, gpu_extra
    assert _installed_by("gpu", ("win32", "AMD64")) - base == gpu_extra
    # where onnxruntime-gpu has no wheel the gpu extra is the CPU package: an install that works
    assert _installed_by("gpu", ("darwin", "arm64")) - base == {"onnxruntime", "onnxconverter-common"}
    assert _installed_by("gpu", ("linux", "aarch64")) - base == {"onnxruntime", "onnxconverter-common"}
    assert _installed_by("cuda") - base == {"lichessbot-nn[gpu]"}  # the old name of the extra, an alias
    assert gpu.CUDA_FIX == 'pip install "lichessbot-nn[gpu]"' and f"[{gpu.GPU_EXTRA}]" in gpu.CUDA_FIX


def test_with_the_cpu_package_a_present_gpu_is_told_to_install_the_gpu_extra(tiny_net, monkeypatch):
    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("onnxruntime-gpu is installed here (the CPU package is what this test needs)")
    monkeypatch.setattr(gpu, "nvidia_gpus", lambda: H100)
    ev = Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    warning = ev.gpu_warning or ""
    assert "NVIDIA H100" in warning and "CPU-only onnxruntime package" in warning and gpu.CUDA_FIX in warning


def test_the_docker_image_takes_cuda_from_the_same_wheels():
    from tests.conftest import REPO

    text = (REPO / "Dockerfile").read_text()
    runtime = text.split("FROM ")[-1]  # the last stage is the image that runs
    gpu_deps = text.split("AS deps-gpu")[1].split("FROM ")[0]  # the GPU image's dependencies: the gpu extra
    assert "--require-hashes --no-deps -r /tmp/req/gpu.lock" in gpu_deps
    lock = (REPO / "requirements/gpu.lock").read_text()
    assert f"--extra {gpu.GPU_EXTRA} " in lock.split("\n", 2)[1]  # the command that made it (its header)
    assert "nvidia/cuda" not in text
    assert "USER bot" in runtime


def test_cuda_is_preloaded_before_a_gpu_session_and_never_for_backend_cpu(tiny_net, monkeypatch):
    import onnxruntime as ort

    calls: list[str] = []
    real = ort.InferenceSession
    monkeypatch.setattr(gpu, "preload_cuda", lambda: calls.append("preload") or "")
    monkeypatch.setattr(ort, "InferenceSession", lambda *a, **k: calls.append("session") or real(*a, **k))
    Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0)
    assert calls == ["session"]  # a CPU user loads no CUDA library
    calls.clear()
    Evaluator(load_network(str(tiny_net)), backend="auto", threads=1, cache_size=0)
    assert calls[0] == "preload" and "session" in calls


def test_the_engine_config_wires_the_compact_input_and_the_warm_up(tiny_net):
    from lichessbot.config import EngineConfig
    from lichessbot.neural.compact import COMPACT_BYTES
    from lichessbot.thinker import wiring

    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    ec = EngineConfig.model_validate({"network": str(tiny_net), "backend": "cpu", "threads": 1,
                                      "compact_input": True})
    ev = wiring.evaluator_of(ec, wiring.network_of(ec))
    assert ev.info.compact and ev.info.input_shape()[0] == (COMPACT_BYTES,)
    assert any('"network warmed up"' in line for line in buf.getvalue().splitlines())
