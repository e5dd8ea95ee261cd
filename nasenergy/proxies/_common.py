"""What the proxy functions share: the context they run in, a private copy of the network, and the
layers whose weights the gradient-based proxies score."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch
    from torch import nn

    from nasenergy.proxies.data import ProxyBatch

__all__ = ["ProxyContext", "private_copy", "weighted_layers"]


@dataclass(frozen=True)
class ProxyContext:
    """What a proxy function needs besides the network.

    Attributes:
        input_shape: one image's ``(channels, height, width)``.
        num_classes: the network's number of logits.
        device: the torch device the proxy runs on.
        batch: the input batch of the data-dependent proxies, already on `device` (``None`` for
            the data-free ones).
    """

    input_shape: tuple[int, int, int]
    num_classes: int
    device: str
    batch: ProxyBatch | None = None


def private_copy(model: nn.Module, device: str, *, train: bool, dtype: torch.dtype | None = None) -> nn.Module:
    """A deep copy of `model` on `device` (in `dtype` if given), in train or eval mode: a proxy may
    change weights, gradients and batch-norm statistics without touching the caller's network."""
    net = copy.deepcopy(model).to(device)
    if dtype is not None:
        net = net.to(dtype)
    net.train(train)
    for p in net.parameters():
        p.requires_grad_(True)
        p.grad = None
    return net


def weighted_layers(model: nn.Module) -> list[nn.Conv2d | nn.Linear]:
    """The convolutions and linear layers of `model`, in module order: the layers whose weights
    synflow, snip and grad_norm score (as Abdelfattah et al. 2021's ``get_layer_metric_array``)."""
    from torch import nn  # lazy: torch

    return [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
