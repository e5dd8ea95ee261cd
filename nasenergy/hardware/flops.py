"""Counting the arithmetic of a network: FLOPs and MACs per image, and parameters.

FLOPs are counted by PyTorch's own ``torch.utils.flop_counter.FlopCounterMode`` on a single image,
which counts ``2 * MACs`` for every matrix product and convolution (verified in the tests) and
nothing for element-wise work (activations, batch norm, pooling, additions). So
``macs_per_img = flops_per_img / 2`` by construction.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import torch

_CACHE: "weakref.WeakKeyDictionary[torch.nn.Module, dict[tuple[int, ...], ModelCount]]" = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class ModelCount:
    """The arithmetic of one forward pass of one image.

    Attributes:
        flops_per_img: floating-point operations per image (``2 * macs_per_img``).
        macs_per_img: multiply-accumulates per image.
        params: number of parameters.
    """

    flops_per_img: float
    macs_per_img: float
    params: int


def count_model(model: "torch.nn.Module", input_shape: Sequence[int], *,
                run_on: "torch.nn.Module | None" = None) -> ModelCount:
    """FLOPs and MACs per image and parameter count of `model` for one image of `input_shape`.

    Runs one forward pass of one image (no gradients) on the device and dtype of the model's
    first parameter, in eval mode (the model's mode is restored). Results are cached per model
    object and input shape.

    Args:
        model: the network.
        input_shape: the shape of one image, ``(C, H, W)``.
        run_on: an identical copy of `model` to run instead (e.g. one already on the GPU, where
            the pass is faster); the result is still cached under `model`.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    shape = tuple(int(s) for s in input_shape)
    per_model = _CACHE.get(model)
    if per_model is not None and shape in per_model:
        return per_model[shape]
    net = model if run_on is None else run_on
    ref: torch.Tensor | None = next(iter(net.parameters()), None)
    if ref is None:
        ref = next(iter(net.buffers()), None)
    device = ref.device if ref is not None else torch.device("cpu")
    dtype = ref.dtype if ref is not None and ref.is_floating_point() else torch.float32
    was_training = net.training
    net.eval()
    try:
        x = torch.zeros((1, *shape), device=device, dtype=dtype)
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            net(x)
    finally:
        net.train(was_training)
    flops = float(counter.get_total_flops())
    count = ModelCount(
        flops_per_img=flops,
        macs_per_img=flops / 2.0,
        params=int(sum(p.numel() for p in model.parameters())),
    )
    _CACHE.setdefault(model, {})[shape] = count
    return count


def remember_count(model: "torch.nn.Module", input_shape: Sequence[int], count: ModelCount) -> None:
    """Cache `count` as `count_model`'s result for `model` and `input_shape` (e.g. one counted in
    another process on an identical copy of `model`)."""
    _CACHE.setdefault(model, {})[tuple(int(s) for s in input_shape)] = count
