"""Train the default network on the generated data (step 2; needs ``pip install "lichessbot-nn[train]"``).

Packs any new raw shards (dataset.prepare), then trains for a wall-clock budget with AdamW and a cosine
learning-rate schedule over that budget. Losses: policy = cross-entropy against the softened MultiPV target
(over all 1858 logits), value = cross-entropy against the blended WDL target. Positions without castling
rights are mirrored left-right at random (``--mirror``, dataset.mirror_augment). New shards written by a
still-running generate.py are picked up every ``--reload-minutes``. A checkpoint (``ckpt.pt``) is written
to the run folder every ``--save-minutes`` and at the end, and ``best.pt`` whenever the held-out policy + value
loss is the lowest so far; ``--resume`` continues from one.

Usage::

    python training/train.py --run training/runs/r1 --blocks 6 --channels 64 --minutes 30 --threads 2
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dataset  # noqa: E402
from model import Net  # noqa: E402

VAL_SIZE = 3000


MIRROR = dataset.mirror_permutation()


def batch_tensors(data: dict[str, np.ndarray], idx: np.ndarray, rng: np.random.Generator | None = None,
                  mirror: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows ``idx`` (int [B]) of the packed arrays as tensors: planes float32 [B,112,8,8] (channels-last),
    policy indices int64 [B,K] (-1 = padding), policy probabilities float32 [B,K], WDL target float32 [B,3].
    With ``mirror`` > 0, positions without castling rights are mirrored left-right with that probability
    (:func:`dataset.mirror_augment`), drawn from ``rng`` (a fresh unseeded generator when None)."""
    planes = dataset.unpack_planes(data["planes"][idx], data["rule50"][idx])
    pol_idx = data["pol_idx"][idx].astype(np.int64)
    if mirror > 0:
        dataset.mirror_augment(planes, pol_idx, rng or np.random.default_rng(), mirror, MIRROR)
    x = torch.from_numpy(planes).contiguous(memory_format=torch.channels_last)  # ~2x faster oneDNN convs
    pi = torch.from_numpy(pol_idx)
    pp = torch.from_numpy(data["pol_p"][idx])
    wdl = torch.from_numpy(data["wdl"][idx])
    return x, pi, pp, wdl


def losses(net: Net, x: torch.Tensor, pi: torch.Tensor, pp: torch.Tensor, wdl: torch.Tensor
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(policy cross-entropy, value cross-entropy, top-1 agreement with ``pi[:, 0]``), each a 0-d tensor
    averaged over the batch; inputs as returned by :func:`batch_tensors`."""
    logits, v = net(x)
    logp = F.log_softmax(logits, dim=1)
    valid = pi >= 0
    picked = torch.gather(logp, 1, pi.clamp(min=0)) * valid
    pol_loss = -(picked * pp).sum(1).mean()
    val_loss = -(F.log_softmax(v, dim=1) * wdl).sum(1).mean()
    top1 = (logits.argmax(1) == pi[:, 0]).float().mean()
    return pol_loss, val_loss, top1


def load(data_dir: Path, log: Callable[[str], object], sf_weight: float = dataset.SF_WEIGHT, workers: int = 1,
         val_shard: str = "w0-000") -> tuple[dict[str, np.ndarray], int]:
    """Pack new shards and load all of them, ``val_shard`` first (its first VAL_SIZE positions are the
    held-out set, so a new shard series that sorts earlier does not change it). Raises FileNotFoundError
    when there is no such shard."""
    files = dataset.prepare(data_dir, sf_weight=sf_weight, log=log, workers=workers)
    first = [f for f in files if f.stem == val_shard]
    if not first:
        raise FileNotFoundError(f"--val-shard {val_shard}: no raw/{val_shard}.jsonl in {data_dir}")
    files = first + [f for f in files if f.stem != val_shard]
    data = dataset.load_all(files)
    n = len(data["wdl"])
    return data, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).parent / "data"))
    ap.add_argument("--run", default=str(Path(__file__).parent / "runs" / "default"))
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--lr-min", type=float, default=5e-5)
    ap.add_argument("--warmup-steps", type=int, default=0,
                    help="the learning rate rises linearly from 0 over this many steps (fine-tuning: Adam's first "
                         "steps move every weight by about the learning rate)")
    ap.add_argument("--wd", type=float, default=1e-4)
    ap.add_argument("--value-weight", type=float, default=1.0)
    ap.add_argument("--sf-weight", type=float, default=dataset.SF_WEIGHT,
                    help="value target = w * Stockfish WDL + (1 - w) * game result")
    ap.add_argument("--mirror", type=float, default=0.5,
                    help="probability of mirroring (files a<->h) a training position without castling rights")
    ap.add_argument("--val-shard", default="w0-000",
                    help="shard whose first positions are held out for validation (never trained on)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resume", default=None, help="checkpoint to start from (weights only)")
    ap.add_argument("--reload-minutes", type=float, default=5.0)
    ap.add_argument("--save-minutes", type=float, default=2.0)
    ap.add_argument("--ema", type=float, default=0.999,
                    help="decay of the exponential moving average of the weights that is saved (0: off)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    run = Path(args.run)
    run.mkdir(parents=True, exist_ok=True)
    logf = (run / "train.log").open("a")

    def log(msg: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    net = Net(args.blocks, args.channels)
    if args.resume:
        net.load_state_dict(torch.load(args.resume)["model"])
        log(f"resumed from {args.resume}")
    net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.wd)
    swa = torch.optim.swa_utils
    ema = (swa.AveragedModel(net, multi_avg_fn=swa.get_ema_multi_avg_fn(args.ema), use_buffers=True)
           if args.ema else None)

    def saved_net() -> Net:
        saved: Net = ema.module if ema is not None else net
        return saved
    data, n = load(Path(args.data), log, args.sf_weight, args.threads, args.val_shard)
    # validation: the first VAL_SIZE positions (the first games of --val-shard), never trained on
    val = np.arange(min(VAL_SIZE, n // 10))
    log(f"{n} positions ({len(val)} held out), encoder {dataset.encoder_name()}, "
        f"net {args.blocks}x{args.channels} ({sum(p.numel() for p in net.parameters())} params)")
    rng = np.random.default_rng(1)
    start = time.time()
    budget = args.minutes * 60
    last_reload = last_save = start
    step, seen = 0, 0
    run_loss = np.zeros(3)

    best = [math.inf]

    def save(val_total: float | None = None) -> None:
        """Write ckpt.pt; also best.pt when ``val_total`` (held-out policy + value loss) is the lowest yet."""
        ck = {"model": saved_net().state_dict(), "ema": args.ema, "blocks": args.blocks,
              "channels": args.channels, "steps": step, "positions_seen": seen, "val_total": val_total}
        torch.save(ck, run / "ckpt.pt")
        if val_total is not None and val_total < best[0]:
            best[0] = val_total
            torch.save(ck, run / "best.pt")

    def validate() -> tuple[str, float]:
        """The held-out losses as a log line, and policy + value loss."""
        m = saved_net()
        m.eval()
        with torch.no_grad():
            tot = np.zeros(3)
            for i in range(0, len(val), 500):
                pl, vl, t1 = losses(m, *batch_tensors(data, val[i:i + 500]))
                tot += np.array([pl.item(), vl.item(), t1.item()]) * len(val[i:i + 500])
        m.train()
        tot /= len(val)
        return f"val policy {tot[0]:.3f} value {tot[1]:.3f} top1 {tot[2]:.3f}", float(tot[0] + tot[1])

    while True:
        now = time.time()
        frac = (now - start) / budget if budget > 0 else 1.0  # --minutes 0: validate and save only
        if frac >= 1:
            break
        lr = args.lr_min + 0.5 * (args.lr - args.lr_min) * (1 + math.cos(math.pi * frac))
        if step < args.warmup_steps:
            lr *= (step + 1) / args.warmup_steps
        for g in opt.param_groups:
            g["lr"] = lr
        idx = rng.integers(len(val), n, args.batch)
        pl, vl, t1 = losses(net, *batch_tensors(data, idx, rng, args.mirror))
        loss = pl + args.value_weight * vl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if ema is not None:
            ema.update_parameters(net)
        step += 1
        seen += args.batch
        run_loss = 0.98 * run_loss + 0.02 * np.array([pl.item(), vl.item(), t1.item()])
        if step % 100 == 0:
            log(f"step {step} seen {seen} lr {lr:.2e} train policy {run_loss[0]:.3f} value {run_loss[1]:.3f} "
                f"top1 {run_loss[2]:.3f} ({seen / (now - start + 1e-9):.0f} pos/s)")
        if now - last_save > args.save_minutes * 60:
            last_save = now
            line, total = validate()
            save(total)
            log(f"saved step {step}: {line}")
        if now - last_reload > args.reload_minutes * 60:
            last_reload = now
            data, n = load(Path(args.data), log, args.sf_weight, args.threads, args.val_shard)
            log(f"reloaded: {n} positions")
    line, total = validate()
    save(total)
    log(f"done: {step} steps, {seen} positions seen; {line} (best.pt: val policy + value {best[0]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
