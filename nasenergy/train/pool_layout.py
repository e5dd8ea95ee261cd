"""A guard against a silent kernel error: padded average pooling's backward pass on CUDA for
channels_last (NHWC) inputs.

Some PyTorch builds compute wrong input gradients for ``avg_pool2d`` on CUDA when the input is
channels_last and ``padding > 0`` (the NHWC backward kernel leaves out the padding offset;
pytorch/pytorch#188344). The forward pass is right, so nothing fails: a network whose cells pool
(every TSS cell with ``avg_pool_3x3``: 3x3, stride 1, padding 1) simply trains worse. The trainer
checks the installed build once per device (`nhwc_avg_pool_backward_ok`, a few microseconds of
GPU work) and, where the check fails, runs each padded `torch.nn.AvgPool2d` of the network on a
contiguous (NCHW) copy of its input during training (`pool_in_nchw`): the other layers keep
channels_last, the arithmetic is the same, and the network is left as it was given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

_CHECKED: dict[str, bool] = {}


def nhwc_avg_pool_backward_ok(device: "torch.device | str") -> bool:
    """Whether padded ``avg_pool2d``'s backward gives the same input gradient for a channels_last
    input as for a contiguous one on `device` (cached per device; always checked, never assumed
    from a version number)."""
    import torch
    import torch.nn.functional as F

    device = torch.device(device)
    key = str(device)
    if key not in _CHECKED:
        x = torch.arange(2 * 3 * 5 * 5, dtype=torch.float32, device=device).reshape(2, 3, 5, 5) / 7.0
        grads = []
        for layout in (torch.contiguous_format, torch.channels_last):
            xi = x.contiguous(memory_format=layout).detach().requires_grad_(True)
            out = F.avg_pool2d(xi, 3, stride=1, padding=1, count_include_pad=False)
            weight = torch.arange(out.numel(), dtype=out.dtype, device=device).reshape(out.shape) / 11.0
            (out * weight).sum().backward()
            assert xi.grad is not None
            grads.append(xi.grad.contiguous())
        _CHECKED[key] = bool(torch.allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5))
    return _CHECKED[key]


def _padded_pools(model: "torch.nn.Module") -> list["torch.nn.Module"]:
    import torch

    def padded(m: torch.nn.Module) -> bool:
        pad = getattr(m, "padding", 0)
        return isinstance(m, torch.nn.AvgPool2d) and any(int(p) > 0 for p in (pad if isinstance(pad, tuple) else (pad,)))

    return [m for m in model.modules() if padded(m)]


@contextlib.contextmanager
def pool_in_nchw(model: "torch.nn.Module") -> Iterator[int]:
    """While open, every padded `torch.nn.AvgPool2d` of `model` pools a contiguous copy of a
    channels_last input and hands back a channels_last output; yields how many pools it covers.
    The hooks are removed on exit."""
    import torch

    def before(_m: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        x = args[0]
        return (x.contiguous(), *args[1:])

    def after(_m: Any, _args: Any, out: "torch.Tensor") -> "torch.Tensor":
        return out.contiguous(memory_format=torch.channels_last)

    handles = []
    pools = _padded_pools(model)
    try:
        for m in pools:
            handles.append(m.register_forward_pre_hook(before))
            handles.append(m.register_forward_hook(after))
        yield len(pools)
    finally:
        for h in handles:
            h.remove()
