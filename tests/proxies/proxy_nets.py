"""Tiny networks and TSS cells shared by the proxy tests (imported by name: ``from proxy_nets import ...``)."""

from __future__ import annotations

import torch
from torch import nn

SHAPE = (3, 8, 8)
CLASSES = 5
ZERO_CELL = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
"""Every edge ``none``: the network's output does not depend on its input."""
SKIP_CELL = "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"
CONV_CELL = "|nor_conv_1x1~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"


def tiny_net(seed: int = 0, width: int = 4) -> nn.Module:
    """Conv-BN-ReLU, pooling, linear: a small network for 3x8x8 images and 5 classes."""
    with torch.random.fork_rng(devices=[]):  # seeded without touching the global generator
        torch.manual_seed(seed)
        return nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                             nn.Conv2d(width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, CLASSES)).eval()
