"""PyTorch modules of the networks NATS-Bench trains (imported only when a network is built).

Layer for layer these are NATS-Bench's definitions: ``ReLU -> Conv -> BN`` operations, average
pooling that excludes padding, identity skips, zero ops that multiply by 0, a stride-1 shortcut
(``Conv 1x1 -> BN``) where a skip or pooling edge changes width, residual reduction blocks with an
average-pool + 1x1-conv shortcut, and the stem / final-BN / pooling / classifier skeleton of
`search_spaces._network_spec`. Module and parameter names differ from NATS-Bench's, and `forward`
returns only the logits.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from search_spaces._deployed import Plan, deploy_plan
from search_spaces._network_spec import LayerSpec, NetworkSpec, reduced_side
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
        self.cell_ops, self.c_in, self.c_out = tuple(cell_ops), c_in, c_out
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


class DeployedCell(nn.Module):
    """A cell that computes only its live edges, following a `search_spaces._deployed.Plan`.

    Its op modules are the as-built cell's own (shared, not copied), so it runs with the as-built
    weights. A disconnected cell (zero output) has none.
    """

    def __init__(self, cell: Cell, plan: Plan) -> None:
        super().__init__()
        if plan.disconnected:
            raise ValueError("a disconnected cell has no deployed form: its output is zeros")
        self.ops = nn.ModuleList(cell.edges[i] for i in plan.op_edges)
        self.steps = tuple((step.kind, step.inputs) for step in plan.steps)
        self.output = plan.output
        self.c_out = cell.c_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values = [x]
        modules = iter(self.ops)
        for kind, inputs in self.steps:
            if kind == "op":
                values.append(next(modules)(values[inputs[0]]))
            elif kind == "zeros":
                values.append(_zeros_like(x, self.c_out, x.shape[-2:]))
            else:
                total = values[inputs[0]] + values[inputs[1]]
                for i in inputs[2:]:
                    total = total + values[i]
                values.append(total)
        return values[self.output]


def _zeros_like(x: torch.Tensor, channels: int, size: Sequence[int]) -> torch.Tensor:
    """Zeros of `x`'s batch, dtype, device and memory format, with `channels` and spatial `size`."""
    zeros = x.new_zeros((x.shape[0], channels, *size))
    if x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        zeros = zeros.contiguous(memory_format=torch.channels_last)
    return zeros


class ZeroFeatures(nn.Module):
    """Zeros in place of everything upstream: what a network of input-independent cells needs.

    Gives zeros shaped like the input of the last cell (`channels` wide, the image side halved
    `reductions` times), reading only the image's batch size, side, dtype, device and memory format.
    """

    def __init__(self, channels: int, reductions: int) -> None:
        super().__init__()
        self.channels, self.reductions = channels, reductions

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2:]
        for _ in range(self.reductions):
            h, w = reduced_side(h), reduced_side(w)
        return _zeros_like(x, self.channels, (h, w))


class DeployedNetwork(nn.Module):
    """The network a user would deploy: the same function as `TinyNetwork`, without dead or zero ops.

    Built by `deploy_network` from an as-built network, whose modules (and weights) it shares.
    When the cell's output does not depend on its input, nothing upstream of the last cell is
    computed: zeros feed the last cell (or, for a disconnected cell, the head) and `stem` is ``None``.
    """

    def __init__(self, stem: nn.Module | None, layers: nn.Module, head: nn.Module, classifier: nn.Module) -> None:
        super().__init__()
        self.stem, self.layers, self.head, self.classifier = stem, layers, head, classifier

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of shape ``(batch, num_classes)`` for images of shape ``(batch, C, H, W)``."""
        if self.stem is not None:
            x = self.stem(x)
        return self.classifier(self.head(self.layers(x)))


def deploy_network(net: TinyNetwork) -> DeployedNetwork:
    """The deployed form of `net`, sharing its modules; its mode (train/eval) is `net`'s."""
    layers = list(net.layers)
    last = layers[-1]
    plan = deploy_plan(last.cell_ops, last.c_in != last.c_out)
    if not plan.input_dependent:
        # the network's output is a constant: zeros feed the head, or the last cell computed on zeros
        reductions = sum(isinstance(layer, ReductionBlock) for layer in layers)
        tail: list[nn.Module] = [ZeroFeatures(last.c_in, reductions)]
        if not plan.disconnected:
            tail.append(DeployedCell(last, plan))
        deployed = DeployedNetwork(None, nn.Sequential(*tail), net.head, net.classifier)
    else:
        body = [
            DeployedCell(layer, deploy_plan(layer.cell_ops, layer.c_in != layer.c_out))
            if isinstance(layer, Cell) else layer
            for layer in layers
        ]
        deployed = DeployedNetwork(net.stem, nn.Sequential(*body), net.head, net.classifier)
    return deployed.train(net.training)


def build_deployed_network(spec: NetworkSpec, in_channels: int, num_classes: int, seed: int) -> DeployedNetwork:
    """The deployed form of `build_network(spec, ...)`: the same weights, in eval mode."""
    return deploy_network(build_network(spec, in_channels, num_classes, seed))
