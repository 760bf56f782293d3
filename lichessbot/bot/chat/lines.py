"""Chat off the move's path: a background sender, the eval line, the greetings (the ``!`` commands are
:mod:`lichessbot.bot.chat.commands`'s).

Games only *enqueue* lines; one sender thread posts them in order. A slow or failing chat call (lichess
answers 400 when a chat is closed, 429 when too fast) is logged and dropped: it never delays a move.
Lines are cut to lichess's 140 UTF-16 units, and a line with a link is never posted (lichess drops a bot's
links silently: :mod:`lichessbot.bot.chat.line_limits`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import chess
import structlog

from lichessbot.bot.chat.line_limits import MAX_UNITS, fit, has_link, utf16_units
from lichessbot.config import GreetingConfig
from lichessbot.thinker import Decision

__all__ = ["MAX_CHAT", "ChatSender", "eval_line", "greetings_with_links", "render_greeting"]

#: lichess's limit on a chat line (UTF-16 units: :data:`lichessbot.bot.chat.line_limits.MAX_UNITS`).
MAX_CHAT = MAX_UNITS
log = structlog.get_logger("lichessbot.chat")


class ChatSender:
    """A daemon thread posting ``(game_id, room, text)`` with ``post(game_id, room, text)``.

    ``send`` never blocks and never raises. At most ``max_queued`` lines wait; more are dropped (logged
    as ``request dropped``), so a slow or rate-limited chat never builds a backlog. A line with a link is
    not sent (``refused``; logged ``chat line not sent``): lichess would answer 200 and drop it.
    """

    def __init__(self, post: Callable[[str, str, str], None], max_queued: int = 20):
        self._post = post
        self._q: queue.Queue[tuple[str, str, str] | None] = queue.Queue()
        self.max_queued = max_queued
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="chat", daemon=True)
        self.sent = 0
        self.failed = 0
        self.refused = 0  # lines with a link, never posted
        self._closing = threading.Event()
        self._thread.start()

    def send(self, game_id: str, room: str, text: str) -> None:
        """Queue ``text`` (cut to 140 UTF-16 units) for ``room`` ("player" or "spectator"); a line with a
        link is refused (lichess drops it silently)."""
        text = fit(text)
        if not text:
            return
        if has_link(text):
            self.refused += 1
            log.warning("chat line not sent", game_id=game_id, room=room,
                        reason="it has a link: lichess drops a bot's chat lines with links (ChatApi.makeLine)")
            return
        if self._q.qsize() >= self.max_queued:
            self.dropped += 1
            log.warning("request dropped", game_id=game_id, room=room, reason=f"{self.max_queued} chat lines "
                        "already waiting")
            return
        self._q.put((game_id, room, text))

    def _run(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            if self._closing.is_set():  # close() timed out: drop the rest
                self.failed += 1
                continue
            game_id, room, text = item
            try:
                self._post(game_id, room, text)
                self.sent += 1
            except Exception as err:  # noqa: BLE001 - chat must never take anything down
                self.failed += 1
                log.warning("chat not sent", game_id=game_id, room=room, error=str(err))

    def close(self, timeout: float = 2.0) -> None:
        """Send what is queued (up to ``timeout`` seconds), then stop; lines still queued then are dropped.

        A post in flight at the deadline finishes in the background (its retries end when the client
        closes).
        """
        self._q.put(None)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._closing.set()
            log.warning("chat lines dropped at shutdown", queued=self._q.qsize())


def _pv_san(board: chess.Board, pv: tuple[chess.Move, ...], limit: int) -> list[str]:
    b = board.copy(stack=False)
    out: list[str] = []
    for m in pv[:limit]:
        if m not in b.legal_moves:
            break
        out.append(b.san(m))
        b.push(m)
    return out


def _si(x: float) -> str:
    return f"{x / 1e6:.1f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e4 else f"{x:.0f}"


def eval_line(decision: Decision, board: chess.Board) -> str:
    """One chat line (<= 140 characters) for our move ``decision`` played in ``board`` (before the move).

    Search: ``eval +0.35 | W 41% D 33% L 26% | nodes 1.2k (reused 300) nps 850 depth 6/14 | pv Nf3 d5 ...``
    (score in pawns and W/D/L from white's side, as lichess shows every eval: its analysis board, its PGN's
    ``[%eval]``; from the search's centipawns, lc0's formula; nodes, nps, depth and seldepth
    lc0's, :class:`lichessbot.search.SearchStats`, the nodes kept from the previous tree apart). Book: ``book
    move Nf3``. Tablebase (local or online): ``tablebase win, DTZ 13 | Kf2``. Online book: ``explorer:
    masters, 1,234 games, 42% score | e4``. A search kept to the online tables' moves starts with their note.
    """
    if decision.source == "book":
        return f"book move {board.san(decision.move)}"
    if decision.source in ("online_book", "tablebase", "online_tablebase"):
        return fit(f"{decision.note or decision.source} | {board.san(decision.move)}")
    sc = decision.score
    if sc is None:
        parts = ["eval ?"]
    else:
        sign = 1 if board.turn == chess.WHITE else -1  # the search's score is the mover's: white's side here
        parts = [f"mate {sign * sc.mate:+d}" if sc.mate is not None else f"eval {sign * sc.cp / 100:+.2f}"]
        w, d, l = (round(100 * x) for x in (sc.wdl if sign == 1 else sc.wdl[::-1]))
        parts.append(f"W {w}% D {d}% L {l}%")
    reused = f" (reused {_si(decision.reused_nodes)})" if decision.reused_nodes else ""
    depth = f"depth {decision.depth}/{decision.seldepth}"
    parts.append(f"nodes {_si(decision.nodes)}{reused} nps {_si(decision.nps)} {depth}")
    if decision.note and decision.note != "fallback":
        parts.insert(0, decision.note)
    head = " | ".join(parts)
    for n in range(8, 0, -1):
        pv = _pv_san(board, decision.pv or (decision.move,), n)
        line = f"{head} | pv {' '.join(pv)}"
        if utf16_units(line) <= MAX_CHAT:
            return line
    return fit(head)


def greetings_with_links(greeting: GreetingConfig) -> list[str]:
    """The ``greeting`` keys whose text has a link (lichess would drop those lines: they are never sent)."""
    return [key for key, text in greeting.model_dump().items() if isinstance(text, str) and has_link(text)]


def render_greeting(template: str, **values: str) -> str:
    """``template`` with ``{me}``/``{opponent}`` replaced. Never raises: the config checks templates at load
    (:func:`lichessbot.config.check_template`); an unknown placeholder or a stray brace that slips
    through is left as written."""
    class _Keep(dict[str, str]):
        def __missing__(self, key: str) -> str:
            return "{" + key + "}"
    try:
        return template.format_map(_Keep(values))
    except (ValueError, IndexError, AttributeError, KeyError):
        return template
