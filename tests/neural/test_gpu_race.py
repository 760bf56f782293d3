"""The bound (I/O binding) path under concurrency: no call may see another call's outputs (issue 27).

Run on the CPU with the binding forced on, behind an evaluation service with two workers, as the CUDA
path runs on a GPU; every output is compared with a plain session run of the same positions.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.runner import empty_outputs
from lichessbot.neural.service import EvalService


@pytest.mark.slow
def test_concurrent_bound_calls_each_get_their_own_outputs(tiny_net):
    net = load_network(str(tiny_net))
    plain = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    bound = Evaluator(net, backend="cpu", threads=2, cache_size=0, io_binding=True)
    service = EvalService(bound, max_batch=64)
    assert service.concurrency == 2
    rng = np.random.default_rng(7)
    calls = [rng.integers(0, 2, size=(int(rng.integers(1, 48)), 112, 8, 8)).astype(np.float32)
             for _ in range(400)]
    wrong: list[int] = []

    def client(k: int) -> None:
        out = empty_outputs(64, mlh=False) if k % 2 else None  # half write into their own buffers, as searches do
        for i in range(k, len(calls), 4):
            got = service.run(calls[i], game=f"g{k}", out=out)
            want = plain.run(calls[i])
            if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])):
                wrong.append(i)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    service.close()
    assert not wrong, f"{len(wrong)} of {len(calls)} calls got outputs that are not theirs"


def test_the_bound_path_allocates_no_array_per_call(tiny_net):
    """With the caller's output buffers (as every search passes them), a bound call copies the planes into
    its slot and the outputs into those buffers: no array is allocated (numpy reports its allocations to
    tracemalloc). A copy of the logits alone would be 32 x 1858 x 4 = 237,824 bytes."""
    import tracemalloc

    ev = Evaluator(load_network(str(tiny_net)), backend="cpu", threads=1, cache_size=0, io_binding=True)
    planes = np.random.default_rng(3).integers(0, 2, size=(32, 112, 8, 8)).astype(np.float32)
    out = empty_outputs(64, mlh=False)
    ev.run(planes, out=out)  # the slot is made on the first call
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(20):
            got = ev.run(planes, out=out)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert np.shares_memory(got.logits, out.logits)
    assert peak < 20_000, f"{peak} bytes allocated at the peak of 20 bound calls"


def test_bucketed_calls_are_padded_and_give_each_position_its_own_outputs(tiny_net, capsys):
    import io
    import json

    from lichessbot.logs import configure_logging

    net = load_network(str(tiny_net))
    plain = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    bucketed = Evaluator(net, backend="cpu", threads=1, cache_size=0, buckets=True)
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    bucketed.warm_up(64)
    line = next(json.loads(x) for x in buf.getvalue().splitlines() if "network warmed up" in x)
    assert line["buckets"] == [8, 16, 32, 64] and line["seconds"] >= 0
    planes = np.random.default_rng(5).integers(0, 2, size=(20, 112, 8, 8)).astype(np.float32)
    for b in (1, 5, 8, 9, 20):
        np.testing.assert_array_equal(plain.run(planes[:b]).logits, bucketed.run(planes[:b]).logits)


def test_a_binding_onnxruntime_refuses_falls_back_to_plain_runs_once(tiny_net, monkeypatch):
    """The bound path has not run on every device: if onnxruntime refuses it, the network still answers
    (plain runs from then on), with one error line, and a game loses nothing."""
    import io
    import json

    from lichessbot.logs import configure_logging

    net = load_network(str(tiny_net))
    plain = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    bound = Evaluator(net, backend="cpu", threads=1, cache_size=0, io_binding=True)

    def refuse(binding):
        raise RuntimeError("deliberate: binding refused")

    monkeypatch.setattr(bound._session, "run_with_iobinding", refuse)
    buf = io.StringIO()
    configure_logging(stream=buf, json=True, level="info")
    planes = np.random.default_rng(9).integers(0, 2, size=(6, 112, 8, 8)).astype(np.float32)
    out = empty_outputs(8, mlh=False)
    for _ in range(3):
        got = bound.run(planes, out=out)
        np.testing.assert_array_equal(got.logits, plain.run(planes).logits)
    errors = [json.loads(x) for x in buf.getvalue().splitlines() if "I/O binding failed" in x]
    assert len(errors) == 1 and "deliberate" in errors[0]["error"] and bound._bound is None
