"""The record of a calibration (``lichessbot calibrate``): every match it played, each game's result, its PGN.

A work directory (``--work``) holds ``<tag>.pgn`` for every match and ``matches.json`` listing them; the
record is rewritten (atomically) after each match, so a run that is stopped and started again with the same
arguments finds the matches it already played and replays none. At the end the PGNs and ``matches.json`` are
copied next to the table (:func:`matches_dir`: ``--out strength.json`` -> ``strength-matches/``).

``matches.json`` (``"format": 1``)::

    {"format": 1, "matches": [{
       "tag": "verify-e1500-r0-x6.071",  "kind": "verify" (or "sweep"),  "x": 6.071 (ladder point),
       "level": 1500 (the level verified; null in the sweep),  "settings": {"nodes": 67, "temperature": ...},
       "opponent": "sf1500",  "opponent_elo": 1500 (Stockfish's UCI_Elo),  "first_opening": 40,
       "pgn": "verify-e1500-r0-x6.071.pgn",  "games": 30,  "wins": 14,  "draws": 5,  "losses": 11,
       "results": [{"number": 1, "opening": "Ruy Lopez", "colour": "white", "result": "1-0", "score": 1.0,
                    "termination": "normal", "plies": 81}, ...]}, ...]}

``colour`` and ``score`` are ours (lichessbot's); ``result`` is the PGN's (White's view).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lichessbot.files import write_atomic
from lichessbot.strength.levels import StrengthError

__all__ = ["MATCHES_FORMAT", "GameResult", "Ledger", "MatchRecord", "matches_dir"]

#: Version of matches.json's layout.
MATCHES_FORMAT = 1


@dataclass(frozen=True)
class GameResult:
    """One game of a match. ``number``: 1-based in the schedule (each opening twice, colours swapped);
    ``colour``: ours, "white" or "black"; ``result``: the PGN result ("1-0", "0-1", "1/2-1/2"); ``score``: our
    points (1, 0.5, 0); ``termination``: the PGN Termination (normal, adjudication, time forfeit, ...);
    ``plies``: plies played by the engines (book moves excluded)."""

    number: int
    opening: str
    colour: str
    result: str
    score: float
    termination: str
    plies: int


@dataclass(frozen=True)
class MatchRecord:
    """One finished match of our engine at ladder point ``x`` against Stockfish at ``opponent_elo``.

    Attributes:
        tag: the match's name (its PGN is ``<tag>.pgn``), unique in a record.
        kind: "sweep" (a ladder point of the sweep) or "verify" (a level's verification).
        x: the ladder point (:func:`lichessbot.strength.calibrate.ladder`).
        level: the ``UCI_Elo`` of the level verified; None in the sweep.
        settings: our settings, as :meth:`lichessbot.strength.Level.settings` (nodes, temperature, ...).
        opponent: the opponent's name in the PGN.
        opponent_elo: Stockfish's ``UCI_Elo`` in this match.
        first_opening: index of the match's first opening in the openings file (they are cycled from it).
        results: the games, in schedule order.
    """

    tag: str
    kind: str
    x: float
    level: int | None
    settings: dict[str, Any]
    opponent: str
    opponent_elo: int
    first_opening: int
    results: tuple[GameResult, ...]

    @property
    def wins(self) -> int:
        return sum(g.score == 1.0 for g in self.results)

    @property
    def draws(self) -> int:
        return sum(g.score == 0.5 for g in self.results)

    @property
    def losses(self) -> int:
        return sum(g.score == 0.0 for g in self.results)

    @property
    def pgn(self) -> str:
        """The PGN's file name, next to matches.json."""
        return f"{self.tag}.pgn"

    def games(self) -> list[tuple[float, float, float]]:
        """(x, opponent Elo, our score) per game: what :func:`lichessbot.strength.fit.fit_curve` reads."""
        return [(self.x, float(self.opponent_elo), g.score) for g in self.results]

    def to_json(self) -> dict[str, Any]:
        return {"tag": self.tag, "kind": self.kind, "x": self.x, "level": self.level, "settings": self.settings,
                "opponent": self.opponent, "opponent_elo": self.opponent_elo, "first_opening": self.first_opening,
                "pgn": self.pgn, "games": len(self.results), "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "results": [asdict(g) for g in self.results]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MatchRecord:
        """The record of :meth:`to_json`; the counts (games, wins, ...) and ``pgn`` are derived, not read.

        Raises:
            KeyError, TypeError, ValueError: a field is missing or of the wrong type.
        """
        results = tuple(GameResult(**g) for g in d["results"])
        if any(g.score not in (0.0, 0.5, 1.0) for g in results):
            raise ValueError("a game's score must be 0, 0.5 or 1")
        return cls(tag=str(d["tag"]), kind=str(d["kind"]), x=float(d["x"]),
                   level=None if d["level"] is None else int(d["level"]), settings=dict(d["settings"]),
                   opponent=str(d["opponent"]), opponent_elo=int(d["opponent_elo"]),
                   first_opening=int(d["first_opening"]), results=results)


def matches_dir(out: str | Path) -> Path:
    """Where the PGNs and matches.json of the table ``out`` go: beside it, ``<stem>-matches/``."""
    p = Path(out)
    return p.with_name(f"{p.stem}-matches")


class Ledger:
    """The matches of one work directory, in the order they were played (``matches.json``).

    Raises (on construction):
        StrengthError: matches.json is not a record of this format, or the directory holds the results of an
            older ``lichessbot calibrate`` (sweep.json / verify.json without per-game results); ``--work`` named.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "matches.json"
        self.matches: list[MatchRecord] = []
        if not self.path.exists():
            old = [n for n in ("sweep.json", "verify.json") if (self.directory / n).exists()]
            if old:
                raise StrengthError(f"--work {self.directory}: {' and '.join(old)} are results of an older "
                                    "lichessbot calibrate without the games' results; use another --work directory")
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") != MATCHES_FORMAT:
                raise ValueError(f"not of format {MATCHES_FORMAT}")
            self.matches = [MatchRecord.from_json(m) for m in data["matches"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise StrengthError(f"--work {self.directory}: matches.json cannot be read ({err})") from None

    def find(self, tag: str) -> MatchRecord | None:
        """The recorded match named ``tag``, or None."""
        return next((m for m in self.matches if m.tag == tag), None)

    def add(self, record: MatchRecord) -> None:
        """Record a finished match and rewrite matches.json (a new file renamed over the old one)."""
        self.matches.append(record)
        self._write(self.path)

    def pairs(self) -> int:
        """Openings used so far: each match takes (games + 1) // 2 of them (each opening twice, colours swapped)."""
        return sum((len(m.results) + 1) // 2 for m in self.matches)

    def _write(self, path: Path) -> None:
        write_atomic(path, json.dumps({"format": MATCHES_FORMAT, "matches": [m.to_json() for m in self.matches]},
                                      indent=1) + "\n")

    def export(self, dest: str | Path) -> Path:
        """Copy every match's PGN and matches.json to ``dest`` (created); PGNs there that no recorded match names
        are removed when ``dest`` already held a matches.json (a record of an earlier run). Returns ``dest``.

        Raises:
            StrengthError: a match's PGN is missing from the work directory, or ``dest`` cannot be written.
        """
        dest = Path(dest)
        try:
            dest.mkdir(parents=True, exist_ok=True)
            if dest.resolve() != self.directory.resolve():
                names = {m.pgn for m in self.matches}
                if (dest / "matches.json").exists():
                    for old in dest.glob("*.pgn"):
                        if old.name not in names:
                            old.unlink()
                for m in self.matches:
                    src = self.directory / m.pgn
                    if not src.exists():
                        raise StrengthError(f"--work {self.directory}: {m.pgn} of match {m.tag} is missing")
                    shutil.copyfile(src, dest / m.pgn)
            self._write(dest / "matches.json")
        except OSError as err:
            raise StrengthError(f"--out: the matches directory {dest} cannot be written ({err.strerror})") from None
        return dest
