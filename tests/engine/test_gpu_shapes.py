"""One batch shape per GPU session (onnxruntime issue 23006: the CUDA Conv re-plans cuDNN whenever a node's
input shape changes), on the emulated GPU host (tests/engine/gpu_host.py) that counts every session's shapes
and makes a change cost a re-plan."""

from __future__ import annotations

import pytest

from lichessbot.engine.evaluator import Evaluator
from lichessbot.engine.network import load_network
from lichessbot.engine.session import BATCH_BUCKETS
from tests.engine.gpu_host import CPU, CUDA, EmulatedGpuHost
from tests.engine.replan import measure, nps


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
    """Done when of issue 47: >= 80 % of the nps with changes free, when each costs 50 ms."""
    figures = measure(gpu_host, load_network(str(tiny_net)), games, 1.0, 0.05, rounds=3)
    assert figures["shape_changes"] == 0 and figures["ratio"] >= 0.8, figures


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
