"""A deterministic evaluator for the search-equivalence fixtures (tests/search/test_search_equivalence.py).

The policy is a fixed logit per lc0 policy index, ``LOGITS[i] = ((7919 i) mod 1858) * 0.003`` (a
bijection of the indices, so two legal moves never share a prior, even after lc0's 16-bit storage);
the value is the tiny test network (tests/tinynet.py, seed 1) run on the real input planes. It drove the
Python search of commit 6498496 (through an ``evaluate`` method that computed the priors here, then
rounded them to lc0's 16-bit prior storage, lc0 src/search/classic/node.cc ``Edge::SetP``/``GetP``, as the
Rust core stores them; that method and the Python encoder it used are in git history at commit 2923088)
and drives the Rust core (``run``: raw logits and WDL for planes the core wrote).
"""

from __future__ import annotations

import numpy as np

from lichessbot.neural.evaluator import Evaluator
from lichessbot.neural.network import load_network
from lichessbot.neural.runner import NetOutputs

LOGITS = (((np.arange(1858, dtype=np.int64) * 7919) % 1858) * 0.003).astype(np.float32)


class DeterministicEvaluator:
    """Fixed-logit policy, tiny-network value."""

    def __init__(self, tiny_path: str, cache_size: int = 1_000_000) -> None:
        self.inner = Evaluator(load_network(str(tiny_path)), backend="cpu", threads=1, cache_size=cache_size)
        self.network = self.inner.network
        self.info = self.inner.info
        self.search_cache = self.inner.search_cache

    def reset(self) -> None:
        """Empty the NN cache (a fresh evaluator for each position)."""
        self.inner.clear_cache()

    def clear_cache(self) -> None:
        self.reset()

    def run(self, planes: np.ndarray, *, game: str = "", priority: int = 0, out=None) -> NetOutputs:
        _, wdl, mlh = self.inner.run(planes)
        return NetOutputs(np.ascontiguousarray(np.broadcast_to(LOGITS, (len(planes), 1858))), wdl, mlh)
