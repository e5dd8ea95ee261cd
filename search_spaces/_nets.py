"""PyTorch modules of the networks NATS-Bench trains (imported only when a network is built).

Layer for layer these are NATS-Bench's definitions: ``ReLU -> Conv -> BN`` operations, average
pooling that excludes padding, identity skips, zero ops that multiply by 0, a stride-1 shortcut
(``Conv 1x1 -> BN``) where a skip or pooling edge changes width, residual reduction blocks with an
average-pool + 1x1-conv shortcut, and the stem / final-BN / pooling / classifier skeleton of
`search_spaces._network_spec`. Module and parameter names differ from NATS-Bench's, and `forward`
returns only the logits.
"""

from __future__ import annotations

import torch
from torch import nn

from search_spaces._network_spec import LayerSpec, NetworkSpec
from search_spaces._tss_arch import CONV_KERNEL_SIZE, NUM_NODES, TSS_EDGES


class ReLUConvBN(nn.Sequential):
    """ReLU, bias-free convolution (padding keeps the size at stride 1), batch norm."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int) -> None:
        super().__init__(
            nn.ReLU(inplace=False),
            nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(c_out),
        )


class Zero(nn.Module):
    """The ``none`` op: zeros of the output width (``x * 0`` when the width is unchanged)."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.c_in, self.c_out = c_in, c_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.c_in == self.c_out:
            return x.mul(0.0)
        shape = list(x.shape)
        shape[1] = self.c_out
        return x.new_zeros(shape)


class AvgPool(nn.Module):
    """3x3 average pooling (padding excluded from the mean), after a 1x1 ReLU-conv-BN if widths differ."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.preprocess = ReLUConvBN(c_in, c_out, 1, 1) if c_in != c_out else None
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.preprocess(x) if self.preprocess is not None else x)


def _width_change(c_in: int, c_out: int) -> nn.Module:
    """The ``skip_connect`` op when widths differ: a 1x1 convolution and batch norm (no ReLU)."""
    return nn.Sequential(nn.Conv2d(c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out))


def make_op(op: str, c_in: int, c_out: int) -> nn.Module:
    """The module for one stride-1 cell edge."""
    if op in CONV_KERNEL_SIZE:
        return ReLUConvBN(c_in, c_out, CONV_KERNEL_SIZE[op], 1)
    if op == "avg_pool_3x3":
        return AvgPool(c_in, c_out)
    if op == "skip_connect":
        return nn.Identity() if c_in == c_out else _width_change(c_in, c_out)
    if op == "none":
        return Zero(c_in, c_out)
    raise ValueError(f"unknown op {op!r}")


class Cell(nn.Module):
    """A cell: node ``d`` is the sum of its incoming edges' ops; the output is the last node."""

    def __init__(self, cell_ops: tuple[str, ...], c_in: int, c_out: int) -> None:
        super().__init__()
        self.edges = nn.ModuleList(
            make_op(op, c_in if edge.src == 0 else c_out, c_out) for edge, op in zip(TSS_EDGES, cell_ops)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = [x]
        for dst in range(1, NUM_NODES):
            nodes.append(
                sum(op(nodes[edge.src]) for edge, op in zip(TSS_EDGES, self.edges) if edge.dst == dst)
            )
        return nodes[-1]


class ReductionBlock(nn.Module):
    """Residual block of stride 2: two 3x3 ReLU-conv-BN, shortcut = 2x2 average pool + 1x1 conv."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, 2)
        self.conv_b = ReLUConvBN(c_out, c_out, 3, 1)
        self.shortcut = nn.Sequential(
            nn.AvgPool2d(kernel_size=2, stride=2, padding=0), nn.Conv2d(c_in, c_out, 1, bias=False)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shortcut(x) + self.conv_b(self.conv_a(x))


def _layer(spec: NetworkSpec, layer: LayerSpec) -> nn.Module:
    if layer.kind == "reduction":
        return ReductionBlock(layer.c_in, layer.c_out)
    return Cell(spec.cell_ops, layer.c_in, layer.c_out)


class TinyNetwork(nn.Module):
    """Stem, cells and reduction blocks, BN + ReLU, global average pooling, linear classifier."""

    def __init__(self, spec: NetworkSpec, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, spec.stem_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(spec.stem_channels),
        )
        # Spatial sizes do not change which modules are built; any input size works.
        layers = spec.layers(input_hw=1)
        self.layers = nn.Sequential(*(_layer(spec, layer) for layer in layers))
        c_last = layers[-1].c_out
        self.head = nn.Sequential(
            nn.BatchNorm2d(c_last), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(1)
        )
        self.classifier = nn.Linear(c_last, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of shape ``(batch, num_classes)`` for images of shape ``(batch, C, H, W)``."""
        return self.classifier(self.head(self.layers(self.stem(x))))


def build_network(spec: NetworkSpec, in_channels: int, num_classes: int, seed: int) -> TinyNetwork:
    """The network in eval mode, its weights initialised from `seed` (the global torch RNG is left as is)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyNetwork(spec, in_channels, num_classes)
    return model.eval()
