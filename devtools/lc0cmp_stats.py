"""What ``python -m devtools.lc0cmp`` reads and compares: lc0's ``VerboseMoveStats`` lines, one engine's root
visits on a position, and the total variation distance between two visit distributions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import chess

__all__ = ["MoveStat", "Side", "normalize_move", "parse_verbose_block", "parse_verbose_line", "tv_distance"]


# --------------------------------------------------------------------------------------------------
# Distributions
# --------------------------------------------------------------------------------------------------
def tv_distance(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Total variation distance between two visit-count maps (normalised here), over the union of keys.

    An empty map counts as all mass nowhere: TV with a non-empty map is 1 (0 when both are empty).
    """
    sa, sb = sum(a.values()), sum(b.values())
    if sa <= 0 and sb <= 0:
        return 0.0
    if sa <= 0 or sb <= 0:
        return 1.0
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.get(k, 0) / sa - b.get(k, 0) / sb) for k in keys)


@dataclass
class MoveStat:
    """One VerboseMoveStats line: ``move`` is the UCI move or ``node`` for the root line."""

    move: str
    n: int
    in_flight: int = 0
    p: float | None = None  # prior, 0..1
    q: float | None = None
    wl: float | None = None
    d: float | None = None
    u: float | None = None
    v: float | None = None
    index: int | None = None  # the network's policy index lc0 prints in brackets


_LINE = re.compile(r"^\s*(?:info\s+string\s+)?(?P<move>[a-h][1-8][a-h][1-8][qrbn]?|node)\s+"
                   r"\(\s*(?P<idx>-?\d+)\s*\)\s+N:\s*(?P<n>\d+)\s+\(\+\s*(?P<inf>\d+)\)(?P<rest>.*)$")
_FIELD = re.compile(r"\((?P<k>[A-Z]+):\s*(?P<v>[-+]?[\d.]+|-\.-+)%?\)")


def parse_verbose_line(line: str) -> MoveStat | None:
    """A VerboseMoveStats line (with or without ``info string``), or None for any other line."""
    m = _LINE.match(line)
    if m is None:
        return None
    fields: dict[str, float | None] = {}
    for f in _FIELD.finditer(m["rest"]):
        v = f["v"]
        fields[f["k"]] = None if v.startswith("-.") else float(v)
    p = fields.get("P")
    return MoveStat(move=m["move"], n=int(m["n"]), in_flight=int(m["inf"]), index=int(m["idx"]),
                    p=None if p is None else p / 100.0, q=fields.get("Q"), wl=fields.get("WL"),
                    d=fields.get("D"), u=fields.get("U"), v=fields.get("V"))


def parse_verbose_block(lines: list[str]) -> tuple[list[MoveStat], MoveStat | None]:
    """The root-move stats and the ``node`` line of the LAST complete block of VerboseMoveStats in
    ``lines`` (a block ends with its ``node`` line); lines after the last ``node`` line are ignored."""
    blocks: list[tuple[list[MoveStat], MoveStat]] = []
    cur: list[MoveStat] = []
    for line in lines:
        s = parse_verbose_line(line)
        if s is None:
            continue
        if s.move == "node":
            blocks.append((cur, s))
            cur = []
        else:
            cur.append(s)
    if not blocks:
        return cur, None
    return blocks[-1]


def normalize_move(board: chess.Board, uci: str) -> str:
    """python-chess's UCI form of a move lc0 printed: lc0's VerboseMoveStats writes castling as king
    takes rook (``e1h1``) even in standard chess; python-chess and our search write ``e1g1``."""
    try:
        return board.parse_uci(uci).uci()
    except ValueError:
        return uci


@dataclass
class Side:
    """One engine's result on one position."""

    moves: list[MoveStat]
    node: MoveStat | None
    seconds: float
    verbose: list[str] = field(default_factory=list)

    @property
    def visits(self) -> dict[str, int]:
        return {m.move: m.n for m in self.moves}

    @property
    def total(self) -> int:
        return sum(m.n for m in self.moves)

    def top(self) -> tuple[str, float]:
        t = self.total
        if not self.moves or t == 0:
            return "-", 0.0
        best = max(self.moves, key=lambda m: m.n)
        return best.move, best.n / t
