"""How ``lichessbot play`` stops: SIGTERM (``docker stop``, ``systemctl stop``) and SIGINT (Ctrl-C) handled
from the first line of the command, and one stop policy that fits a supervisor's grace period.

The policy (docs/bot.md, "Stopping"):

* A signal during start-up (the config, the token test, the engine loading) ends the command at once:
  nothing is running yet, so nothing is left behind (exit status 0).
* The first signal once the bot plays: no new games at once (challenges declined with ``later``, the queue
  declined, matchmaking and arenas stopped; the records are on disk, written at each change). The running
  games play on; the bot exits when they are over, or, with a grace period (``--stop-grace-period``, Docker's
  ``stop_grace_period``), ``QUIT_RESERVE`` s before it ends: the games still running are left on lichess
  (resigned only with ``resign_on_quit``) and the next start resumes them (lichess sends their
  ``gameStart`` again). A search under way is cut short and its move posted first, so no game is left
  half-way through our move. ``quit_after_all_games_finish: false``: the first signal leaves at once.
* A second signal leaves the games at once.
* ``EXIT_RESERVE`` s before the grace period ends the process exits whatever still runs (status 1, logged):
  the supervisor's SIGKILL never comes.

Imports nothing of the bot but its logging: the service is handed in (:class:`Stoppable`).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Protocol

import structlog

__all__ = ["EXIT_RESERVE", "GRACE_ENV", "QUIT_RESERVE", "StartupStopped", "StopPolicy", "Stoppable", "grace_default"]

log = structlog.get_logger("lichessbot.bot")

#: The environment variable read as ``--stop-grace-period`` when that is not given (the image sets it).
GRACE_ENV = "LICHESSBOT_STOP_GRACE_PERIOD"
#: Seconds before the end of the grace period at which the running games are left: what leaving takes
#: (a cut search, its move posted, every thread joined, the engine and the status page closed).
QUIT_RESERVE = 3.0
#: Seconds before the end of the grace period at which the process exits, whatever still runs.
EXIT_RESERVE = 0.5


class StartupStopped(BaseException):
    """A signal came before the bot played (a BaseException, as KeyboardInterrupt: no ``except Exception``
    on the way swallows it). ``signum``: the signal."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Stoppable(Protocol):
    """What the policy needs of the bot service."""

    def stop(self) -> None:
        """No new games; return from ``run`` once the running ones are over."""
        ...

    def quit(self, resign: bool | None = None) -> None:
        """Return from ``run`` now, the games left running (or resigned with ``resign_on_quit``)."""
        ...

    def busy(self) -> int:
        """Games running plus accepted challenges not started yet."""
        ...


def grace_default() -> float | None:
    """``LICHESSBOT_STOP_GRACE_PERIOD`` in seconds (None when unset or empty).

    Raises:
        ValueError: not a positive number (argparse reports it as a bad ``--stop-grace-period``).
    """
    raw = os.environ.get(GRACE_ENV, "").strip().removesuffix("s")
    if not raw:
        return None
    value = float(raw)
    if not value > 0:
        raise ValueError(f"{GRACE_ENV}: {raw}: not a positive number of seconds")
    return value


class StopPolicy:
    """The signal handlers of ``lichessbot play`` and the stop policy above.

    ``install()`` first thing (signals then raise :class:`StartupStopped` in the main thread);
    ``attach(service, ...)`` once the service exists (signals then stop or quit it). ``grace_s``: the
    supervisor's grace period in seconds (None: no deadline, the games are finished).
    """

    def __init__(self, grace_s: float | None = None):
        self.grace_s = grace_s
        self.signals = 0
        self._service: Stoppable | None = None
        self._finish_games = True
        self._resign = False
        self._local = False
        self._timers: list[threading.Timer] = []

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)

    def attach(self, service: Stoppable, *, finish_games: bool, resign: bool, local: bool = False) -> None:
        """From now on a signal stops ``service``. ``finish_games``: ``quit_after_all_games_finish``;
        ``resign``: ``resign_on_quit`` (for the log line; the service resigns); ``local``: ``play --local``,
        whose lichess is in this process and stops with it (for the log line)."""
        self._finish_games, self._resign, self._local = finish_games, resign, local
        self._service = service

    def _left(self) -> str:
        """What becomes of the games the bot leaves, in the log lines' words."""
        if self._resign:
            return "resigned or aborted"
        if self._local:  # the embedded lichess stops with the process: its games end unfinished, unsaved
            return "ended unfinished with the embedded lichess, which stops with this process (no PGN is saved)"
        return "left running on lichess for the next start"

    def cancel(self) -> None:
        """Cancel the deadlines (the command returned on its own)."""
        for t in self._timers:
            t.cancel()

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.signals += 1
        name = signal.Signals(signum).name
        service = self._service
        if service is None:
            raise StartupStopped(signum)
        leave = self._left()
        if self.signals == 1 and self._finish_games:
            deadline = None if self.grace_s is None else max(0.0, self.grace_s - QUIT_RESERVE)
            log.warning("stopping: no new games, no matchmaking; the running games play on "
                        + ("until they end" if deadline is None else f"for at most {deadline:.1f} s")
                        + f", then are {leave} (signal again: at once)", signal=name, games=service.busy())
            service.stop()
            if deadline is not None and self.grace_s is not None:
                self._later(deadline, self._leave_games)
                self._later(max(0.0, self.grace_s - EXIT_RESERVE), self._exit_now)
        else:
            log.warning(f"quitting: running games {leave}", signal=name, games=service.busy())
            service.quit()
            if self.signals == 1 and self.grace_s is not None:
                self._later(max(0.0, self.grace_s - EXIT_RESERVE), self._exit_now)

    def _later(self, seconds: float, action: Callable[[], None]) -> None:
        t = threading.Timer(seconds, action)
        t.daemon = True
        t.start()
        self._timers.append(t)

    def _leave_games(self) -> None:
        service = self._service
        if service is None:
            return
        if service.busy():
            log.warning("grace period ending: leaving the running games", games=service.busy(),
                        left=self._left())
        service.quit()

    def _exit_now(self) -> None:
        log.error("grace period over and the bot still stopping: exiting now", grace_s=self.grace_s)
        os._exit(1)
