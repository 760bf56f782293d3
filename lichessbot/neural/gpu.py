"""The NVIDIA side of onnxruntime: finding the GPUs, loading CUDA's and TensorRT's libraries, and the advice
that fixes a GPU provider that does not start.

onnxruntime-gpu 1.31 is built against CUDA 13 and cuDNN 9 (its ``libonnxruntime_providers_cuda.so`` needs
``libcudart.so.13``, ``libcublas.so.13``, ``libcublasLt.so.13``, ``libcurand.so.10``, ``libcufft.so.12``,
the driver's ``libcuda.so.1`` and cuDNN 9). The GPU extra (:data:`GPU_EXTRA`) brings them as NVIDIA's wheels
(``nvidia-*``), which :func:`preload_cuda` loads with ``onnxruntime.preload_dlls`` before the first session;
a host then needs only the NVIDIA driver. Its TensorRT provider (``libonnxruntime_providers_tensorrt.so``)
links ``libnvinfer.so.10`` and ``libnvonnxparser.so.10`` (TensorRT 10), which the TensorRT extra
(:data:`TENSORRT_EXTRA`) brings as NVIDIA's ``tensorrt-cu13-libs`` wheel and :func:`preload_tensorrt`
loads; ``preload_dlls`` loads CUDA and cuDNN only.

:func:`provider_library_error` loads a provider's library the way onnxruntime does (``dlopen``) and returns
the loader's message (the first missing library), and :func:`advice` turns the reasons providers gave into
the command or setting that fixes them.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort
import structlog

__all__ = ["CUDA_FIX", "CUDA_LIBRARIES", "DOCKER_FIX", "DRIVER_FIX", "GPU_EXTRA", "TENSORRT_EXTRA", "TENSORRT_FIX",
           "TENSORRT_LIBRARIES", "GpuInfo", "advice", "compute_capability",
           "container_wants_gpu", "cuda_libraries", "cuda_provider_error",
           "driver_version", "in_container", "nvidia_gpus", "preload_cuda", "preload_tensorrt",
           "provider_library_error"]

log = structlog.get_logger("lichessbot.neural")

#: The install extra that brings onnxruntime-gpu and what its CUDA provider loads (pyproject.toml): the one
#: place its name is written, so every piece of advice follows a rename (``cuda`` is its old name, an alias).
GPU_EXTRA = "gpu"
#: The command that installs what the CUDA provider needs (README, "GPU").
CUDA_FIX = f'pip install "lichessbot-nn[{GPU_EXTRA}]"'
#: The install extra that brings TensorRT 10's libraries (pyproject.toml).
TENSORRT_EXTRA = "tensorrt"
#: The command that installs what the TensorRT provider needs on top of CUDA's.
TENSORRT_FIX = f'pip install "lichessbot-nn[{GPU_EXTRA},{TENSORRT_EXTRA}]"'
#: What a container started without a GPU needs (NVIDIA Container Toolkit's documentation).
DOCKER_FIX = ("start the container with --gpus all (docker run --gpus all ...; the host needs the NVIDIA driver "
              "and the NVIDIA Container Toolkit)")
#: CUDA 13.0 needs an NVIDIA driver of branch 580 or later (NVIDIA, CUDA Toolkit release notes, "CUDA Toolkit
#: and Corresponding Driver Versions").
DRIVER_FIX = "install NVIDIA driver 580 or later (CUDA 13, which onnxruntime-gpu 1.31 is built against, needs it)"
#: The libraries onnxruntime-gpu 1.31's CUDA provider loads (its ELF needs, and cuDNN 9 which it opens).
CUDA_LIBRARIES = ("libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcurand.so.10", "libcufft.so.12",
                  "libcudnn.so.9")
#: What onnxruntime-gpu 1.31's TensorRT provider links (readelf -d libonnxruntime_providers_tensorrt.so), in
#: the order they must be loaded (the parser needs libnvinfer).
TENSORRT_LIBRARIES = ("libnvinfer.so.10", "libnvinfer_plugin.so.10", "libnvonnxparser.so.10")
#: Where the NVIDIA driver says it is loaded (Linux).
DRIVER_VERSION = Path("/proc/driver/nvidia/version")
#: onnxruntime's provider libraries, by provider name.
_PROVIDER_LIBRARY = {"CUDAExecutionProvider": "libonnxruntime_providers_cuda.so",
                     "TensorrtExecutionProvider": "libonnxruntime_providers_tensorrt.so"}


@dataclass(frozen=True)
class GpuInfo:
    """One NVIDIA GPU: ``name``, ``memory_mib`` (MiB, None when unknown), ``driver`` version ("" unknown) and
    ``index``, the CUDA device number ``engine.device`` takes (nvidia-smi's order, which is CUDA's with
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; without it CUDA numbers the fastest GPU first)."""

    name: str
    memory_mib: int | None
    driver: str
    index: int = 0


_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")


def driver_version(text: str) -> str:
    """The driver version in the text of ``/proc/driver/nvidia/version`` ("" when none is found). Its first
    line differs by kernel module: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Thu Apr ..."
    (proprietary), "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build ..."
    (open), "... Kernel Module for aarch64  34.1.1 ..." (Jetson)."""
    match = _VERSION.search(text)
    return match.group(1) if match else ""


def nvidia_gpus() -> list[GpuInfo]:
    """The NVIDIA GPUs the driver sees (``nvidia-smi``, else ``/proc/driver/nvidia``); [] without a driver."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=index,name,memory.total,driver_version",
                                  "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
            gpus = []
            for k, line in enumerate(out.strip().splitlines()):
                index, name, mem, driver = (p.strip() for p in (line.split(",") + ["", "", ""])[:4])
                gpus.append(GpuInfo(name, int(mem) if mem.isdigit() else None, driver,
                                    int(index) if index.isdigit() else k))
            if gpus:
                return gpus
        except (OSError, subprocess.SubprocessError):
            pass
    if not DRIVER_VERSION.exists():
        return []
    driver = ""
    with contextlib.suppress(OSError):
        driver = driver_version(DRIVER_VERSION.read_text())
    gpus = []
    for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        with contextlib.suppress(OSError):
            fields = dict(line.split(":", 1) for line in info.read_text().splitlines() if ":" in line)
            gpus.append(GpuInfo(fields.get("Model", "NVIDIA GPU").strip(), None, driver, len(gpus)))
    return gpus or [GpuInfo("NVIDIA GPU", None, driver)]


def compute_capability(device: int = 0) -> float | None:
    """The compute capability of GPU ``device`` (e.g. 9.0 for an H100), from ``nvidia-smi
    --query-gpu=compute_cap`` (drivers of 2022 and later); None when it cannot be read (no driver, an older
    nvidia-smi)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=index,compute_cap", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.strip().splitlines():
        index, _, cap = (p.strip() for p in line.partition(","))
        if index == str(device):
            try:
                return float(cap)
            except ValueError:
                return None
    return None


def in_container() -> bool:
    """True inside a Docker or Podman container (``/.dockerenv``, ``/run/.containerenv``)."""
    return Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()


def container_wants_gpu() -> bool:
    """True inside a container whose image asks the NVIDIA Container Toolkit for GPUs
    (``NVIDIA_VISIBLE_DEVICES`` set, and not "none" or "void": the toolkit's documentation), as this
    project's Dockerfile does."""
    wanted = os.environ.get("NVIDIA_VISIBLE_DEVICES", "").strip().lower()
    return in_container() and wanted not in ("", "none", "void")


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


_trt_loaded: dict[str, str | None] | None = None


def _tensorrt_dirs() -> list[Path]:
    """Folders where NVIDIA's TensorRT wheels put their libraries (``tensorrt_libs`` of tensorrt-cu13-libs)
    on ``sys.path``."""
    found = []
    for entry in sys.path:
        folder = Path(entry or ".") / "tensorrt_libs"
        if folder.is_dir():
            found.append(folder)
    return found


def preload_tensorrt() -> dict[str, str | None]:
    """Load TensorRT 10's libraries (:data:`TENSORRT_LIBRARIES`) globally, from NVIDIA's
    ``tensorrt_libs`` wheel folder when it is installed, else by name (the system's), once per process and
    after :func:`preload_cuda`. Returns each library -> the path it loaded from, or None when it cannot be
    loaded. Never raises."""
    global _trt_loaded
    with _preload_lock:
        if _trt_loaded is None:
            loaded: dict[str, str | None] = {}
            dirs = _tensorrt_dirs()
            for name in TENSORRT_LIBRARIES:
                loaded[name] = None
                for candidate in [str(d / name) for d in dirs if (d / name).exists()] + [name]:
                    try:
                        ctypes.CDLL(candidate, mode=os.RTLD_GLOBAL)
                    except OSError:
                        continue
                    loaded[name] = candidate
                    break
            _trt_loaded = loaded
        return dict(_trt_loaded)


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


def provider_library_error(provider: str) -> str | None:
    """Why onnxruntime's library for ``provider`` ("CUDAExecutionProvider", "TensorrtExecutionProvider") does
    not load: the dynamic loader's message, e.g. "libcublasLt.so.13: cannot open shared object file: No such
    file or directory" (what onnxruntime logs as "Failed to load library ... with error: ..."); None when it
    loads (or for another provider)."""
    name = _PROVIDER_LIBRARY.get(provider)
    if name is None:
        return None
    capi = Path(ort.__file__).parent / "capi"
    lib = capi / name
    if not lib.exists():
        return f"this onnxruntime has no {provider} (the CPU-only onnxruntime package is installed)"
    preload_cuda()
    if provider == "TensorrtExecutionProvider":
        preload_tensorrt()
    try:
        ctypes.CDLL(str(capi / "libonnxruntime_providers_shared.so"), mode=os.RTLD_LAZY | os.RTLD_GLOBAL)
        ctypes.CDLL(str(lib), mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as err:
        return str(err).replace(str(capi) + "/", "")
    return None


def cuda_provider_error() -> str | None:
    """:func:`provider_library_error` of the CUDA provider."""
    return provider_library_error("CUDAExecutionProvider")


def advice(reasons: list[str], *, gpus: list[GpuInfo], container: bool) -> str:
    """The fix for the reasons GPU providers gave (each as :func:`provider_library_error` or onnxruntime's
    error says it), most fundamental first: no GPU visible in a container -> :data:`DOCKER_FIX`; no driver ->
    install it; a driver older than CUDA 13 -> :data:`DRIVER_FIX`; the CPU-only onnxruntime -> reinstall;
    TensorRT's libraries missing -> :data:`TENSORRT_FIX` (which names the GPU extra too); CUDA's or cuDNN's
    missing -> :data:`CUDA_FIX`."""
    text = " ".join(reasons)
    no_device = "CUDA failure 100" in text or "no CUDA-capable device" in text
    no_driver = "libcuda.so.1" in text
    if (no_device or no_driver or not gpus) and container:
        return DOCKER_FIX
    if no_driver:
        return "install the NVIDIA driver (nvidia-smi must list the GPU)"
    if no_device:
        return "no GPU is visible to this process: check nvidia-smi and CUDA_VISIBLE_DEVICES"
    if "CUDA failure 35" in text or "driver version is insufficient" in text:
        return DRIVER_FIX
    if "invalid device ordinal" in text or "CUDA failure 101" in text:
        return "engine.device names a GPU that is not there (lichessbot doctor lists them)"
    if "CPU-only onnxruntime" in text:
        return ("uninstall onnxruntime and onnxruntime-gpu, then install lichessbot-nn again "
                f"({CUDA_FIX})")
    if "libnvinfer" in text or "libnvonnxparser" in text or "TensorRT libraries" in text:
        return TENSORRT_FIX  # it names the GPU extra too
    if any(lib.split(".so")[0] + ".so" in text for lib in CUDA_LIBRARIES):
        return CUDA_FIX
    return "check the driver with nvidia-smi, then run lichessbot doctor"
