"""snip: the connection sensitivity of Lee et al. (2019), summed over the network as a NAS proxy by
Abdelfattah et al. (2021).

N. Lee, T. Ajanthan, P. H. S. Torr, "SNIP: Single-shot Network Pruning based on Connection
Sensitivity", ICLR 2019; M. S. Abdelfattah et al., "Zero-Cost Proxies for Lightweight NAS", ICLR 2021.

Definition: with the cross-entropy loss ``L`` of one batch (images and labels of
`nasenergy.proxies.data`, 64 by default), the score is ``sum |dL/dw * w|`` over the weights of every
convolution and linear layer (the saliency ``|g * w|`` of each connection, summed). The network is
in train mode (batch norm uses the batch's statistics), as initialised by its builder.

A network whose output does not depend on its input gets no gradient into its weights but the
classifier's bias: its score is 0, with that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasenergy.proxies._common import ProxyContext, private_copy, weighted_layers
from nasenergy.proxies.result import ProxyValue

if TYPE_CHECKING:
    from torch import nn

__all__ = ["loss_gradients", "snip"]


def loss_gradients(model: nn.Module, ctx: ProxyContext) -> nn.Module:
    """A private train-mode copy of `model` holding the gradients of the batch's cross-entropy."""
    import torch.nn.functional as F  # lazy: torch

    assert ctx.batch is not None, "a loss-gradient proxy needs an input batch"
    net = private_copy(model, ctx.device, train=True)
    F.cross_entropy(net(ctx.batch.images), ctx.batch.labels).backward()
    return net


def snip(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """The snip score of `model` on ``ctx.batch`` (see the module docstring)."""
    import torch  # lazy: torch

    net = loss_gradients(model, ctx)
    with torch.no_grad():
        total = torch.zeros((), dtype=torch.float64, device=ctx.device)
        for layer in weighted_layers(net):
            if layer.weight.grad is not None:
                total += (layer.weight.grad * layer.weight).abs().sum().to(torch.float64)
    score = float(total)
    return ProxyValue(score, "no weight receives a gradient from the loss" if score == 0 else "")
