"""The NVIDIA side of onnxruntime: finding the GPU, loading CUDA's libraries, and saying why a GPU is unused.

onnxruntime-gpu 1.31 is built against CUDA 13 and cuDNN 9 (its ``libonnxruntime_providers_cuda.so`` needs
``libcudart.so.13``, ``libcublas.so.13``, ``libcublasLt.so.13``, ``libcurand.so.10``, ``libcufft.so.12``
and cuDNN 9). ``pip install "lichessbot[gpu]"`` brings them as NVIDIA's wheels (``nvidia-*``), which
:func:`preload_cuda` loads with ``onnxruntime.preload_dlls`` before the first session; a host then needs
only the NVIDIA driver.

When a GPU is there (the driver answers) but no GPU provider starts, :func:`fallback_warning` gives the
reason, found by loading onnxruntime's CUDA provider library the way onnxruntime does (``dlopen``: the
first missing library is named), and the command that fixes it.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort
import structlog

__all__ = ["CUDA_FIX", "CUDA_LIBRARIES", "GPU_EXTRA", "GpuInfo", "cuda_libraries", "cuda_provider_error",
           "fallback_warning", "nvidia_gpus", "preload_cuda"]

log = structlog.get_logger("lichessbot.engine")

#: The install extra that brings onnxruntime-gpu and what its CUDA provider loads (pyproject.toml; ``cuda``
#: is its old name, kept as an alias).
GPU_EXTRA = "gpu"
#: The command that installs what the CUDA provider needs (README, "Install").
CUDA_FIX = f'pip install "lichessbot[{GPU_EXTRA}]"'
#: The libraries onnxruntime-gpu 1.31's CUDA provider loads (its ELF needs, and cuDNN 9 which it opens).
CUDA_LIBRARIES = ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcurand.so.10", "libcufft.so.12",
                  "libcudnn.so.9")
#: Where the NVIDIA driver says it is loaded (Linux).
DRIVER_VERSION = Path("/proc/driver/nvidia/version")


@dataclass(frozen=True)
class GpuInfo:
    """One NVIDIA GPU: ``name``, ``memory_mib`` (MiB, None when unknown), ``driver`` version ("" unknown)."""

    name: str
    memory_mib: int | None
    driver: str


def nvidia_gpus() -> list[GpuInfo]:
    """The NVIDIA GPUs the driver sees (``nvidia-smi``, else ``/proc/driver/nvidia``); [] without a driver."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
            gpus = []
            for line in out.strip().splitlines():
                name, mem, driver = (p.strip() for p in (line.split(",") + ["", ""])[:3])
                gpus.append(GpuInfo(name, int(mem) if mem.isdigit() else None, driver))
            if gpus:
                return gpus
        except (OSError, subprocess.SubprocessError):
            pass
    if not DRIVER_VERSION.exists():
        return []
    driver = ""
    with contextlib.suppress(OSError):
        driver = DRIVER_VERSION.read_text().split("Kernel Module", 1)[-1].split()[0]
    gpus = []
    for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        with contextlib.suppress(OSError):
            fields = dict(line.split(":", 1) for line in info.read_text().splitlines() if ":" in line)
            gpus.append(GpuInfo(fields.get("Model", "NVIDIA GPU").strip(), None, driver))
    return gpus or [GpuInfo("NVIDIA GPU", None, driver)]


_preloaded: str | None = None
_preload_lock = threading.Lock()


def preload_cuda() -> str:
    """Load CUDA's and cuDNN's libraries from NVIDIA's wheels (or the system) with
    ``onnxruntime.preload_dlls``, once per process, before a CUDA or TensorRT session is made. Returns
    what it said ("" when silent); never raises (a missing library is reported by the provider's start)."""
    global _preloaded
    with _preload_lock:
        if _preloaded is None:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                    ort.preload_dlls(cuda=True, cudnn=True, msvc=True, directory="")
            except Exception as err:  # noqa: BLE001 - an old onnxruntime or an odd install: report, go on
                buf.write(f"{type(err).__name__}: {err}")
            _preloaded = buf.getvalue().strip()
        return _preloaded


def cuda_libraries() -> dict[str, str | None]:
    """Each of :data:`CUDA_LIBRARIES` -> the file it loads from, or None when it cannot be loaded (after
    :func:`preload_cuda`)."""
    preload_cuda()
    loaded: list[str] = []
    for name in CUDA_LIBRARIES:
        try:
            ctypes.CDLL(name, mode=os.RTLD_LAZY | os.RTLD_GLOBAL)
            loaded.append(name)
        except OSError:
            pass
    maps = ""
    if loaded:  # where the loader found them: the process's memory map (Linux)
        with contextlib.suppress(OSError):
            maps = Path("/proc/self/maps").read_text()
    found: dict[str, str | None] = {}
    for name in CUDA_LIBRARIES:
        paths = [line.split()[-1] for line in maps.splitlines() if line.rstrip().endswith(name)]
        found[name] = (paths[0] if paths else name) if name in loaded else None
    return found


def cuda_provider_error() -> str | None:
    """Why onnxruntime's CUDA provider library does not load (the dynamic loader's message, e.g.
    "libcublasLt.so.13: cannot open shared object file"), or None when it loads."""
    capi = Path(ort.__file__).parent / "capi"
    cuda = capi / "libonnxruntime_providers_cuda.so"
    if not cuda.exists():
        return "this onnxruntime has no CUDA provider (the CPU-only onnxruntime package is installed)"
    preload_cuda()
    try:
        ctypes.CDLL(str(capi / "libonnxruntime_providers_shared.so"), mode=os.RTLD_LAZY | os.RTLD_GLOBAL)
        ctypes.CDLL(str(cuda), mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as err:
        return str(err).replace(str(capi) + "/", "")
    return None


def fallback_warning(provider: str, gpus: list[GpuInfo] | None = None) -> str | None:
    """The warning to print when a GPU is there but ``provider`` (the one onnxruntime started) is the CPU:
    the GPU, onnxruntime's reason and :data:`CUDA_FIX`; None when there is no NVIDIA GPU or a GPU
    provider runs."""
    if provider != "CPUExecutionProvider":
        return None
    gpus = nvidia_gpus() if gpus is None else gpus
    if not gpus:
        return None
    reason = cuda_provider_error() if "CUDAExecutionProvider" in ort.get_available_providers() else (
        "this onnxruntime has no CUDA provider (the CPU-only onnxruntime package is installed: "
        "pip uninstall onnxruntime first)")
    reason = reason or "the CUDA provider loads but did not start (check the driver with nvidia-smi)"
    return (f"an NVIDIA GPU is present ({gpus[0].name}) but the network runs on the CPU: {reason}. "
            f"Fix: {CUDA_FIX}")
