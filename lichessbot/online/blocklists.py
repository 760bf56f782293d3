"""Online block lists (lichess-bot's ``challenge.online_block_list`` and ``matchmaking.online_block_list``):
plain-text files on the web, one username a line, read at start and refreshed.

Each URL is asked with the ``ETag`` of its last answer (``If-None-Match``; a 304 keeps the list), within
``timeout`` seconds; blank lines are skipped and names compared in lowercase (lichess usernames are case
insensitive). A list that cannot be read (no answer, an error status) keeps its last version and is logged
(``online block list not read``): a flaky host never unblocks anyone nor stops the bot. The bot's token
is never sent. Thread-safe: the service refreshes, the admission and the matchmaker read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import requests
import structlog

from lichessbot import __version__

__all__ = ["REFRESH_S", "OnlineBlockLists"]

log = structlog.get_logger("lichessbot.online")

#: Seconds between two refreshes (ours: lichess-bot refreshes before each challenge it judges; with the ETag
#: a refresh costs one small request a list).
REFRESH_S = 600.0


@dataclass(frozen=True)
class _List:
    names: frozenset[str]
    etag: str | None


class OnlineBlockLists:
    """The names of the lists at ``urls`` (lowercase). ``refresh()`` reads them all; ``names`` is the union."""

    def __init__(self, urls: Sequence[str], timeout: float = 10.0):
        self.urls = list(dict.fromkeys(urls))
        self.timeout = timeout
        self._lists: dict[str, _List] = {u: _List(frozenset(), None) for u in self.urls}
        self._lock = threading.Lock()
        self.failures = 0

    @property
    def names(self) -> frozenset[str]:
        """Every name of every list (lowercase)."""
        with self._lock:
            return frozenset().union(*(x.names for x in self._lists.values()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self.names

    def refresh(self) -> None:
        """Read every list again (a failed one keeps its last version). Never raises."""
        for url in self.urls:
            with self._lock:
                old = self._lists[url]
            headers = {"User-Agent": f"lichessbot/{__version__}"}
            if old.etag:
                headers["If-None-Match"] = old.etag
            try:
                r = requests.get(url, headers=headers, timeout=self.timeout)
                if r.status_code == 304:
                    continue
                r.raise_for_status()
                names = frozenset(n.strip().lower() for n in r.text.splitlines() if n.strip())
            except requests.RequestException as err:
                self.failures += 1
                log.warning("online block list not read", url=url, error=type(err).__name__,
                            kept=len(old.names))
                continue
            with self._lock:
                self._lists[url] = _List(names, r.headers.get("ETag"))
            if names != old.names:
                log.info("online block list read", url=url, names=len(names))
