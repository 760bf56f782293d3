"""The NN cache: evaluations keyed by position + repetition count, as lc0 keys them.

lc0 keeps network results in a hash table of ``NNCacheSize`` entries (default 200,000, lc0
src/neural/shared_params.cc), keyed by the position hash and repetition count but not the rule-50
counter (lc0 src/neural/memcache.cc; with the default CacheHistoryLength 0 no history enters the key).
Here the key is :func:`lichessbot.engine.encoding.position_key`. The cache is a wrapper in front of the
network, not a part of the search. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

from lichessbot.engine.types import Evaluation

__all__ = ["NNCache"]


class NNCache:
    """Bounded least-recently-used map ``key -> Evaluation``; ``capacity`` 0 disables it."""

    def __init__(self, capacity: int = 200_000) -> None:
        if capacity < 0:
            raise ValueError(f"NN cache capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._data: OrderedDict[Hashable, Evaluation] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, n_moves: int) -> Evaluation | None:
        """The cached evaluation of ``key`` if its priors cover exactly ``n_moves`` moves, else None."""
        with self._lock:
            ev = self._data.get(key)
            if ev is None or len(ev.priors) != n_moves:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return ev

    def put(self, key: Hashable, ev: Evaluation) -> None:
        """Store ``ev`` under ``key``, evicting the least recently used entries beyond the capacity."""
        if self.capacity == 0:
            return
        with self._lock:
            self._data[key] = ev
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry (lc0 does this on ``ucinewgame``) and reset the hit counters."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def hit_rate(self) -> float:
        """Hits / lookups since the last clear (0.0 before any lookup)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
