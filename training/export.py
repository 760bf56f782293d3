"""Export a checkpoint to ONNX with Lc0's interface and check it against PyTorch (step 3).

Writes an ONNX model (opset 17, IR version 8) with input ``/input/planes`` float32 [batch, 112, 8, 8] and
outputs ``/output/policy`` float32 [batch, 1858] (raw logits, lc0 order) and ``/output/wdl`` float32
[batch, 3] (softmaxed, side to move). Then runs onnxruntime and PyTorch on the same inputs (real training
positions when packed data exists, else random 0/1 planes) and fails unless they agree within 1e-4.
``--install`` copies the result to lichessbot/data/default.onnx.

Usage::

    python training/export.py training/runs/r1/ckpt.pt --out training/runs/r1/net.onnx --install
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dataset  # noqa: E402
from model import ExportWrapper, Net  # noqa: E402

DEFAULT_TARGET = HERE.parent / "lichessbot" / "data" / "default.onnx"


def load_checkpoint(ckpt_path: Path) -> tuple[dict[str, Any], ExportWrapper]:
    """The checkpoint dict written by train.py and its network in eval mode, wrapped for export."""
    ck = torch.load(ckpt_path)
    net = Net(ck["blocks"], ck["channels"])
    net.load_state_dict(ck["model"])
    return ck, ExportWrapper(net).eval()


def export(ckpt_path: Path, out: Path) -> onnx.ModelProto:
    ck, wrapper = load_checkpoint(ckpt_path)
    buf = io.BytesIO()
    torch.onnx.export(wrapper, (torch.zeros(1, 112, 8, 8),), buf, input_names=["/input/planes"],
                      output_names=["/output/policy", "/output/wdl"], opset_version=17,
                      dynamic_axes={"/input/planes": {0: "batch"}, "/output/policy": {0: "batch"},
                                    "/output/wdl": {0: "batch"}},
                      do_constant_folding=True, dynamo=False)
    model = onnx.load_from_string(buf.getvalue())
    model.ir_version = 8
    model.producer_name = "lichessbot-training"
    model.doc_string = (f"lichessbot default network: {ck['blocks']}x{ck['channels']} SE residual tower, "
                        f"classical 112-plane input (format 1), distilled from Stockfish 15.1; "
                        f"{ck.get('positions_seen', 0)} training positions seen. See MODEL.md.")
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return model


def check(ckpt_path: Path, onnx_path: Path, data_dir: Path, tol: float = 1e-4) -> float:
    """Max abs difference of onnxruntime and PyTorch outputs on 64 positions; SystemExit above ``tol``."""
    _, wrapper = load_checkpoint(ckpt_path)
    files = sorted((data_dir / "packed").glob("*.npz"))
    if files:
        with np.load(files[0]) as z:
            x = dataset.unpack_planes(z["planes"][:64], z["rule50"][:64])
    else:
        x = (np.random.default_rng(0).random((64, 112, 8, 8)) < 0.1).astype(np.float32)
    with torch.no_grad():
        tp, tw = (t.numpy() for t in wrapper(torch.from_numpy(x)))
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    op, ow = sess.run(["/output/policy", "/output/wdl"], {"/input/planes": x})
    diff = max(float(np.abs(op - tp).max()), float(np.abs(ow - tw).max()))
    if diff > tol:
        raise SystemExit(f"onnxruntime and PyTorch differ by {diff:.2e} > {tol:g}")
    return diff


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--out", default=None, help="ONNX path (default: next to the checkpoint, net.onnx)")
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--install", action="store_true", help="copy to lichessbot/data/default.onnx")
    args = ap.parse_args(argv)
    ckpt = Path(args.checkpoint)
    out = Path(args.out) if args.out else ckpt.with_name("net.onnx")
    export(ckpt, out)
    diff = check(ckpt, out, Path(args.data))
    size = out.stat().st_size
    print(f"wrote {out} ({size / 1e6:.2f} MB); onnxruntime vs PyTorch max abs diff {diff:.2e}")
    if size > 10_000_000:
        raise SystemExit("the network is over 10 MB")
    if args.install:
        shutil.copyfile(out, DEFAULT_TARGET)
        print(f"installed as {DEFAULT_TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
