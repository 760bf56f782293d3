"""lc0 networks of random weights in lc0's own file format (``.pb.gz``): for speed measurements of a given size
(``scripts/gpu/check.sh`` makes 15x192 and 20x256 ones), read by this project's loader and by lc0 alike.

The layout is lc0's proto (lc0 libs/lczero-common/proto/net.proto): ``Net`` with magic 0x1C0, ``Format``
{weights_encoding LINEAR16, network_format {input 1 (classical), output WDL, network SE_WITH_HEADFORMAT,
policy CONVOLUTION, value WDL, moves_left V1}}, ``Weights`` {input conv with batch-norm, residual blocks of two
3x3 convolutions and a squeeze-excitation unit, the convolutional policy head (80 planes), the WDL value head
(32 planes, 128 hidden), the moves-left head (8 planes, 128 hidden)}. Each layer is LINEAR16: its min, max
and 16-bit steps between them (net.proto ``Layer``). The weights are drawn scaled by 1/sqrt(fan-in), so the
outputs stay finite through 20 blocks; they mean nothing.
"""

from __future__ import annotations

import gzip

import numpy as np

from lichessbot.neural import protowire as pw

__all__ = ["random_net"]


def _layer(arr: np.ndarray) -> bytes:
    flat = np.asarray(arr, np.float32).ravel()
    lo, hi = float(flat.min()), float(flat.max()) + 1e-3
    q = np.round((flat - lo) / (hi - lo) * 65535).astype("<u2")
    return pw.message([pw.float_field(1, lo), pw.float_field(2, hi), pw.bytes_field(3, q.tobytes())])


class _Writer:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def normal(self, *shape: int, scale: float) -> bytes:
        return _layer(self.rng.standard_normal(shape).astype(np.float32) * scale)

    def conv(self, out: int, inp: int, k: int, *, bn: bool) -> bytes:
        """A ConvBlock (weights, biases; with ``bn`` lc0's batch-norm means, variances, gammas, betas)."""
        parts = [pw.bytes_field(1, self.normal(out, inp, k, k, scale=1 / np.sqrt(inp * k * k))),
                 pw.bytes_field(2, self.normal(out, scale=0.05))]
        if bn:
            parts += [pw.bytes_field(3, self.normal(out, scale=0.05)),
                      pw.bytes_field(4, _layer(self.rng.uniform(0.8, 1.2, out))),
                      pw.bytes_field(5, _layer(self.rng.uniform(0.8, 1.2, out))),
                      pw.bytes_field(6, self.normal(out, scale=0.05))]
        return pw.message(parts)

    def dense(self, out: int, inp: int, wnum: int, bnum: int) -> list[bytes]:
        return [pw.bytes_field(wnum, self.normal(out, inp, scale=1 / np.sqrt(inp))),
                pw.bytes_field(bnum, self.normal(out, scale=0.05))]


def random_net(blocks: int, filters: int, *, seed: int = 0, se_ratio: int = 8) -> bytes:
    """A ``blocks`` x ``filters`` lc0 network of random weights as ``.pb.gz`` bytes (see the module docs).
    Raises ValueError for fewer than 1 block or 8 filters."""
    if blocks < 1 or filters < 8:
        raise ValueError("a network needs at least 1 block and 8 filters")
    w = _Writer(seed)
    se = max(1, filters // se_ratio)
    weights = [pw.bytes_field(1, w.conv(filters, 112, 3, bn=True))]
    for _ in range(blocks):
        unit = pw.message(w.dense(se, filters, 1, 2) + w.dense(2 * filters, se, 3, 4))
        weights.append(pw.bytes_field(2, pw.message([pw.bytes_field(1, w.conv(filters, filters, 3, bn=True)),
                                                     pw.bytes_field(2, w.conv(filters, filters, 3, bn=True)),
                                                     pw.bytes_field(3, unit)])))
    weights += [pw.bytes_field(11, w.conv(filters, filters, 3, bn=False)),
                pw.bytes_field(3, w.conv(80, filters, 3, bn=False))]
    weights += [pw.bytes_field(6, w.conv(32, filters, 1, bn=True))] + w.dense(128, 32 * 64, 7, 8) + \
        w.dense(3, 128, 9, 10)
    weights += [pw.bytes_field(12, w.conv(8, filters, 1, bn=True))] + w.dense(128, 8 * 64, 13, 14) + \
        w.dense(1, 128, 15, 16)
    network_format = pw.message([pw.varint_field(1, 1), pw.varint_field(2, 2), pw.varint_field(3, 4),
                                 pw.varint_field(4, 2), pw.varint_field(5, 2), pw.varint_field(6, 1)])
    net = pw.message([pw.fixed32_field(1, 0x1C0),
                      pw.bytes_field(4, pw.message([pw.varint_field(1, 1), pw.bytes_field(2, network_format)])),
                      pw.bytes_field(10, pw.message(weights))])
    return gzip.compress(net, compresslevel=1)
