"""A running search as seen from outside: :class:`SearchHandle` (stop, wait, ponderhit, done)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from lichessbot.search.types import SearchResult, SearchStats, Stopper

__all__ = ["InfoCallback", "SearchHandle"]

InfoCallback = Callable[[SearchStats], None]


class _State:
    """Shared between a running search and its handle."""

    def __init__(self, stopper: Stopper | None, ponder: bool, on_info: InfoCallback | None) -> None:
        self.stopper = stopper
        self.pondering = ponder
        self.on_info = on_info
        self.stop_event = threading.Event()
        self.ready = threading.Event()  # set once ``result`` or ``error`` is known
        self.t0 = time.perf_counter()
        self.result: SearchResult | None = None
        self.error: BaseException | None = None
        self.lock = threading.Lock()


class SearchHandle:
    """A running search: ``stop()``, ``wait()``, ``ponderhit()``, ``done``."""

    def __init__(self, state: _State, thread: threading.Thread) -> None:
        self._state = state
        self._thread = thread

    def stop(self) -> None:
        """Ask the search to stop after the batch under way; ``wait()`` then returns at once."""
        self._state.stop_event.set()

    def wait(self, timeout: float | None = None) -> SearchResult:
        """The result, as soon as the search has stopped (the batches still at the network are backed up
        after it, lc0 sends its bestmove the same way). Raises TimeoutError if ``timeout`` (seconds) passes,
        and re-raises an error of the search thread."""
        if not self._state.ready.wait(timeout):
            raise TimeoutError("the search is still running")
        if self._state.error is not None:
            raise self._state.error
        assert self._state.result is not None
        return self._state.result

    def ponderhit(self, stopper: Stopper | None) -> None:
        """The opponent played the pondered move: the search goes on under ``stopper`` (None: until
        ``stop()``); the time manager's stoppers count their time from their creation."""
        s = self._state
        with s.lock:
            s.stopper = stopper
            s.pondering = False

    def join(self) -> None:
        """Wait until the search thread has ended (its last batches backed up): the tree is free again."""
        if threading.current_thread() is not self._thread:
            self._thread.join()

    @property
    def done(self) -> bool:
        """The search thread has ended."""
        return not self._thread.is_alive()
