"""Local matches between two UCI engines (``lichessbot match``), also usable from Python.

Python API (used by ``lichessbot bench timeman`` and strength measurements)::

    from lichessbot.match import EngineSpec, MatchConfig, TimeControl, run_match

    ours = EngineSpec("lichessbot", options={"WeightsFile": "net.onnx"}, tc=TimeControl(nodes=400))
    sf = EngineSpec("stockfish", ["/usr/games/stockfish"], {"Skill Level": 0}, TimeControl(movetime=0.05))
    result = run_match(MatchConfig(ours, sf, games=10, pgn_path="match.pgn"))
    print(result.wins, result.draws, result.losses, result.elo.diff, result.elo.margin)
"""

from lichessbot.match.cli import add_arguments, run
from lichessbot.match.elo import EloEstimate, elo_estimate
from lichessbot.match.engine_game import EnginePlayer, play_game
from lichessbot.match.openings import Opening, load_openings
from lichessbot.match.runner import run_match, schedule
from lichessbot.match.types import (
    Adjudication,
    EngineSpec,
    GameRecord,
    MatchConfig,
    MatchError,
    MatchResult,
    TimeControl,
    our_engine_command,
)

__all__ = [
    "Adjudication",
    "EloEstimate",
    "EngineSpec",
    "EnginePlayer",
    "GameRecord",
    "MatchConfig",
    "MatchError",
    "MatchResult",
    "Opening",
    "TimeControl",
    "add_arguments",
    "elo_estimate",
    "load_openings",
    "our_engine_command",
    "play_game",
    "run",
    "run_match",
    "schedule",
]
