"""The default network: a small SE residual tower with Lc0's interface (PyTorch; training only).

Input ``[B, 112, 8, 8]`` float32 (classical format 1, docs/lc0-conventions.md §1), outputs policy logits
``[B, 1858]`` in lc0's move order (docs/lc0-conventions.md §4) and WDL logits ``[B, 3]`` (the exported model
applies the softmax).

Layout, after Maia / lc0's SE_WITH_HEADFORMAT nets: 3x3 input conv, ``blocks`` residual blocks of two 3x3
convolutions with squeeze-excitation (lc0 style: the SE produces a scale and a bias per channel), a
convolutional policy head (73 planes of 64 from-squares, AlphaZero's move planes) mapped to the 1858
entries by a fixed gather, and a value head (1x1 conv to 32, dense 128, dense 3).
"""

from __future__ import annotations

import chess
import numpy as np
import torch
from torch import nn

from lichessbot._core import POLICY_MOVES as MOVES  # lc0's 1858 moves (docs/lc0-conventions.md §4)

N_PLANES = 73  # 56 queen-line planes (8 directions x 7 distances), 8 knight planes, 9 underpromotion planes


QUEEN_DIRS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
KNIGHT_DIRS = ((2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1))


def policy_gather_index() -> np.ndarray:
    """int64 [1858]: for each lc0 move, the flat index ``plane * 64 + from_square`` in the conv head."""
    idx = []
    for uci in MOVES:
        frm, to = chess.parse_square(uci[:2]), chess.parse_square(uci[2:4])
        dr = chess.square_rank(to) - chess.square_rank(frm)
        df = chess.square_file(to) - chess.square_file(frm)
        if len(uci) == 5:
            plane = 64 + "qrb".index(uci[4]) * 3 + (df + 1)
        elif (dr, df) in KNIGHT_DIRS:
            plane = 56 + KNIGHT_DIRS.index((dr, df))
        else:
            dist = max(abs(dr), abs(df))
            plane = QUEEN_DIRS.index((dr // dist, df // dist)) * 7 + dist - 1
        idx.append(plane * 64 + frm)
    arr = np.array(idx, dtype=np.int64)
    assert len(set(idx)) == 1858
    return arr


class SEBlock(nn.Module):  # type: ignore[misc]  # torch's Module is Any where torch is not installed
    def __init__(self, ch: int, se_ratio: int = 4):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.fc1 = nn.Linear(ch, ch // se_ratio)
        self.fc2 = nn.Linear(ch // se_ratio, 2 * ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        s = y.mean(dim=(2, 3))
        s = self.fc2(torch.relu(self.fc1(s)))
        w, b = s.chunk(2, dim=1)
        y = y * torch.sigmoid(w)[:, :, None, None] + b[:, :, None, None]
        return torch.relu(x + y)


class Net(nn.Module):  # type: ignore[misc]  # as above
    """``forward(planes [B,112,8,8]) -> (policy logits [B,1858], wdl logits [B,3])``."""

    def __init__(self, blocks: int = 6, channels: int = 64):
        super().__init__()
        self.blocks_n, self.channels = blocks, channels
        self.inp = nn.Sequential(nn.Conv2d(112, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                 nn.ReLU())
        self.tower = nn.Sequential(*[SEBlock(channels) for _ in range(blocks)])
        self.pol = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                 nn.ReLU(), nn.Conv2d(channels, N_PLANES, 3, padding=1))
        self.register_buffer("gather", torch.from_numpy(policy_gather_index()), persistent=False)
        self.val_conv = nn.Sequential(nn.Conv2d(channels, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.val_fc = nn.Sequential(nn.Linear(32 * 64, 128), nn.ReLU(), nn.Linear(128, 3))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.tower(self.inp(x))
        p = self.pol(x).flatten(1)
        p = torch.index_select(p, 1, self.gather)
        v = self.val_fc(self.val_conv(x).flatten(1))
        return p, v


class ExportWrapper(nn.Module):  # type: ignore[misc]  # as above
    """The exported graph: policy logits and softmaxed WDL."""

    def __init__(self, net: Net):
        super().__init__()
        self.net = net

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p, v = self.net(planes)
        return p, torch.softmax(v, dim=1)
