"""Numeric precision modes: tensor dtypes and the PyTorch flags that select TF32."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    import torch


def dtype_of(precision: str) -> "torch.dtype":
    """The tensor dtype of a precision mode (``fp32`` and ``tf32`` both compute on float32)."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision, torch.float32)


@contextlib.contextmanager
def precision_flags(precision: str, *, cudnn_benchmark: bool | None = None) -> Iterator[None]:
    """Set PyTorch's TF32 flags for `precision` (on only for ``tf32``) and restore them after.

    PyTorch lets cuDNN use TF32 for float32 convolutions by default; inside this context ``fp32``
    really is IEEE float32 and ``tf32`` enables TF32 for both matrix products and convolutions.

    Args:
        precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
        cudnn_benchmark: also set ``torch.backends.cudnn.benchmark`` (restored after); ``None``
            leaves it alone.
    """
    import torch

    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.benchmark)
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    if cudnn_benchmark is not None:
        torch.backends.cudnn.benchmark = cudnn_benchmark
    try:
        yield
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cudnn.benchmark) = saved


def has_conv(model: "torch.nn.Module") -> bool:
    """Whether `model` contains a 2-D convolution (where channels-last memory helps)."""
    import torch

    return any(isinstance(m, torch.nn.Conv2d) for m in model.modules())
