"""A deterministic evaluator for the search-equivalence fixtures (tests/test_search_equivalence.py).

The policy is a fixed logit per lc0 policy index, ``LOGITS[i] = ((7919 i) mod 1858) * 0.003`` (a
bijection of the indices, so two legal moves never share a prior, even after lc0's 16-bit storage);
the value is the tiny test network (tests/tinynet.py, seed 1) run on the real input planes. The same
evaluator drives the Python search of commit 6498496 (``evaluate``: priors computed here, then rounded
to lc0's 16-bit prior storage, lc0 src/search/classic/node.cc ``Edge::SetP``/``GetP``, as the Rust
core stores them) and the Rust core (``run``: raw logits and WDL for planes the core wrote).
"""

from __future__ import annotations

import numpy as np

from lichessbot.engine.evaluator import Evaluator
from lichessbot.engine.network import load_network

LOGITS = (((np.arange(1858, dtype=np.int64) * 7919) % 1858) * 0.003).astype(np.float32)


def fast_exp(x: np.ndarray) -> np.ndarray:
    """lc0's FastExp on float32 (lc0 src/utils/fastmath.h ``FastExp2``), as the Rust core computes it."""
    a = (x.astype(np.float32) * np.float32(1.442695040)).astype(np.float32)
    e = np.where(a < 0, np.trunc(a - np.float32(1.0)), np.trunc(a)).astype(np.int32)
    out = (a - e.astype(np.float32)).astype(np.float32)
    out = (np.float32(1.0) + out * (np.float32(0.6602339) + np.float32(0.33976606) * out)).astype(np.float32)
    bits = (out.view(np.int32).astype(np.int64) + (e.astype(np.int64) << 23)) & 0xFFFFFFFF
    res = bits.astype(np.uint32).view(np.float32)
    return np.where(a < -126, np.float32(0.0), res).astype(np.float32)


def lc0_softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    """float32 priors as the core computes them: lc0 src/neural/wrapper.cc ``SoftmaxPolicy`` with FastExp,
    the total summed in float64."""
    x = logits.astype(np.float32)
    w = fast_exp((x - x.max()).astype(np.float32) * (np.float32(1.0) / np.float32(temperature)))
    total = float(w.astype(np.float64).sum())
    scale = np.float32(1.0 / total) if total > 0 else np.float32(1.0)
    return (w * scale).astype(np.float32)


def lc0_prior_storage(p: np.ndarray) -> np.ndarray:
    """float32 [n] priors as lc0 stores them in 16 bits and reads them back (0 stays 0)."""
    bits = p.astype(np.float32).view(np.int32).astype(np.int64) + ((1 << 11) - (3 << 28))
    code = np.where(bits < 0, 0, bits >> 12).astype(np.int64)
    back = ((code << 12) | (3 << 28)).astype(np.uint32).view(np.float32)
    return np.where(code == 0, np.float32(0), back).astype(np.float32)


class DeterministicEvaluator:
    """Fixed-logit policy, tiny-network value. ``run`` for the core, ``evaluate`` for the old search."""

    def __init__(self, tiny_path: str, cache_size: int = 1_000_000) -> None:
        self.inner = Evaluator(load_network(str(tiny_path)), backend="cpu", threads=1, cache_size=cache_size)
        self.network = self.inner.network
        self.input_format = self.inner.input_format
        self.history_fill = self.inner.history_fill
        self.policy_temperature = self.inner.policy_temperature
        self.provider = self.inner.provider
        self.evaluations = 0
        self._cache_size = cache_size
        self.reset()

    def reset(self) -> None:
        """Empty caches (a fresh evaluator for each position)."""
        self.inner.clear_cache() if hasattr(self.inner, "clear_cache") else self.inner.cache.clear()
        self.cache = self.inner.cache
        self.search_cache = getattr(self.inner, "search_cache", None)

    def clear_cache(self) -> None:
        self.reset()

    def run(self, planes: np.ndarray):
        _, wdl, mlh = self.inner.run(planes)
        return np.ascontiguousarray(np.broadcast_to(LOGITS, (len(planes), 1858))), wdl, mlh

    def evaluate(self, requests, *, lookup: bool = True):  # the Python search of commit 6498496
        from lichessbot.engine.encoding import choose_transform, encode
        from lichessbot.engine.evaluator import Evaluation
        from lichessbot.engine.policy_map import move_indices

        planes = encode([r.history for r in requests], self.input_format, self.history_fill)
        _, wdl, _ = self.inner.run(planes)
        out = []
        for req, row in zip(requests, wdl):
            s = req.history[-1]
            idx = move_indices(req.moves, s, choose_transform(s, self.input_format))
            pri = lc0_prior_storage(lc0_softmax(LOGITS[idx], self.policy_temperature))
            w, d, l_ = (float(v) for v in row)
            ev = Evaluation(priors=pri, wdl=(w, d, l_), q=w - l_, m=0.0)
            self.cache.put(req.key, ev)
            out.append(ev)
        self.evaluations += len(requests)
        return out
