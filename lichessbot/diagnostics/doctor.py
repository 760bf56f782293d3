"""``lichessbot doctor``: what a bug report needs, in one printout.

    lichessbot doctor [--network default] [--backend auto] [--device 0] [--precision auto] [--seconds 5] [--json]

Versions (lichessbot, Python, onnxruntime and its package, numpy, python-chess, the platform); the
NVIDIA GPUs the driver sees (CUDA device number, name, memory, driver); CUDA's and cuDNN's libraries
(where each loads from, or missing) and TensorRT's; the providers onnxruntime lists, every provider tried
with the reason it did not start, the one that runs with its options, the precision asked for and the
one that runs, and the warning with the fix when a GPU is left unused; the network (name, lc0 input
format, heads); the warm-up (seconds, and the batch shapes it planned); and the search's nps from the
initial position for ``--seconds`` seconds (lc0's nps: playouts / seconds since the first playout).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import platform
import sys
import time
from typing import Any

import chess
import numpy as np
import onnxruntime as ort

from lichessbot import __version__
from lichessbot.config import SearchParams
from lichessbot.logs import configure_logging
from lichessbot.neural import gpu
from lichessbot.neural.eval_cli import add_network_flags
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.providers import OnnxBackend
from lichessbot.search import Searcher

__all__ = ["add_arguments", "package_line", "report", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``lichessbot doctor``."""
    add_network_flags(parser)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of the nps search (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def package_line(dists: dict[str, str]) -> str:
    """Which onnxruntime package is installed (``dists``: distribution name -> version), in words: the
    GPU build (the ``gpu`` extra), the CPU build (the ``cpu`` extra), both (a problem) or neither."""
    builds = {"onnxruntime-gpu": "the GPU build, lichessbot-nn[gpu]",
              "onnxruntime": "the CPU build, lichessbot-nn[cpu]"}
    if not dists:
        return "neither onnxruntime nor onnxruntime-gpu is installed as a package (a build of its own?)"
    line = " and ".join(f"{d} {v} ({builds[d]})" for d, v in dists.items())
    return line + (": both, which break each other; keep one" if len(dists) > 1 else "")


def report(network: str = "default", *, input_format: int | None = None, backend: str = OnnxBackend.AUTO,
           precision: str = "auto", device: int = 0, seconds: float = 5.0) -> dict[str, Any]:
    """The doctor's findings as a dict (see the module docs). Raises NetworkError for a bad network."""
    ort_dists = {d: v for d in ("onnxruntime-gpu", "onnxruntime") if (v := _version(d))}
    out: dict[str, Any] = {
        "versions": {"lichessbot": __version__, "python": sys.version.split()[0], "onnxruntime": ort.__version__,
                     "onnxruntime_packages": ort_dists, "numpy": np.__version__, "python-chess": chess.__version__,
                     "platform": platform.platform()},
        "gpus": [g.__dict__ for g in gpu.nvidia_gpus()],
        "providers_listed": ort.get_available_providers(),
        "backend": backend,
    }
    if len(ort_dists) > 1:
        out["problems"] = ["onnxruntime and onnxruntime-gpu are both installed: they break each other's GPU "
                           "providers; uninstall both, then install lichessbot-nn again"]
    if "CUDAExecutionProvider" in out["providers_listed"]:
        out["cuda_libraries"] = gpu.cuda_libraries()
        out["cuda_provider_error"] = gpu.cuda_provider_error()
    if "TensorrtExecutionProvider" in out["providers_listed"]:
        out["tensorrt_libraries"] = gpu.preload_tensorrt()
    net = load_network(network, input_format)
    ev = Evaluator(net, backend=backend, precision=precision, device=device)
    out["provider_started"] = ev.provider
    out["providers_failed"] = [{"provider": f.provider, "reason": f.reason, "detail": f.detail}
                               for f in ev.failures]
    out["provider_options"] = ev.provider_options
    out["device"] = device
    out["gpu_warning"] = ev.gpu_warning
    out["notes"] = ev.notes
    out["network"] = {"name": net.name, "source": net.source, "input_format": net.input_format,
                      "wdl": net.has_wdl, "moves_left": net.has_mlh, "precision": precision,
                      "precision_run": ev.precision_run}
    out["warm_up_s"] = round(ev.warm_up(), 3)
    out["shapes_planned"] = sorted(ev.shapes_planned)
    sessions, weight_bytes = ev.sessions
    out["sessions"] = {"count": sessions, "weights_mib": round(weight_bytes / 2**20, 1)}
    with Searcher(ev, SearchParams()) as searcher:
        handle = searcher.start(chess.Board())
        time.sleep(seconds)
        handle.stop()
        result = handle.wait()
    out["search"] = {"seconds": seconds, "playouts": result.playouts, "nps": result.nps,
                     "minibatch": searcher.minibatch, "bestmove": result.best_move.uci()}
    ev.close()
    return out


def run(args: argparse.Namespace) -> int:
    """Print the report (or JSON). Returns 0, or 1 when a GPU is left unused or a problem was found."""
    if args.seconds <= 0:
        raise ValueError("--seconds must be > 0")
    # The report says what the log lines of loading would (provider, warm-up): only warnings go to stderr.
    configure_logging(level="warning")
    rep = report(args.network, input_format=args.input_format, backend=args.backend, precision=args.precision,
                 device=args.device, seconds=args.seconds)
    if args.json:
        print(json.dumps(rep))
    else:
        _print(rep)
    return 1 if rep.get("gpu_warning") or rep.get("problems") else 0


def _print(rep: dict[str, Any]) -> None:
    v = rep["versions"]
    print(f"lichessbot {v['lichessbot']}, Python {v['python']}, onnxruntime {v['onnxruntime']} "
          f"({', '.join(f'{k} {x}' for k, x in v['onnxruntime_packages'].items()) or 'package unknown'}), "
          f"numpy {v['numpy']}, python-chess {v['python-chess']}")
    print(f"platform: {v['platform']}")
    print(f"onnxruntime package: {package_line(v['onnxruntime_packages'])}")
    # No NVIDIA GPU and no GPU asked for: one line says so; the GPU libraries and the GPU providers that could not
    # start are nothing a CPU user can act on (they stay in --json).
    cpu_host = not rep["gpus"] and rep["backend"] in ("auto", "cpu")
    if rep["gpus"]:
        for g in rep["gpus"]:
            mem = f"{g['memory_mib']} MiB" if g["memory_mib"] else "memory unknown"
            print(f"GPU {g['index']}: {g['name']}, {mem}, driver {g['driver'] or 'unknown'}")
    elif cpu_host:
        print("GPU: none (no NVIDIA driver answers): the network runs on the CPU")
    else:
        print("GPU: none (no NVIDIA driver answers)")
    if not cpu_host:
        print(f"providers listed: {', '.join(rep['providers_listed'])}")
        if "cuda_libraries" in rep:
            for name, path in rep["cuda_libraries"].items():
                print(f"  {name}: {path or 'missing'}")
            print(f"  CUDA provider library: {rep['cuda_provider_error'] or 'loads'}")
        for name, path in rep.get("tensorrt_libraries", {}).items():
            print(f"  {name}: {path or 'missing'}")
        for f in rep["providers_failed"]:
            print(f"provider not started: {f['provider']}: {f['reason']}")
    n = rep["network"]
    options = ", ".join(f"{k}={v}" for k, v in sorted(rep["provider_options"].items()))
    print(f"provider started: {rep['provider_started']} (device {rep['device']}, precision {n['precision_run']}"
          f"{' for ' + n['precision'] if n['precision_run'] != n['precision'] else ''})"
          + (f"\n  options: {options}" if options else ""))
    for note in rep.get("notes", []):
        print(f"NOTE: {note}")
    if rep.get("gpu_warning"):
        print(f"WARNING: {rep['gpu_warning']}")
    for problem in rep.get("problems", []):
        print(f"PROBLEM: {problem}")
    print(f"network: {n['name']} ({n['source']}), lc0 input format {n['input_format']}, "
          f"{'WDL' if n['wdl'] else 'value'} head{', moves-left head' if n['moves_left'] else ''}")
    planned = ", ".join(map(str, rep["shapes_planned"])) or "none"
    print(f"warm-up: {rep['warm_up_s']:.2f} s (batch shapes planned: {planned}; {rep['sessions']['count']} "
          f"session(s) sharing {rep['sessions']['weights_mib']} MiB of weights)")
    s = rep["search"]
    print(f"search: {s['nps']} nps over {s['seconds']:g} s ({s['playouts']} playouts, minibatch {s['minibatch']}, "
          f"bestmove {s['bestmove']})")
