"""A challenge of ours held open with ``keepAliveStream=true`` (``POST /api/challenge/{username}``).

lila answers such a challenge with an NDJSON stream (lila modules/challenge/src/main/ChallengeKeepAliveStream.scala):
the challenge's JSON first (the same as the plain answer), then, once it is answered, one line
``{"done": "accepted" | "declined" | "canceled"}`` and the end. While the connection lives lila pings the
challenge every 15 s, so it is never marked offline (a real-time challenge not seen for 20 s is,
``ChallengeApi.sweep``). The verdict comes on this stream as soon as lila has it, before the event stream's
``gameStart`` or ``challengeDeclined`` may arrive: the matchmaker cancels a challenge only while no verdict
has come (a cancel that reaches lila after the acceptance aborts the new game: ``Challenge.apiCancel``).

Closing the stream does not cancel the challenge (lila only stops pinging it); :meth:`KeptChallenge.close`
is for after a verdict or a cancel. Imports nothing of the project but the wire's values.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import requests
import structlog

from lichessbot.lichess.events import Challenge

__all__ = ["ACCEPTED", "CANCELED", "DECLINED", "KeptChallenge"]

log = structlog.get_logger("lichessbot.lichess")

ACCEPTED, DECLINED, CANCELED = "accepted", "declined", "canceled"


class KeptChallenge:
    """Our challenge ``challenge`` and the open keep-alive stream ``response`` (read by its own thread from the
    line after the challenge). ``done`` is lila's verdict (None: none yet); ``answered`` is set with it, or
    when the stream ends without one (``lost``)."""

    def __init__(self, challenge: Challenge, response: requests.Response, lines: Iterator[bytes]):
        self.challenge = challenge
        self._response = response
        self._lines = lines
        self.done: str | None = None
        self.lost = False  # the stream ended without a verdict
        self.answered = threading.Event()
        self._thread = threading.Thread(target=self._read, name=f"challenge-{challenge.id}", daemon=True)
        self._thread.start()

    @property
    def id(self) -> str:
        return self.challenge.id

    def _read(self) -> None:
        try:
            for raw in self._lines:
                if not raw or not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                done = line.get("done") if isinstance(line, dict) else None
                if isinstance(done, str):
                    self.done = done
                    log.info("challenge answered", challenge_id=self.id, done=done)
                    return
        except (requests.RequestException, OSError, ValueError, AttributeError):
            pass  # a closed or broken stream: no verdict from it
        finally:
            if self.done is None:
                self.lost = True
            self.answered.set()
            self._response.close()

    def wait(self, timeout: float) -> str | None:
        """lila's verdict within ``timeout`` seconds (None: none)."""
        self.answered.wait(timeout)
        return self.done

    def close(self) -> None:
        """Close the stream (lila stops pinging the challenge; it does not cancel it). Never raises."""
        try:
            self._response.close()
        except Exception:  # noqa: BLE001 - closing a dead connection
            pass
