"""Rebuild a train.py checkpoint from an exported network, to continue training it (fine-tuning).

``export.py`` writes the network with every batch norm folded into the convolution before it
(``torch.onnx.export`` in eval mode: W' = W * gamma / sqrt(var + eps), b' = beta - mean * gamma / sqrt(var + eps)),
so the ONNX file holds W' and b' only. This script loads W' into each convolution and chooses the batch-norm
parameters so that the network computes exactly the exported function in BOTH modes:

* for each batch norm, the batch mean ``mu`` and variance ``var`` of its input (W' x) over a batch of real
  training positions are measured in forward order (``--calibration`` positions of the packed data);
* gamma = sqrt(var + eps), beta = mu + b', running mean = mu, running variance = var.

Then in eval mode BN(y) = (y - mu) / sqrt(var + eps) * gamma + beta = y + b' for every input, and in train
mode on that batch the same; on other batches train mode differs only by the batch statistics' noise, so
training starts from the exported network's function instead of a perturbed one. The layers that are not
folded (squeeze-excitation, policy output convolution, value dense layers) keep their ONNX names and are
copied as they are. The result is checked: onnxruntime on the ONNX file vs PyTorch in eval mode on real
positions, max |difference| of policy logits and WDL printed (fails above 1e-3).

Usage::

    python training/from_onnx.py lichessbot/data/default.onnx --out training/runs/base/ckpt.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dataset  # noqa: E402
import train  # noqa: E402
from model import Net  # noqa: E402


def conv_bn_pairs(net: Net) -> list[tuple[nn.Conv2d, nn.BatchNorm2d | None]]:
    """The network's convolutions in forward order, each with the batch norm that follows it (None for the
    policy head's last convolution, which has its own bias and no batch norm)."""
    pairs: list[tuple[nn.Conv2d, nn.BatchNorm2d | None]] = [(net.inp[0], net.inp[1])]
    for blk in net.tower:
        pairs += [(blk.conv1, blk.bn1), (blk.conv2, blk.bn2)]
    pairs += [(net.pol[0], net.pol[1]), (net.pol[3], None), (net.val_conv[0], net.val_conv[1])]
    return pairs


def load_onnx(net: Net, model: onnx.ModelProto, calib: torch.Tensor) -> None:
    """Fill ``net`` from the exported ``model`` (see the module docstring); ``calib`` float32 [B,112,8,8]
    real positions for the batch statistics. Raises ValueError when the graph does not match the network."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    pairs = conv_bn_pairs(net)
    if len(convs) != len(pairs):
        raise ValueError(f"the ONNX graph has {len(convs)} convolutions, the {net.blocks_n}x{net.channels} "
                         f"network {len(pairs)}")
    state = net.state_dict()
    for name in state:
        key = "net." + name
        if key in inits:
            if tuple(inits[key].shape) != tuple(state[name].shape):
                raise ValueError(f"{key}: shape {inits[key].shape} in the ONNX file, {tuple(state[name].shape)} here")
            state[name] = torch.from_numpy(inits[key].copy())
    net.load_state_dict(state)
    folded = []
    for node, (conv, bn) in zip(convs, pairs, strict=True):
        w = torch.from_numpy(inits[node.input[1]].copy())
        if tuple(w.shape) != tuple(conv.weight.shape):
            raise ValueError(f"convolution {node.name}: weight {tuple(w.shape)}, expected {tuple(conv.weight.shape)}")
        b = torch.from_numpy(inits[node.input[2]].copy()) if len(node.input) > 2 else torch.zeros(w.shape[0])
        with torch.no_grad():
            conv.weight.copy_(w)
            if bn is None:
                conv.bias.copy_(b)
        if bn is not None:
            folded.append((bn, b))
    # batch statistics in forward order: each hook sets its batch norm before it normalises
    hooks = []
    for bn, b in folded:
        def pre(mod: torch.nn.BatchNorm2d, inputs: tuple[torch.Tensor, ...], b: torch.Tensor = b) -> None:
            y = inputs[0]
            mu = y.mean(dim=(0, 2, 3))
            var = y.var(dim=(0, 2, 3), unbiased=False)
            with torch.no_grad():
                mod.weight.copy_(torch.sqrt(var + mod.eps))
                mod.bias.copy_(mu + b)
                mod.running_mean.copy_(mu)
                mod.running_var.copy_(var)
        hooks.append(bn.register_forward_pre_hook(pre))
    net.eval()
    with torch.no_grad():
        net(calib)
    for h in hooks:
        h.remove()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("onnx_path")
    ap.add_argument("--out", required=True, help="checkpoint to write (train.py --resume reads it)")
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--calibration", type=int, default=4096, help="positions for the batch statistics")
    args = ap.parse_args(argv)
    files = dataset.prepare(Path(args.data), log=print)
    data = dataset.load_all(files)
    rng = np.random.default_rng(5)
    idx = rng.choice(len(data["wdl"]), size=min(args.calibration, len(data["wdl"])), replace=False)
    calib = train.batch_tensors(data, np.sort(idx))[0].contiguous()
    net = Net(args.blocks, args.channels)
    model = onnx.load(args.onnx_path)
    load_onnx(net, model, calib)
    test = train.batch_tensors(data, np.sort(rng.choice(len(data["wdl"]), 256, replace=False)))[0].contiguous()
    sess = ort.InferenceSession(args.onnx_path, providers=["CPUExecutionProvider"])
    pol, wdl = sess.run(["/output/policy", "/output/wdl"], {"/input/planes": test.numpy()})
    with torch.no_grad():
        p, v = net(test)
    dp = float(np.abs(p.numpy() - pol).max())
    dv = float(np.abs(torch.softmax(v, 1).numpy() - wdl).max())
    print(f"onnxruntime vs PyTorch on 256 real positions: policy max |d| {dp:.2e}, WDL max |d| {dv:.2e}")
    if max(dp, dv) > 1e-3:
        raise SystemExit("the rebuilt network does not compute the exported one")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": net.state_dict(), "ema": 0.0, "blocks": args.blocks, "channels": args.channels,
                "steps": 0, "positions_seen": 0, "from_onnx": str(args.onnx_path)}, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
