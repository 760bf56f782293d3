"""Challenge answers, posted from their own thread: a paced or 429-paused answer never stalls the event
stream. Each verdict is logged and shown on the status page when it is queued."""

from __future__ import annotations

import queue
from collections.abc import Callable

import structlog

from lichessbot.bot.challenges.filter import Verdict
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import Challenge, DeclineReason
from lichessbot.status import StatusHub

__all__ = ["ChallengeAnswers"]

log = structlog.get_logger("lichessbot.bot")


class ChallengeAnswers:
    """The answer queue and its worker (``run``, in a thread of the service; ``close`` ends it).

    Args:
        client: posts the accept or decline.
        status: the status page's hub (each verdict is noted there), or None.
        on_failure: called with the challenge id and the error when an answer could not be posted (the
            service frees the slot it held, and forgets the answer unless lichess refused it for good).
    """

    def __init__(self, client: LichessClient, status: StatusHub | None,
                 on_failure: Callable[[str, LichessError], None]) -> None:
        self._client, self._status, self._on_failure = client, status, on_failure
        self._queue: queue.Queue[tuple[str, bool, DeclineReason | None] | None] = queue.Queue()
        self._canceled: set[str] = set()

    def answer(self, ch: Challenge, v: Verdict) -> None:
        """Log the verdict on challenge ``ch``, show it on the status page and queue its answer."""
        cid = ch.id
        challenger = ch.challenger_name or "?"
        log.info("challenge", challenge_id=cid, challenger=challenger, speed=ch.speed, variant=ch.variant,
                 rated=ch.rated, rematch_of=ch.rematch_of, accept=v.accept, reason=v.reason, why=v.why or None)
        if self._status is not None:
            self._status.note_challenge(cid, challenger, ch.speed, v.accept, v.reason, v.why or None)
        self._queue.put((cid, v.accept, v.reason))

    def canceled(self, cid: str) -> None:
        """The challenger canceled (or lichess declined) challenge ``cid``: a queued answer to it is dropped."""
        self._canceled.add(cid)

    def run(self) -> None:
        """Post the queued answers until :meth:`close`."""
        while (item := self._queue.get()) is not None:
            cid, accept, reason = item
            if cid in self._canceled:
                log.info("challenge canceled before our answer", challenge_id=cid)
                continue
            try:
                if accept:
                    self._client.accept_challenge(cid)
                else:
                    self._client.decline_challenge(cid, reason or DeclineReason.GENERIC)
            except LichessError as err:
                log.warning("challenge answer failed", challenge_id=cid, error=str(err))
                self._on_failure(cid, err)

    def close(self) -> None:
        """End :meth:`run` once the answers queued before are posted."""
        self._queue.put(None)
