"""lichess's cloud evaluations (``online_moves.lichess_cloud_analysis``): ``GET {url}/api/cloud-eval``.

Request and answer as lichess-org/api doc/specs/tags/analysis/api-cloud-eval.yaml and
schemas/CloudEval.yaml: ``fen``, ``multiPv``, ``variant``; the answer has ``depth``, ``knodes`` and
``pvs[]``, each with ``moves`` (UCI, space-separated) and ``cp`` or ``mate`` from **white's** view; a
position without an evaluation is a 404 (an answer: no move).

The choice is lichess-bot's (lib/engine_wrapper.py ``get_lichess_cloud_move``): only evaluations of
``min_depth`` and ``min_knodes`` or more; ``best``: the first line's move (one line asked); ``good``:
five lines asked, a random one among those within ``max_score_difference`` centipawns of the best.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from lichessbot.config.online import CloudAnalysisConfig
from lichessbot.online.base import Request, WrongAnswer, expect, legal_move, load_json, position_key
from lichessbot.online.http import Answer
from lichessbot.online.types import CLOUD, OnlineMove

__all__ = ["CloudEval", "CloudLine", "CloudAnalysis"]

#: Centipawns of a mate in 0 when lines are compared (python-chess ``Score.score(mate_score=...)`` style).
MATE_CP = 100_000


@dataclass(frozen=True)
class CloudLine:
    """One line of ``pvs[]``, from the side to move's view: its moves, and ``cp`` or ``mate``."""

    moves: tuple[str, ...]
    cp: int | None
    mate: int | None

    @property
    def value(self) -> int:
        """Centipawns, a mate as +-(MATE_CP - moves)."""
        if self.mate is not None:
            return (MATE_CP - abs(self.mate)) * (1 if self.mate > 0 else -1)
        return self.cp or 0


@dataclass(frozen=True)
class CloudEval:
    """A cloud evaluation (None: the position has none, a 404)."""

    depth: int
    knodes: int
    lines: tuple[CloudLine, ...]


class CloudAnalysis:
    """Cloud evaluations as a :class:`lichessbot.online.base.Source`."""

    name = CLOUD
    lichess = True

    def __init__(self, config: CloudAnalysisConfig):
        self.config = config

    def request(self, board: chess.Board, player: str) -> Request | None:
        multipv = 1 if self.config.move_quality == "best" else 5
        variant = "chess960" if board.chess960 else "standard"
        params: dict[str, str | int] = {"fen": board.fen(), "multiPv": multipv, "variant": variant}
        return Request(f"{self.config.url}/api/cloud-eval", params, "GET /api/cloud-eval",
                       (CLOUD, multipv, variant, position_key(board)))

    def parse(self, board: chess.Board, answer: Answer) -> CloudEval | None:
        if answer.status == 404:
            return None
        data = expect(load_json(answer.text), dict, "the answer")
        fen = expect(data.get("fen"), str, "fen").split()
        ours = board.fen().split()
        # the evaluation of another position (lila may write the placement alone: the spec's CloudEval example)
        if not fen or fen[0] != ours[0] or (len(fen) > 1 and fen[1] != ours[1]):
            raise WrongAnswer("the answer's fen is another position")
        sign = 1 if board.turn == chess.WHITE else -1
        lines = []
        for pv in expect(data.get("pvs"), list, "pvs"):
            pv = expect(pv, dict, "a line")
            moves = tuple(expect(pv.get("moves"), str, "moves").split())
            cp, mate = expect(pv.get("cp"), (int, type(None)), "cp"), expect(pv.get("mate"), (int, type(None)), "mate")
            if not moves or (cp is None) == (mate is None):
                raise WrongAnswer("a line without moves, or without exactly one of cp and mate")
            lines.append(CloudLine(moves, None if cp is None else sign * cp, None if mate is None else sign * mate))
        return CloudEval(expect(data.get("depth"), int, "depth"), expect(data.get("knodes"), int, "knodes"),
                         tuple(lines))

    def choose(self, board: chess.Board, parsed: CloudEval | None, rng: random.Random) -> OnlineMove | None:
        c = self.config
        if parsed is None or not parsed.lines or parsed.depth < c.min_depth or parsed.knodes < c.min_knodes:
            return None
        line = parsed.lines[0]
        if c.move_quality == "good":
            best = max(x.value for x in parsed.lines)
            line = rng.choice([x for x in parsed.lines if x.value >= best - c.max_score_difference])
        move = legal_move(board, line.moves[0])
        said = f"mate {line.mate}" if line.mate is not None else f"{(line.cp or 0) / 100:+.2f}"
        note = f"cloud eval: {said}, depth {parsed.depth}, {parsed.knodes:,} knodes"
        return OnlineMove(CLOUD, note, move, cp=line.cp, mate=line.mate, depth=parsed.depth)
