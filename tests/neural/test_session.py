"""GPU-ready inference, exercised on the CPU: the float16 copy of a network and runs through I/O binding."""

from __future__ import annotations

import numpy as np
import pytest

from lichessbot import _core
from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import NetworkError, load_network

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


@pytest.fixture(scope="module")
def planes() -> np.ndarray:
    games = [(START, moves) for moves in ([], ["e2e4"], ["e2e4", "c7c5"], ["d2d4", "g8f6"])]
    return _core.encode_positions(games, input_format=1, history_fill="fen_only")[0]


def test_io_binding_gives_the_outputs_of_a_plain_run(tiny_net, planes):
    net = load_network(str(tiny_net))
    plain = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    bound = Evaluator(net, backend="cpu", threads=1, cache_size=0, io_binding=True)
    assert bound._bound is not None and plain._bound is None
    for x in (planes, planes[:1], planes[:3]):  # every call binds its own shape into the same buffers
        a, b = plain.run(x), bound.run(x)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    first = bound.run(planes)[0]
    bound.run(planes[:2])
    np.testing.assert_array_equal(first, bound.run(planes)[0])  # results are copies, not the buffers


def test_fp16_runs_the_float16_copy_close_to_fp32(tiny_net, planes):
    net = load_network(str(tiny_net))
    fp32 = Evaluator(net, backend="cpu", threads=1, cache_size=0)
    fp16 = Evaluator(net, backend="cpu", threads=1, cache_size=0, precision="fp16")
    inits = [i for i in __import__("onnx").load_from_string(net.model).graph.initializer]
    assert all(i.data_type == 1 for i in inits if i.name == "conv_w")  # the network itself stays fp32
    a, b = fp32.run(planes), fp16.run(planes)
    assert np.abs(a[0] - b[0]).max() < 0.05 and np.abs(a[1] - b[1]).max() < 0.01
    assert not np.array_equal(a[0], b[0]), "fp16 really computes in float16"


def test_an_unknown_precision_is_refused(tiny_net):
    with pytest.raises(NetworkError, match="precision"):
        Evaluator(load_network(str(tiny_net)), backend="cpu", precision="fp8")
