"""Image augmentation on batches already on the training device: random crop with zero padding
and horizontal flip (NATS-Bench's), then per-channel normalisation, all from one seeded
`torch.Generator` (never the global RNG)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def augment_batch(x: "torch.Tensor", *, padding_px: int, hflip: bool, generator: "torch.Generator") -> "torch.Tensor":
    """Randomly crop (after zero padding of `padding_px` on every side) and flip a batch.

    Args:
        x: images ``(N, C, H, W)``, raw scale (padding is black, as torchvision's ``RandomCrop``).
        padding_px: padding in pixels; 0 leaves the crop out.
        hflip: flip each image left-right with probability 1/2.
        generator: the random stream (on ``x``'s device).

    Returns:
        A new tensor of ``x``'s shape.
    """
    import torch
    import torch.nn.functional as F

    n, _, h, w = x.shape
    if padding_px > 0:
        padded = F.pad(x, (padding_px, padding_px, padding_px, padding_px))
        dy = torch.randint(0, 2 * padding_px + 1, (n,), device=x.device, generator=generator)
        dx = torch.randint(0, 2 * padding_px + 1, (n,), device=x.device, generator=generator)
        rows = (dy[:, None] + torch.arange(h, device=x.device)[None, :])[:, None, :, None]
        cols = (dx[:, None] + torch.arange(w, device=x.device)[None, :])[:, None, None, :]
        batch = torch.arange(n, device=x.device)[:, None, None, None]
        chans = torch.arange(x.shape[1], device=x.device)[None, :, None, None]
        x = padded[batch, chans, rows, cols]
    if hflip:
        flip = torch.rand((n,), device=x.device, generator=generator) < 0.5
        x = torch.where(flip[:, None, None, None], x.flip(3), x)
    return x


def normalise(x: "torch.Tensor", mean: "torch.Tensor", std: "torch.Tensor") -> "torch.Tensor":
    """``(x - mean) / std`` per channel; `mean` and `std` have shape ``(1, C, 1, 1)``."""
    return (x - mean) / std
