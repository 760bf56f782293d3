"""Write tests/data/lc0ref/*.jsonl: the figures the tests use from lc0's reference outputs for the Maia nets.

Source: lc0 v0.33.0-dev (LeelaChessZero/lc0 commit 909a40826db9, blas backend, on a CPU) fed the
positions below, as recorded in lc0ref_maia1100.jsonl, lc0ref_maia1100_fen.jsonl, lc0ref_maia1900.jsonl
and lc0ref_maia1900_fen.jsonl (53 positions reached from the start position and 6 given as a bare FEN).
This keeps only the fields the tests read (tests/data/lc0ref/README.md) and splits them into what does not
depend on the network (positions.jsonl: lc0's own input planes and policy indices) and what does
(maia-1100.jsonl, maia-1900.jsonl: lc0's exact network outputs and its printed priors)::

    python tests/data/lc0ref/make.py DIR_WITH_THE_LC0REF_FILES
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent
POSITION_FIELDS = ("tag", "uci_position", "rule50", "repetitions_lc0_rule", "moves_nn_index", "lc0_input_planes")
OUTPUT_FIELDS = ("tag", "uci_position", "nn_exact_blas", "moves_policy_default_temp_1.359")


def _records(src: Path, net: str) -> list[dict]:
    out = []
    for suffix in ("", "_fen"):
        out += [json.loads(line) for line in (src / f"lc0ref_{net}{suffix}.jsonl").read_text().splitlines()]
    return out


def main(src: Path) -> None:
    m1100, m1900 = _records(src, "maia1100"), _records(src, "maia1900")
    for a, b in zip(m1100, m1900):  # the planes and indices do not depend on the network
        assert all(a[k] == b[k] for k in POSITION_FIELDS), a["tag"]
    lines = [json.dumps({k: r[k] for k in POSITION_FIELDS}) for r in m1100]
    (OUT / "positions.jsonl").write_text("\n".join(lines) + "\n")
    for name, recs in (("maia-1100", m1100), ("maia-1900", m1900)):
        lines = [json.dumps({k: r[k] for k in OUTPUT_FIELDS}) for r in recs]
        (OUT / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
