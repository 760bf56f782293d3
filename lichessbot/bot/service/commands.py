"""Operator commands while the bot runs (BotLi's console commands, in our words): one command set for the
terminal where the bot runs (:func:`read_commands` on its standard input) and for the status page
(``POST /api/command``, answered only on the local address unless ``status.remote_commands``). Every
command is logged (``operator command``: the line, where it came from, the answer).

==========================================  ==================================================================
``challenge USER [3+2|1d] [rated|casual]``  challenge a user (BotLi ``challenge``): clock in minutes+seconds,
``[white|black|random]``                    or days per move; default ``3+2 casual random``
``create COUNT USER [3+2|1d] [rated|casual]``  COUNT pairs of games with USER, one as white and one as black each,
                                            challenged one at a time: the next once the last is answered (or
                                            30 s unanswered: PENDING_TTL) and its game over (BotLi ``create``)
``rematch``                                 challenge the opponent of the last game again with its settings
                                            (BotLi ``rechallenge``)
``matchmaking on`` / ``matchmaking off``    start or pause matchmaking (BotLi ``matchmaking`` / ``stop``)
``join ARENA [PASSWORD] [TEAM]``            join an arena (with its password, or for a team battle's team)
``leave ARENA``                             withdraw from an arena and never rejoin it this run
                                            (BotLi ``leave``)
``block USER [MINUTES]``                    decline USER's challenges and never challenge USER for MINUTES
                                            (default 60; BotLi ``blacklist``, for a while)
``allow USER [MINUTES]``                    accept USER's challenges whatever the challenge rules (variant,
                                            lichess's limits and the slots still apply; BotLi ``whitelist``)
``clear``                                   end every block and allow given with these commands, and drop the
                                            challenges ``create`` has not sent yet
``reset [USER]``                            forget matchmaking's declines (of USER), so they are challenged
                                            again (BotLi ``reset``)
``quit``                                    no new games; exit once the running games are over (BotLi
                                            ``quit``); ``quit now``: exit at once
``status``                                  games running, matchmaking, arenas
``help``                                    this list
==========================================  ==================================================================

The operator's challenges are held open with ``keepAliveStream`` (lichessbot/lichess/keepalive.py) for
:data:`OPERATOR_HOLD_S` seconds, so that a person has time to answer. A challenge of ours is charged 5
credits in lichess's challenge window (a human's cost: who the user is, we do not know) unless the user is a
bot we know from the last game.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Protocol

import structlog

from lichessbot.bot.arenas.player import ArenaPlayer
from lichessbot.bot.challenges import Admission
from lichessbot.bot.games.shell import Game
from lichessbot.bot.matchmaking.matchmaker import Matchmaker
from lichessbot.lichess.client import LichessClient, LichessError
from lichessbot.lichess.events import GameFull

__all__ = ["HELP", "OperatorCommands", "read_commands"]

log = structlog.get_logger("lichessbot.bot")

#: Seconds an operator's challenge is held open by its keep-alive stream (ours).
OPERATOR_HOLD_S = 600.0

HELP = ("commands: challenge USER [3+2|1d] [rated|casual] [white|black|random]; create COUNT USER [3+2|1d] "
        "[rated|casual]; rematch; matchmaking on|off; "
        "join ARENA [PASSWORD] [TEAM]; leave ARENA; block USER [MINUTES]; allow USER [MINUTES]; clear; "
        "reset [USER]; quit [now]; status; help")

#: Seconds between two looks of ``create``'s feeder at its last challenge (ours: the service loop's pace).
FEED_S = 0.2
#: Minutes a block or an allow of the operator lasts when the command names none (ours).
DEFAULT_MINUTES = 60.0

_CLOCK = re.compile(r"^(\d+(?:\.\d+)?)\+(\d+)$")
_DAYS = re.compile(r"^(\d+)d$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{2,30}$")
_ARENA = re.compile(r"^[A-Za-z0-9]{8}$")


class Service(Protocol):
    """What the commands use of :class:`~lichessbot.bot.service.service.BotService`."""

    client: LichessClient
    admission: Admission
    games: dict[str, Game]
    matchmaker: Matchmaker | None
    arenas: ArenaPlayer
    me: str
    last_full: GameFull | None

    def stop(self) -> None: ...

    def quit(self, resign: bool | None = None) -> None: ...

    def set_matchmaking(self, on: bool) -> str: ...


def _form(words: list[str]) -> dict[str, str]:
    """The challenge form of the words after the user name. Raises ValueError naming the bad word."""
    form = {"rated": "false", "color": "random", "clock.limit": "180", "clock.increment": "2"}
    for word in words:
        w = word.lower()
        if m := _CLOCK.match(w):
            minutes, inc = float(m.group(1)), int(m.group(2))
            form.pop("days", None)
            form["clock.limit"], form["clock.increment"] = str(round(minutes * 60)), str(inc)
        elif m := _DAYS.match(w):
            form.pop("clock.limit", None)
            form.pop("clock.increment", None)
            form["days"] = m.group(1)
        elif w in ("rated", "casual"):
            form["rated"] = "true" if w == "rated" else "false"
        elif w in ("white", "black", "random"):
            form["color"] = w
        else:
            raise ValueError(f"{word!r} is not a clock (3+2), days (1d), rated/casual or a color")
    return form


class OperatorCommands:
    """Runs the commands against ``service`` (thread-safe: one command at a time)."""

    def __init__(self, service: Service):
        self.service = service
        self._lock = threading.Lock()
        self.history: list[tuple[str, str, str]] = []  # (origin, line, answer)
        #: ``create``'s challenges not sent yet, the next first: (user, form)
        self.queued: collections.deque[tuple[str, dict[str, str]]] = collections.deque()
        self._sent: str | None = None  # the id of the last challenge ``create`` sent
        self._feeder: threading.Thread | None = None  # sends ``create``'s challenges while some are queued

    def _feed(self) -> None:
        while self.queued and not self.service.admission.stopping:
            self.tick()
            time.sleep(FEED_S)

    def tick(self) -> None:
        """``create``'s next challenge once the last one is answered (not held any more) and its game, if any, is
        over (the feeder thread asks every :data:`FEED_S` seconds)."""
        with self._lock:
            if not self.queued:
                return
            sent, s = self._sent, self.service
            if sent is not None and (sent in s.admission.pending or sent in s.games):
                return
            user, form = self.queued.popleft()
            answer = self._challenge(user, form)
            m = re.search(r"challenge (\w+)$", answer)
            self._sent = m.group(1) if m else None
            self.history.append(("create", f"challenge {user}", answer))
        log.info("operator command", origin="create", command=f"challenge {user}", answer=answer,
                 left=len(self.queued))

    def run(self, line: str, origin: str) -> str:
        """Run ``line`` (from ``origin``: ``terminal`` or ``status page``); returns the answer, never raises."""
        text = " ".join(line.split())
        if not text:
            return ""
        with self._lock:
            try:
                answer = self._run(text)
            except Exception as err:  # noqa: BLE001 - a command never takes the bot down
                answer = f"failed: {err}"
            self.history.append((origin, text, answer))
        log.info("operator command", origin=origin, command=text, answer=answer)
        return answer

    def _run(self, text: str) -> str:
        word, *rest = text.split()
        cmd = word.lower()
        if cmd == "help":
            return HELP
        if cmd == "status":
            return self._status()
        if cmd == "challenge":
            if not rest or not _NAME.match(rest[0]):
                return "usage: challenge USER [3+2|1d] [rated|casual] [white|black|random]"
            try:
                form = _form(rest[1:])
            except ValueError as err:
                return str(err)
            return self._challenge(rest[0], form)
        if cmd == "rematch":
            return self._rematch()
        if cmd == "matchmaking" and rest and rest[0].lower() in ("on", "off"):
            return self.service.set_matchmaking(rest[0].lower() == "on")
        if cmd == "join" and rest and _ARENA.match(rest[0]):
            return self._join(rest[0], rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)
        if cmd == "leave" and rest and _ARENA.match(rest[0]):
            return self._leave(rest[0])
        if cmd == "create":
            return self._create(rest)
        if cmd in ("block", "allow"):
            return self._block(cmd, rest)
        if cmd == "clear":
            adm = self.service.admission
            n = len(adm.blocked_until) + len(adm.allowed_until)
            adm.blocked_until.clear()
            adm.allowed_until.clear()
            dropped, self.queued = len(self.queued), collections.deque()
            return f"cleared {n} blocks and allows, {dropped} challenges not sent"
        if cmd == "reset":
            return self._reset(rest[0] if rest else None)
        if cmd == "quit":
            if rest and rest[0].lower() == "now":
                self.service.quit()
                return "quitting now"
            self.service.stop()
            return "stopping: no new games; exiting once the running games are over"
        return f"unknown command {text!r}; {HELP}"

    def _create(self, rest: list[str]) -> str:
        usage = "usage: create COUNT USER [3+2|1d] [rated|casual]"
        if len(rest) < 2 or not rest[0].isdigit() or not _NAME.match(rest[1]) or not 0 < int(rest[0]) <= 50:
            return usage + " (COUNT: 1 to 50)"
        try:
            form = _form(rest[2:])
        except ValueError as err:
            return str(err)
        if form["color"] != "random":
            return usage + " (the colours alternate)"
        count, user = int(rest[0]), rest[1]
        for _ in range(count):
            self.queued.extend([(user, {**form, "color": "white"}), (user, {**form, "color": "black"})])
        if self._feeder is None or not self._feeder.is_alive():
            self._feeder = threading.Thread(target=self._feed, name="operator-create", daemon=True)
            self._feeder.start()
        return f"{2 * count} challenges to {user} queued ({count} pairs), one at a time"

    def _block(self, cmd: str, rest: list[str]) -> str:
        if not rest or not _NAME.match(rest[0]) or len(rest) > 2:
            return f"usage: {cmd} USER [MINUTES]"
        try:
            minutes = float(rest[1]) if len(rest) > 1 else DEFAULT_MINUTES
        except ValueError:
            return f"{rest[1]!r} is not a number of minutes"
        if not 0 < minutes <= 525_600:
            return "minutes: more than 0, at most a year"
        adm, name = self.service.admission, rest[0].lower()
        until = time.monotonic() + minutes * 60
        if cmd == "block":
            adm.blocked_until[name] = until
            adm.allowed_until.pop(name, None)
            adm.records.add(name, ("", ""), time.time() + minutes * 60)  # matchmaking: not challenged either
            return f"blocked {rest[0]} for {minutes:g} minutes"
        adm.allowed_until[name] = until
        adm.blocked_until.pop(name, None)
        return f"allowed {rest[0]} for {minutes:g} minutes"

    def _reset(self, user: str | None) -> str:
        records = self.service.admission.records
        with records.lock:
            keys = [k for k in records.until if user is None or k[0] == user.lower()]
            for k in keys:
                del records.until[k]
        self.service.admission.save_records()
        return f"forgot {len(keys)} matchmaking declines" + (f" of {user}" if user else "")

    def _status(self) -> str:
        s = self.service
        mm = "off" if s.matchmaker is None or s.matchmaker.paused else "on"
        arenas = sorted(s.arenas.joined) if s.arenas is not None else []
        return f"games running: {len(s.games)}; matchmaking {mm}; arenas: {', '.join(arenas) or 'none'}"

    def _challenge(self, user: str, form: dict[str, str], cost: int = 5) -> str:
        try:  # held open (keepAliveStream) for 10 minutes: a person may take longer than lila's 20 s to answer
            ch = self.service.client.create_kept_challenge(user, form, cost=cost, hold_s=OPERATOR_HOLD_S).challenge
        except LichessError as err:
            return f"challenge to {user} not made: {err}"
        self.service.admission.hold(ch.id)  # a stop meanwhile waits for its game
        clock = f"{form['days']}d" if "days" in form else f"{int(form['clock.limit']) / 60:g}+{form['clock.increment']}"
        rated = "rated" if form["rated"] == "true" else "casual"
        return f"challenged {user} ({clock} {rated}, {form['color']}): challenge {ch.id}"

    def _rematch(self) -> str:
        full = self.service.last_full
        if full is None:
            return "no game to rematch yet"
        me = self.service.me.lower()
        opp = full.black if (full.white.id or "").lower() == me else full.white
        name = opp.name or opp.id
        if not name or opp.ai_level is not None:
            return "the last game was not against a user"
        form = {"rated": "true" if full.rated else "false", "color": "random"}
        if full.variant in ("standard", "chess960"):
            form["variant"] = full.variant
        if full.clock is not None:
            form["clock.limit"], form["clock.increment"] = str(full.clock.initial // 1000), str(
                full.clock.increment // 1000)
        elif full.days_per_turn:
            form["days"] = str(full.days_per_turn)
        return self._challenge(name, form, cost=1 if opp.is_bot else 5)

    def _join(self, tid: str, password: str | None, team: str | None) -> str:
        arenas = self.service.arenas
        if arenas is not None:
            return str(arenas.join(tid, team=team, password=password))
        try:
            self.service.client.join_arena(tid, team, password)
        except LichessError as err:
            return f"arena {tid} not joined: {err}"
        return f"joined arena {tid}"

    def _leave(self, tid: str) -> str:
        arenas = self.service.arenas
        if arenas is not None:
            return str(arenas.leave(tid))
        try:
            self.service.client.withdraw_arena(tid)
        except LichessError as err:
            return f"arena {tid} not left: {err}"
        return f"left arena {tid}"


def read_commands(stream: IO[str], run: Callable[[str, str], str], write: Callable[[str], Any] | None = None,
                  stop: threading.Event | None = None) -> None:
    """Run each line of ``stream`` (the terminal's standard input) as a command from ``terminal`` and write the
    answer (``write``: default nothing). Returns at the end of the stream or once ``stop`` is set."""
    for line in stream:
        if stop is not None and stop.is_set():
            return
        answer = run(line, "terminal")
        if answer and write is not None:
            write(answer + "\n")
