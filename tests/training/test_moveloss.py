"""training/moveloss.py: positions from match PGNs, and Stockfish's judgement of moves."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import chess
import chess.pgn
import pytest

REPO = Path(__file__).resolve().parents[2]
STOCKFISH = "/usr/games/stockfish"


@pytest.fixture(scope="module")
def moveloss():
    spec = importlib.util.spec_from_file_location("training_moveloss", REPO / "training" / "moveloss.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pgn(path: Path, white: str, black: str, sans: list[str]) -> None:
    game = chess.pgn.Game()
    game.headers["White"], game.headers["Black"] = white, black
    node = game
    board = chess.Board()
    for san in sans:
        move = board.parse_san(san)
        node = node.add_variation(move)
        board.push(move)
    with path.open("a") as f:
        print(game, file=f, end="\n\n")


GAME = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d4", "exd4", "cxd4", "Bb4+", "Nc3", "Nxe4",
        "O-O", "Nxc3", "bxc3", "Bxc3"]


def test_positions_are_the_players_from_ply_ten(moveloss, tmp_path):
    pgn = tmp_path / "m.pgn"
    _pgn(pgn, "lichessbot", "sf", GAME)
    _pgn(pgn, "sf", "lichessbot", GAME)
    _pgn(pgn, "a", "b", GAME)  # neither side is the player: not used
    fens = moveloss.positions_from_pgns([str(pgn)], "lichessbot", 100)
    # White to move at plies 10, 12, 14, 16 of game 1; Black at 11, 13, 15, 17 of game 2 (ply 18: not recorded,
    # the game's last position is after the last move and nobody moves there in the PGN)
    assert len(fens) == 8
    assert sum(chess.Board(f).turn == chess.WHITE for f in fens) == 4
    assert all(chess.Board(f).ply() >= 10 for f in fens)
    # seeded: the same slice every time, and skip/n slice it
    assert moveloss.positions_from_pgns([str(pgn)], "lichessbot", 100) == fens
    assert moveloss.positions_from_pgns([str(pgn)], "lichessbot", 3, skip=2) == fens[2:5]


def test_paired_difference_and_its_error(moveloss):
    m, se = moveloss.paired([0.3, 0.0, 0.2, 0.1], [0.1, 0.0, 0.0, 0.1])
    assert m == pytest.approx(-0.1)  # differences -.2, 0, -.2, 0
    assert se == pytest.approx((0.04 / 3) ** 0.5 / 2)  # sample sd sqrt(4 * .01 / 3), over sqrt(4)
    with pytest.raises(ValueError, match="same positions"):
        moveloss.paired([0.1], [0.1, 0.2])


@pytest.mark.skipif(shutil.which(STOCKFISH) is None, reason="stockfish not installed")
@pytest.mark.slow
def test_a_hung_queen_loses_and_a_mate_loses_nothing(moveloss):
    hang = "rnb1kbnr/pppp1ppp/8/4p1q1/4P3/3P4/PPP2PPP/RNBQKBNR b KQkq - 0 3"  # the queen on g5 is attacked by Bc1
    mate = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#
    fens = [hang, hang, mate]
    moves = [chess.Move.from_uci("g5g4"), chess.Move.from_uci("g5f6"), chess.Move.from_uci("a1a8")]
    cache: dict[str, float] = {}
    losses = moveloss.move_losses(fens, moves, 20_000, cache, workers=2)
    assert losses[0] > 0.4  # Qg4?? Qxg4: the queen is gone (before: about even, the queen can escape)
    assert losses[1] < 0.1
    assert losses[2] == 0.0  # checkmate: the exact value 1, nothing better exists
    after_mate = chess.Board(mate)
    after_mate.push(moves[2])
    assert cache[after_mate.fen()] == 0.0  # the mated side's expected score
