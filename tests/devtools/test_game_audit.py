"""python -m devtools.game_audit: the rows of a game, the phase and conversion tables, and Stockfish's judgement of
a real blunder (skipped without Stockfish)."""

from __future__ import annotations

import io
import json

import chess
import chess.pgn

from devtools.game_audit import audit_game, conversions, format_tables, main, phase_of, summarize

# A bench-style game: two book moves, then black misses the mate threat (3... Nf6??) and is mated.
PGN = """[White "ours"]
[Black "theirs"]
[Result "1-0"]

1. e4 { book } 1... e5 { book } 2. Qh5 { [%clk 0:00:59] } 2... Nc6 { [%clk 0:00:59] } 3. Bc4 Nf6 4. Qxf7# 1-0
"""


def _game() -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(PGN))
    assert game is not None
    return game


def _material_evaluate(board: chess.Board) -> float:
    """White's expected score from the material balance alone: 0.5 + 0.05 per pawn, clipped."""
    values = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
    bal = sum(v * (len(board.pieces(p, chess.WHITE)) - len(board.pieces(p, chess.BLACK))) for p, v in values.items())
    return min(1.0, max(0.0, 0.5 + 0.05 * bal))


def test_rows_skip_the_book_and_score_each_move_from_the_movers_side() -> None:
    seen: list[str] = []

    def evaluate(board: chess.Board) -> float:
        seen.append(board.fen())
        return _material_evaluate(board)

    rows = audit_game(_game(), evaluate, number=7)
    assert [r["ply"] for r in rows] == [2, 3, 4, 5, 6]  # plies 0 and 1 are book
    assert len(seen) == len(set(seen)) == 7, "each position not over is evaluated once (the mate is by rule)"
    assert [r["engine"] for r in rows] == ["ours", "theirs", "ours", "theirs", "ours"]
    assert all(r["loss"] == 0 for r in rows[:-1]), "material alone sees nothing before the mate"
    mate = rows[-1]
    assert (mate["before"], mate["after"], mate["loss"], mate["game"], mate["fullmove"]) == (0.5, 1.0, -0.5, 7, 4)
    assert phase_of(10) == "1-10" and phase_of(11) == "11-25" and phase_of(61) == "61+"


def _row(game: int, engine: str, white: bool, before: float, result: str) -> dict[str, object]:
    return {"game": game, "engine": engine, "white": white, "ply": 10, "fullmove": 30, "before": before,
            "after": before, "loss": 0.0, "result": result}


def test_summary_and_conversions_count_what_happened() -> None:
    rows = audit_game(_game(), _material_evaluate, number=1)
    s = summarize(rows)
    assert s[("ours", "all")]["moves"] == 3 and s[("theirs", "all")]["moves"] == 2
    assert s[("ours", "1-10")]["mean_loss"] == 0, "a gain counts as no loss"
    # Game 2: "a" (white) reached 0.9 and won; game 3: "a" (black) reached 0.9 (white "b" at 0.1) and drew;
    # game 4: "b" reached 0.95 and lost; game 5: nobody reached 0.85.
    rows = [_row(2, "a", True, 0.9, "1-0"), _row(2, "b", False, 0.1, "1-0"),
            _row(3, "b", True, 0.1, "1/2-1/2"), _row(3, "a", False, 0.5, "1/2-1/2"),
            _row(4, "b", True, 0.95, "0-1"), _row(4, "a", False, 0.3, "0-1"),
            _row(5, "a", True, 0.6, "0-1"), _row(5, "b", False, 0.6, "0-1")]
    assert conversions(rows, winning=0.85) == {"a": {"won": 1, "drawn": 1, "lost": 0},
                                               "b": {"won": 0, "drawn": 0, "lost": 1}}
    text = format_tables(rows)
    assert "a              won 1, drawn 1, lost 0" in text and "4 games" in text
    assert "26-40   a                   4" in text


def test_summarize_rereads_a_jsonl_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in audit_game(_game(), _material_evaluate, 1)))
    assert main(["--summarize", str(path)]) == 0
    assert "conversions (expected score reached 0.85), 1 games:" in capsys.readouterr().out


def test_stockfish_sees_the_mate_missed(tmp_path, capsys, stockfish_path) -> None:  # type: ignore[no-untyped-def]
    pgn = tmp_path / "g.pgn"
    pgn.write_text(PGN)
    out = tmp_path / "rows.jsonl"
    assert main([str(pgn), "--stockfish", stockfish_path, "--depth", "8", "--jsonl", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    nf6 = next(r for r in rows if r["ply"] == 5)
    assert nf6["engine"] == "theirs" and nf6["loss"] > 0.5, nf6
    assert nf6["after"] == 0.0 or nf6["after"] < 0.05
    out_text = capsys.readouterr().out
    assert "ours           won 1, drawn 0, lost 0" in out_text, out_text
