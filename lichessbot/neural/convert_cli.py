"""``lichessbot convert IN.pb.gz OUT.onnx``: convert lc0 weights to an ONNX file.

The ONNX file has ``lc0 leela2onnx``'s interface (see :mod:`lichessbot.neural.onnx_build`), so it loads
like any leela2onnx output. ONNX files do not record lc0's input format: the command prints it, and a
``.pb.gz`` file can also be used directly as ``engine.network`` (it is converted in-process).
Errors (missing, truncated or corrupt file, unsupported family) are one line, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

from lichessbot.files import write_atomic
from lichessbot.neural.lc0_weights import load_pb_gz
from lichessbot.neural.onnx_build import Lc0Net, build_model


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lichessbot convert``."""
    parser.add_argument("input", metavar="IN.pb.gz", help="lc0 weights file (.pb.gz)")
    parser.add_argument("output", metavar="OUT.onnx", help="ONNX file to write (replaced if it exists)")


def describe(net: Lc0Net) -> str:
    """One line about the network, e.g. ``6 blocks x 64 filters, SE, conv policy, WDL``."""
    parts = [f"{len(net.residual)} blocks x {net.filters} filters"]
    if any(r.se is not None for r in net.residual):
        parts.append("SE")
    parts.append("conv policy" if net.policy1 is not None else "classical policy")
    parts.append("WDL" if net.wdl else "scalar value")
    if net.moves_left is not None:
        parts.append("moves-left")
    if net.mish:
        parts.append("mish")
    return ", ".join(parts)


def run(args: argparse.Namespace) -> int:
    """Convert ``args.input`` to ``args.output``. Returns the exit status (0, or 2 on a write error)."""
    net, input_format = load_pb_gz(args.input)
    if isinstance(net, bytes):
        model, what = net, "embedded ONNX model"
    else:
        proto = build_model(net)
        onnx.checker.check_model(proto)
        model, what = proto.SerializeToString(), describe(net)
    out = Path(args.output)
    try:
        write_atomic(out, model)
    except OSError as err:
        print(f"lichessbot: cannot write {out}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({what}; lc0 input format {input_format})")
    return 0
