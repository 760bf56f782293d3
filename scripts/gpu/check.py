"""The steps of ``scripts/gpu/check.sh``: each writes one JSON file into the output folder.

``python scripts/gpu/check.py STEP --out DIR [--dry] [--net NAME]``, STEP one of:

- ``env``: driver and GPUs (nvidia-smi), Python, onnxruntime (version, providers), PyTorch (version, CUDA,
  the device's name and compute capability) -> ``env.json``;
- ``nets``: the 15x192 and 20x256 lc0 networks of random weights (:mod:`lichessbot.neural.lc0_random`, lc0's
  own file format) written into ``--nets`` (default /tmp/lichessbot-check-nets) -> ``nets.json``;
- ``correct --net N``: the GPU runner's outputs (PyTorch on CUDA, fp32 and fp16) against onnxruntime's CPU
  provider in fp32 on 256 positions, held to :func:`lichessbot.diagnostics.bench_gpu.within_limits`
  -> ``correct-N.json``;
- ``evals --net N``: evals/s of the network alone at batch 1, 64, 256 and 1024 in fp32 and fp16
  -> ``evals-N.json``;
- ``search --net N``: nps of a 10 s search of 1 game and of 8 games merged by the evaluation service, and the
  histogram of the network calls' sizes, in the ``auto`` precision -> ``search-N.json``.

N is ``default``, ``15x192`` or ``20x256``. With ``--dry`` (no GPU: this machine) every step runs on the CPU
with onnxruntime standing in for the GPU runner (``stand_in`` in the JSON), at batches 1 and 8, 1 s
searches and 32 positions: the script's path end to end, not a measurement.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lichessbot.config import SearchParams  # noqa: E402
from lichessbot.diagnostics.bench_gpu import _position, check_against_cpu, within_limits  # noqa: E402
from lichessbot.diagnostics.bench_nn import bench_positions  # noqa: E402
from lichessbot.diagnostics.bench_search_extra import concurrent_games  # noqa: E402
from lichessbot.neural.evaluator import Evaluator  # noqa: E402
from lichessbot.neural.lc0_random import random_net  # noqa: E402
from lichessbot.neural.network import Network, load_network  # noqa: E402
from lichessbot.neural.runner import NetInfo, NetOutputs, NetworkRunner  # noqa: E402
from lichessbot.neural.service import EvalService  # noqa: E402
from lichessbot.neural.torch_runner import TorchRunner  # noqa: E402
from lichessbot.search import Searcher  # noqa: E402

#: The sizes of the generated networks (blocks, filters): lc0's common T60-style 20x256 and a 15x192.
SIZES = {"15x192": (15, 192), "20x256": (20, 256)}


def _write(out: Path, name: str, data: dict[str, Any]) -> None:
    (out / name).write_text(json.dumps(data, indent=1, default=str) + "\n")
    print(json.dumps({"wrote": name, **{k: v for k, v in data.items() if not isinstance(v, (dict, list))}}),
          flush=True)


def _smi(query: str) -> list[str]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        return subprocess.run([smi, f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=20, check=True).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return []


def env(out: Path, dry: bool) -> None:
    data: dict[str, Any] = {"dry": dry, "python": platform.python_version(), "platform": platform.platform(),
                            "gpus": _smi("index,name,memory.total,driver_version,compute_cap"),
                            "onnxruntime": ort.__version__, "onnxruntime_providers": ort.get_available_providers()}
    try:
        torch: Any = importlib.import_module("torch")
        data["torch"] = torch.__version__
        data["torch_cuda"] = torch.version.cuda
        data["torch_cuda_available"] = bool(torch.cuda.is_available())
        if torch.cuda.is_available():
            data["torch_device"] = torch.cuda.get_device_name(0)
            data["torch_capability"] = list(torch.cuda.get_device_capability(0))
            data["cudnn"] = torch.backends.cudnn.version()
    except ModuleNotFoundError:
        data["torch"] = None
    _write(out, "env.json", data)


def nets(out: Path, dry: bool, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, (blocks, filters) in SIZES.items():
        t = time.perf_counter()
        path = folder / f"random-{name}.pb.gz"
        path.write_bytes(random_net(blocks, filters, seed=blocks * 1000 + filters))
        made[name] = {"path": str(path), "bytes": path.stat().st_size, "seconds": round(time.perf_counter() - t, 2)}
    _write(out, "nets.json", {"dry": dry, "nets": made})


#: Where ``nets`` writes the generated networks (``--nets``; not the output folder: 70 MB come back from there).
NETS = Path("/tmp/lichessbot-check-nets")
NETS_IN_USE = [NETS]


def _network(name: str) -> Network:
    return load_network("default" if name == "default" else str(NETS_IN_USE[0] / f"random-{name}.pb.gz"))


def _runner(network: Network, precision: str, dry: bool) -> tuple[Any, str]:
    """The runner measured: PyTorch on CUDA, or (dry) onnxruntime on the CPU standing in for it."""
    if dry:
        return Evaluator(network, backend="cpu", precision="fp16" if precision == "fp16" else "fp32",
                         cache_size=0), "onnxruntime-cpu"
    runner = TorchRunner(network, precision=precision, cache_size=0)
    if not runner.cuda:
        raise SystemExit("PyTorch sees no CUDA device: run with --dry on a machine without a GPU")
    runner.warm_up()
    return runner, ""


def correct(out: Path, dry: bool, net: str) -> None:
    network = _network(net)
    boards = bench_positions(32 if dry else 256)
    rows = {}
    for precision in ("fp32", "fp16"):
        runner, stand_in = _runner(network, precision, dry)
        check = check_against_cpu(runner, network, boards)
        ran = "fp16" if precision == "fp16" else "fp32"
        rows[precision] = {**check, "ok": within_limits(check, ran), "stand_in": stand_in}
        runner.close()
    _write(out, f"correct-{net}.json", {"dry": dry, "net": net, "positions": len(boards), "precisions": rows})


def evals(out: Path, dry: bool, net: str) -> None:
    network = _network(net)
    batches = [1, 8] if dry else [1, 64, 256, 1024]
    seconds = 0.3 if dry else 1.5
    rows: dict[str, Any] = {}
    for precision in ("fp32", "fp16"):
        runner, stand_in = _runner(network, precision, dry)
        per = {}
        for b in batches:
            planes = np.zeros((b, 112, 8, 8), np.float32)
            planes[:, 104:108] = 1.0
            runner.run(planes)
            n, t = 0, time.perf_counter()
            while time.perf_counter() - t < seconds:
                runner.run(planes)
                n += 1
            per[str(b)] = round(n * b / (time.perf_counter() - t), 1)
        rows[precision] = {"evals_per_s": per, "stand_in": stand_in}
        runner.close()
    _write(out, f"evals-{net}.json", {"dry": dry, "net": net, "seconds_each": seconds, "precisions": rows})


class _Counting:
    """A NetworkRunner that counts the sizes of the calls it passes on (the call-size histogram)."""

    def __init__(self, inner: NetworkRunner) -> None:
        self.inner = inner
        self.search_cache = inner.search_cache
        self.sizes: collections.Counter[int] = collections.Counter()

    @property
    def info(self) -> NetInfo:
        return self.inner.info

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0,
            out: NetOutputs | None = None) -> NetOutputs:
        self.sizes[len(planes)] += 1
        return self.inner.run(planes, game=game, priority=priority, out=out)

    def clear_cache(self) -> None:
        self.inner.clear_cache()


def _histogram(sizes: collections.Counter[int]) -> dict[str, int]:
    edges = [1, 8, 16, 32, 64, 128, 256, 512, 1024]
    hist = {f"<={e}": 0 for e in edges}
    for size, count in sizes.items():
        hist[f"<={next((e for e in edges if size <= e), 1024)}"] += count
    return hist


def search(out: Path, dry: bool, net: str) -> None:
    network = _network(net)
    seconds = 1.0 if dry else 10.0
    rows: dict[str, Any] = {}
    for precision in ("auto",) if not dry else ("fp32",):
        runner, stand_in = _runner(network, precision, dry)
        counting = _Counting(runner)
        service = EvalService(counting)
        with Searcher(service, SearchParams(), game="one") as searcher:
            handle = searcher.start(_position(1))
            time.sleep(seconds)
            handle.stop()
            one = handle.wait().nps
        service.close()
        one_sizes = dict(counting.sizes)
        counting.sizes.clear()
        merged = concurrent_games(counting, [_position(k) for k in range(8)], SearchParams(), seconds)
        rows[precision] = {"one_game_nps": one, "eight_games_nps": merged["total_pps"],
                           "calls_one_game": _histogram(collections.Counter(one_sizes)),
                           "calls_eight_games": _histogram(counting.sizes), "stand_in": stand_in}
        runner.close()
    _write(out, f"search-{net}.json", {"dry": dry, "net": net, "seconds": seconds, "precisions": rows})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("step", choices=["env", "nets", "correct", "evals", "search"])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--dry", action="store_true")
    parser.add_argument("--net", default="default", choices=["default", *SIZES])
    parser.add_argument("--nets", type=Path, default=NETS, help="folder of the generated networks")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    NETS_IN_USE[0] = args.nets
    if args.step == "env":
        env(args.out, args.dry)
    elif args.step == "nets":
        nets(args.out, args.dry, args.nets)
    else:
        {"correct": correct, "evals": evals, "search": search}[args.step](args.out, args.dry, args.net)


if __name__ == "__main__":
    main()
