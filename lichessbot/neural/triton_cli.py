"""``lichessbot export-triton OUT_DIR``: write a Triton model repository for a network (docs/scaling.md)."""

from __future__ import annotations

import argparse

from lichessbot.neural.network import load_network
from lichessbot.neural.triton import export_model_repository


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lichessbot export-triton``."""
    parser.add_argument("out_dir", metavar="OUT_DIR", help="the model repository folder (created if needed)")
    parser.add_argument("--network", default="default", help="'default', a .onnx or a .pb.gz file")
    parser.add_argument("--name", default="lichessbot", help="the model's name on the server (default lichessbot)")
    parser.add_argument("--max-batch", type=int, default=1024, help="positions per Triton batch (default 1024)")
    parser.add_argument("--input-format", type=int, default=None, help="lc0 input format of a .onnx file")


def run(args: argparse.Namespace) -> int:
    """Write the repository and print where; NetworkError (exit 2) for a network that does not load."""
    net = load_network(args.network, args.input_format)
    folder = export_model_repository(args.out_dir, net, args.name, args.max_batch)
    print(f"wrote {folder}/config.pbtxt and {folder}/1/model.onnx ({net.name}, lc0 input format "
          f"{net.input_format}); serve it with: tritonserver --model-repository {args.out_dir}")
    return 0
