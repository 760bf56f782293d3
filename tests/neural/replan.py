"""The search's nps on the emulated GPU host when a session's shape change costs a re-plan, against the same
evaluator when it costs nothing (onnxruntime issue 23006; tests/neural/gpu_host.py).

``python -m tests.neural.replan [--network default] [--seconds 6] [--games 1,8] [--replan-ms 50]`` prints
one JSON line per number of games: the nps without and with the re-plan cost, their ratio, and the shape
changes the GPU sessions saw after the warm-up.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from lichessbot.config import SearchParams
from lichessbot.diagnostics.bench_gpu import _one_game_nps, _position
from lichessbot.diagnostics.bench_search_extra import concurrent_games
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import Network, load_network
from lichessbot.neural.service import EvalService
from tests.neural.gpu_host import EmulatedGpuHost


def nps(ev: Evaluator, games: int, seconds: float) -> float:
    """The search's nps over ``ev``: one game through an evaluation service, or ``games`` games merged."""
    if games == 1:
        service = EvalService(ev)
        try:
            return _one_game_nps(service, seconds)
        finally:
            service.close()
    return float(concurrent_games(ev, [_position(k) for k in range(games)], SearchParams(), seconds)["total_pps"])


def measure(host: EmulatedGpuHost, network: Network, games: int, seconds: float, replan_s: float,
            precision: str = "fp32", rounds: int = 2) -> dict[str, Any]:
    """On ``host`` (installed): one warmed-up CUDA evaluator, searched ``seconds`` with shape changes free,
    then ``seconds`` with each costing ``replan_s``, ``rounds`` times (the best nps of each). Returns the
    figures and the GPU sessions' shape changes after the warm-up."""
    ev = Evaluator(network, backend="auto", precision=precision, cache_size=0)
    ev.warm_up()
    warm = {id(c): len(c.shapes) for c in host.gpu_sessions()}
    nps(ev, games, seconds / 2)  # the first search's costs (threads, allocations) are in neither figure
    free = paid = 0.0
    for _ in range(rounds):  # interleaved, best of each: a machine shared with other work drifts
        host.replan_s = 0.0
        free = max(free, nps(ev, games, seconds))
        host.replan_s = replan_s
        paid = max(paid, nps(ev, games, seconds))
    host.replan_s = 0.0
    after = [c.shapes[warm.get(id(c), 0):] for c in host.gpu_sessions()]
    ev.close()
    return {"games": games, "seconds": seconds, "replan_ms": round(replan_s * 1000), "nps_free": round(free),
            "nps_replan": round(paid), "ratio": round(paid / free, 3) if free else 0.0,
            "sessions": len(host.gpu_sessions()),
            "shapes_per_session": sorted({len(set(c.shapes)) for c in host.gpu_sessions()}),
            "calls_after_warm_up": sum(len(s) for s in after),
            "shape_changes": sum(c.shape_changes for c in host.gpu_sessions())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--network", default="default")
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--games", default="1,8")
    parser.add_argument("--replan-ms", type=float, default=50.0)
    args = parser.parse_args()
    network = load_network(args.network)
    for games in (int(g) for g in args.games.split(",")):
        with pytest.MonkeyPatch.context() as mp:
            host = EmulatedGpuHost(cuda="ok").install(mp)
            print(json.dumps(measure(host, network, games, args.seconds, args.replan_ms / 1000)), flush=True)


if __name__ == "__main__":
    main()
