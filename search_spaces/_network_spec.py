"""The macro structure shared by the networks of both NATS-Bench spaces.

Both spaces use the same skeleton (NATS-Bench's "tiny network"): a 3x3 convolution stem with batch
norm, then ``3N + 2`` layers -- N cells, a residual reduction block, N cells, a residual reduction
block, N cells -- then batch norm, ReLU, global average pooling and a linear classifier. Every
cell uses the same cell topology. TSS fixes the widths (16 channels for N = 5 cells, 32 for the
next block and 5 cells, 64 for the last 6 layers) and varies the cell; SSS fixes the cell and
N = 1 and varies the 5 widths.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal, NamedTuple

from search_spaces._tss_arch import TSS_EDGES

LayerKind = Literal["cell", "reduction"]


class LayerSpec(NamedTuple):
    """One layer of the skeleton.

    Attributes:
        kind: ``cell`` (stride 1) or ``reduction`` (residual block of stride 2).
        c_in: input channels.
        c_out: output channels.
        hw_in: input height (= width) in pixels.
    """

    kind: LayerKind
    c_in: int
    c_out: int
    hw_in: int


@dataclass(frozen=True, slots=True)
class NetworkSpec:
    """Everything that determines a network's layers (the dataset adds input size and classes).

    Attributes:
        channels: output channels of each of the ``3N + 2`` layers; the stem has ``channels[0]``.
        cell_ops: the cell's op per edge, in `TSS_EDGES` order.
    """

    channels: tuple[int, ...]
    cell_ops: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.channels) % 3 != 2:
            raise ValueError(f"a tiny network has 3N + 2 layers, got {len(self.channels)} widths")
        if len(self.cell_ops) != len(TSS_EDGES):
            raise ValueError(f"a cell has {len(TSS_EDGES)} edges, got {len(self.cell_ops)} ops")

    @property
    def cells_per_stage(self) -> int:
        """N, the number of cells in each of the 3 stages."""
        return len(self.channels) // 3

    @property
    def stem_channels(self) -> int:
        """Output channels of the stem convolution."""
        return self.channels[0]

    def layers(self, input_hw: int) -> tuple[LayerSpec, ...]:
        """The layers in forward order, for square inputs of side `input_hw` pixels."""
        return _layers(self.channels, input_hw)


def reduced_side(hw: int) -> int:
    """The side, in pixels, after a reduction block (a 3x3 convolution of stride 2 and padding 1)."""
    return (hw + 1) // 2


@functools.lru_cache(maxsize=1 << 16)
def _layers(channels: tuple[int, ...], input_hw: int) -> tuple[LayerSpec, ...]:
    n = len(channels) // 3
    reductions = {n, 2 * n + 1}
    layers = []
    c_prev, hw = channels[0], input_hw
    for position, c_out in enumerate(channels):
        kind: LayerKind = "reduction" if position in reductions else "cell"
        layers.append(LayerSpec(kind, c_prev, c_out, hw))
        if kind == "reduction":
            hw = reduced_side(hw)
        c_prev = c_out
    return tuple(layers)
