"""Turn generated games into packed training arrays (step 2, run by train.py automatically).

For every ``raw/*.jsonl`` shard, ``prepare`` writes ``packed/<name>.npz`` (redone when the shard grew):

* ``planes``: uint8 [N, 112, 8] -- the 112 input planes as bitboards, one byte per rank
  (np.packbits(..., bitorder="little") of the [112, 64] 0/1 planes); plane 109 is stored as zeros;
* ``rule50``: uint8 [N] -- the value of plane 109 (the halfmove clock, raw plies: classical format);
* ``pol_idx``: int16 [N, K] -- lc0 policy indices of the MultiPV moves (-1 = padding);
* ``pol_p``: float32 [N, K] -- their target probabilities;
* ``wdl``: float32 [N, 3] -- the value target: ``a * stockfish_wdl + (1 - a) * game_result`` (side to move).

Planes and policy indices come from the search core's own encoder and policy map
(``lichessbot._core.encode_plies``: every position of a game with the history before it, lc0's repetition
rule, input format 1 and the search's default ``history_fill``, "fen_only": games from the standard
position get no fill, games recorded from a FEN (``"fen"`` in the game line) get the FEN position
repeated, exactly as a match opening or a lichess "from position" game is fed), so training inputs are
what the engine feeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess
import numpy as np

from lichessbot import _core
from lichessbot.config import SearchParams

K = 5
#: lc0's HistoryFill as the engine plays (the search's default, "fen_only"): a game recorded from a FEN gets
#: its missing history filled with copies of the FEN position, a game from the start position gets none.
FILL = SearchParams().history_fill
#: value target = SF_WEIGHT · Stockfish WDL + (1 − SF_WEIGHT) · game result (train.py --sf-weight)
SF_WEIGHT = 0.7
RESULT_WDL = {"1-0": (1.0, 0.0, 0.0), "0-1": (0.0, 0.0, 1.0), "1/2-1/2": (0.0, 1.0, 0.0)}


def encoder_name() -> str:
    """Marks packed files with the encoder and fill they were made with (a change repacks them)."""
    return f"lichessbot._core.encode_plies:{FILL}"


def encode_game(game: dict[str, Any], sf_weight: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Planes (float32 [n,112,8,8]), policy idx/probs and WDL targets for the recorded positions of a game."""
    fen = game.get("fen", chess.STARTING_FEN)
    all_planes, legal = _core.encode_plies(fen, list(game["moves"]), input_format=1, history_fill=FILL)
    first_turn = chess.Board(fen).turn
    res = RESULT_WDL[game["result"]]
    rows, idx, probs, wdls = [], [], [], []
    for rec in game["positions"]:
        ply = rec["ply"]
        rows.append(ply)
        where = dict(legal[ply])  # UCI of each legal move -> its policy index
        ii = np.full(K, -1, np.int16)
        pp = np.zeros(K, np.float32)
        for j, (m, p) in enumerate(zip(rec["moves"][:K], rec["probs"][:K])):
            ii[j] = where[m]
            pp[j] = p
        pp /= pp.sum()
        idx.append(ii)
        probs.append(pp)
        white = first_turn == chess.WHITE if ply % 2 == 0 else first_turn == chess.BLACK
        stm_res = res if white else res[::-1]
        sf = np.array(rec["wdl"], np.float32) / 1000.0 if rec.get("wdl") else np.array(stm_res, np.float32)
        wdls.append(sf_weight * sf + (1 - sf_weight) * np.array(stm_res, np.float32))
    if not rows:
        return None
    return all_planes[rows], np.stack(idx), np.stack(probs), np.stack(wdls)


def pack_planes(planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 [N,112,8,8] -> (uint8 [N,112,8] bits, uint8 [N] rule50)."""
    rule50 = planes[:, 109, 0, 0].astype(np.uint8)
    bits = planes != 0
    bits[:, 109] = False
    packed = np.packbits(bits.reshape(len(planes), 112, 64), axis=2, bitorder="little")
    return packed, rule50


def unpack_planes(packed: np.ndarray, rule50: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_planes`: float32 [N,112,8,8]."""
    bits = np.unpackbits(packed, axis=2, bitorder="little").astype(np.float32)
    bits = bits.reshape(len(packed), 112, 8, 8)
    bits[:, 109] = rule50[:, None, None]
    return bits


def _pack_shard(shard: Path, target: Path, n_games: int, sf_weight: float) -> str:
    lines = shard.read_text().splitlines()[:n_games]
    parts = [enc for enc in (encode_game(json.loads(ln), sf_weight) for ln in lines) if enc is not None]
    planes = np.concatenate([p[0] for p in parts])
    bits, r50 = pack_planes(planes)
    tmp = target.with_suffix(".tmp.npz")
    np.savez(tmp, planes=bits, rule50=r50, pol_idx=np.concatenate([p[1] for p in parts]),
             pol_p=np.concatenate([p[2] for p in parts]), wdl=np.concatenate([p[3] for p in parts]),
             n_games=np.int64(n_games), encoder=np.str_(encoder_name()))
    tmp.replace(target)
    return f"packed {shard.name}: {n_games} games, {len(planes)} positions"


def prepare(data_dir: Path, sf_weight: float = SF_WEIGHT, log: Callable[[str], object] = print,
            workers: int = 1) -> list[Path]:
    """Pack every raw shard that is new or grew, with ``workers`` processes; return the packed files."""
    raw = data_dir / "raw"
    packed_dir = data_dir / ("packed" if sf_weight == SF_WEIGHT else f"packed-sf{sf_weight:g}")
    packed_dir.mkdir(parents=True, exist_ok=True)
    out, todo = [], []
    for shard in sorted(raw.glob("*.jsonl")):
        target = packed_dir / (shard.stem + ".npz")
        n_games = sum(1 for ln in shard.read_text().splitlines() if ln.endswith("}"))
        out.append(target)
        if target.exists():
            with np.load(target) as z:
                if int(z["n_games"]) >= n_games and str(z["encoder"]) == encoder_name():
                    continue
        todo.append((shard, target, n_games, sf_weight))
    if workers > 1 and len(todo) > 1:
        import multiprocessing  # noqa: PLC0415

        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            for msg in pool.starmap(_pack_shard, todo):
                log(msg)
    else:
        for job in todo:
            log(_pack_shard(*job))
    return out


def mirror_permutation() -> np.ndarray:
    """int64 [1858]: the policy index of each lc0 move mirrored left-right (files a<->h).

    The table (``lichessbot._core.POLICY_MOVES``, built as in docs/lc0-conventions.md §4) is every queen-line
    and knight move plus the promotions from the mover's view, so it is closed under the mirror and this is a
    permutation; the mirror is the square map of lc0's "Flip" transform (files a<->h, transform bit 1).
    It is only a valid label transform for positions without castling rights: castling is the one rule
    that is not left-right symmetric. Raises KeyError if a mirrored entry were missing from the table.
    """
    moves = _core.POLICY_MOVES
    where = {m: i for i, m in enumerate(moves)}
    mirror_file = str.maketrans("abcdefgh", "hgfedcba")
    return np.array([where[m[:4].translate(mirror_file) + m[4:]] for m in moves], np.int64)


def mirror_augment(planes: np.ndarray, pol_idx: np.ndarray, rng: np.random.Generator, p: float = 0.5,
                   perm: np.ndarray | None = None) -> int:
    """Mirror (files a<->h), in place and with probability ``p`` each, the positions that have no castling
    rights: the rules, Stockfish's evaluation and so the targets are left-right symmetric there.

    ``planes``: float32 [B,112,8,8] (square = rank * 8 + file, so the last axis is the file; planes 104..107
    are the castling planes, docs/lc0-conventions.md §1); ``pol_idx``: int [B,K] lc0 policy indices, -1 = padding.
    The WDL target needs no change. Returns how many positions were mirrored.
    """
    perm = mirror_permutation() if perm is None else perm
    rows = np.flatnonzero((planes[:, 104:108].reshape(len(planes), -1).max(1) == 0)
                          & (rng.random(len(planes)) < p))
    if rows.size:
        planes[rows] = planes[rows][..., ::-1]
        sub = pol_idx[rows]
        pol_idx[rows] = np.where(sub >= 0, perm[np.maximum(sub, 0)], -1)
    return int(rows.size)


def load_all(files: list[Path]) -> dict[str, np.ndarray]:
    arrays: dict[str, list[np.ndarray]] = {k: [] for k in ("planes", "rule50", "pol_idx", "pol_p", "wdl")}
    for f in files:
        with np.load(f) as z:
            for k in arrays:
                arrays[k].append(z[k])
    return {k: np.concatenate(v) for k, v in arrays.items()}
