"""Parameter and multiply-accumulate counts of NATS-Bench networks, analytically.

The counts follow NATS-Bench's own convention (its ``get_model_infos``), so they equal the
``params`` and ``flops`` values stored in the benchmark:

* parameters: every trainable tensor -- convolution weights (no convolution has a bias), batch-norm
  scale and shift (2 per channel; running statistics are buffers, not parameters), and the linear
  classifier's weight and bias;
* operations, per image: only convolutions and the classifier count. A convolution costs
  ``k*k*c_in*c_out`` multiply-accumulates per output pixel; the classifier ``c_in*classes`` plus
  one per class for the bias. Batch norm, ReLU, pooling, additions and zeros cost nothing.

NATS-Bench calls this figure ``flops`` and stores it in millions (``flops_M``), but it counts
multiply-accumulates (MACs). nasenergy's ``flops`` is ``2 * macs``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from search_spaces._deployed import deploy_plan
from search_spaces._network_spec import LayerSpec, NetworkSpec
from search_spaces._tss_arch import CONV_KERNEL_SIZE, TSS_EDGES


@dataclass(frozen=True, slots=True)
class ModelCost:
    """The size and compute of one network for one image.

    Attributes:
        params: number of trainable parameters.
        macs: multiply-accumulates per image.
        flops: floating-point operations per image, ``2 * macs``.
    """

    params: int
    macs: int
    flops: int

    def __post_init__(self) -> None:
        if self.flops != 2 * self.macs:
            raise ValueError(f"flops must be 2 * macs, got flops={self.flops}, macs={self.macs}")

    @classmethod
    def of(cls, params: int, macs: int) -> ModelCost:
        """A cost from parameters and MACs per image (``flops`` derived)."""
        return cls(params=params, macs=macs, flops=2 * macs)

    @property
    def params_m(self) -> float:
        """Parameters in millions (NATS-Bench's ``params`` / ``params_M``)."""
        return self.params / 1e6

    @property
    def nats_flops_m(self) -> float:
        """MACs per image in millions: the figure NATS-Bench stores as ``flops`` / ``flops_M``."""
        return self.macs / 1e6


# Internally a count is a (params, macs) pair; parts are cached because networks share layers.
_Count = tuple[int, int]


def _conv_bn(kernel: int, c_in: int, c_out: int, hw_out: int) -> _Count:
    """A bias-free convolution followed by batch norm."""
    weights = kernel * kernel * c_in * c_out
    return weights + 2 * c_out, weights * hw_out * hw_out


def _edge(op: str, c_in: int, c_out: int, hw: int) -> _Count:
    """One stride-1 cell edge; a channel change is done by a 1x1 convolution + batch norm."""
    if op in CONV_KERNEL_SIZE:
        return _conv_bn(CONV_KERNEL_SIZE[op], c_in, c_out, hw)
    if op in ("skip_connect", "avg_pool_3x3") and c_in != c_out:
        return _conv_bn(1, c_in, c_out, hw)
    return 0, 0


def _total(parts: Iterable[_Count]) -> _Count:
    params = macs = 0
    for part_params, part_macs in parts:
        params += part_params
        macs += part_macs
    return params, macs


def _edges(cell_ops: tuple[str, ...], layer: LayerSpec, edges: Iterable[int]) -> _Count:
    """The cell edges with indices `edges` (in `TSS_EDGES` order)."""
    return _total(
        _edge(cell_ops[i], layer.c_in if TSS_EDGES[i].src == 0 else layer.c_out, layer.c_out, layer.hw_in)
        for i in edges
    )


@functools.lru_cache(maxsize=1 << 16)
def _cell(cell_ops: tuple[str, ...], layer: LayerSpec) -> _Count:
    return _edges(cell_ops, layer, range(len(TSS_EDGES)))


@functools.lru_cache(maxsize=1 << 16)
def _deployed_cell(cell_ops: tuple[str, ...], layer: LayerSpec) -> _Count:
    return _edges(cell_ops, layer, deploy_plan(cell_ops, layer.c_in != layer.c_out).op_edges)


@functools.lru_cache(maxsize=1 << 12)
def _reduction(layer: LayerSpec) -> _Count:
    """Residual block of stride 2: two 3x3 conv-BN, shortcut = 2x2 average pool + 1x1 conv."""
    hw_out = (layer.hw_in + 1) // 2
    shortcut_weights = layer.c_in * layer.c_out
    return _total(
        (
            _conv_bn(3, layer.c_in, layer.c_out, hw_out),
            _conv_bn(3, layer.c_out, layer.c_out, hw_out),
            (shortcut_weights, shortcut_weights * hw_out * hw_out),
        )
    )


@functools.lru_cache(maxsize=1 << 18)
def network_cost(spec: NetworkSpec, input_shape: tuple[int, int, int], num_classes: int) -> ModelCost:
    """Parameters and MACs per image of the network `spec` for square images of `input_shape`.

    Args:
        spec: the network's layers.
        input_shape: ``(channels, height, width)`` of one image, pixels; height must equal width.
        num_classes: number of logits.
    """
    in_channels, hw, _ = input_shape
    layers = spec.layers(hw)
    c_last = layers[-1].c_out
    classifier = c_last * num_classes + num_classes
    params, macs = _total(
        (
            _conv_bn(3, in_channels, spec.stem_channels, hw),
            *(_cell(spec.cell_ops, layer) if layer.kind == "cell" else _reduction(layer) for layer in layers),
            (2 * c_last, 0),  # final batch norm
            (classifier, classifier),
        )
    )
    return ModelCost.of(params, macs)


@functools.lru_cache(maxsize=1 << 18)
def deployed_network_cost(spec: NetworkSpec, input_shape: tuple[int, int, int], num_classes: int) -> ModelCost:
    """Parameters and MACs per image of the *deployed* network of `spec` (see `search_spaces._deployed`).

    Only the ops the deployed cells compute count. When the cell's output does not depend on its
    input, the network's output is a constant: only the last cell (computed on zeros, unless it is
    disconnected), the final batch norm and the classifier remain.
    """
    in_channels, hw, _ = input_shape
    layers = spec.layers(hw)
    c_last = layers[-1].c_out
    classifier = c_last * num_classes + num_classes
    head = ((2 * c_last, 0), (classifier, classifier))
    if deploy_plan(spec.cell_ops).input_dependent:
        body = (
            _conv_bn(3, in_channels, spec.stem_channels, hw),
            *(_deployed_cell(spec.cell_ops, layer) if layer.kind == "cell" else _reduction(layer) for layer in layers),
        )
    else:
        body = (_deployed_cell(spec.cell_ops, layers[-1]),)
    return ModelCost.of(*_total((*body, *head)))
