"""grad_norm: the sum of the layers' gradient norms, a zero-cost proxy of Abdelfattah et al. (2021).

M. S. Abdelfattah, A. Mehrotra, L. Dudziak, N. D. Lane, "Zero-Cost Proxies for Lightweight NAS",
ICLR 2021.

Definition: with the cross-entropy loss ``L`` of one batch (images and labels of
`nasenergy.proxies.data`, 64 by default), the score is ``sum_l ||dL/dW_l||_2`` (Frobenius norm of
each weight gradient) over every convolution and linear layer. The network is in train mode (batch
norm uses the batch's statistics), as initialised by its builder.

A network whose output does not depend on its input scores 0 (no weight receives a gradient), with
that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasenergy.proxies._common import ProxyContext, weighted_layers
from nasenergy.proxies.result import ProxyValue
from nasenergy.proxies.snip import loss_gradients

if TYPE_CHECKING:
    from torch import nn

__all__ = ["grad_norm"]


def grad_norm(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """The grad_norm score of `model` on ``ctx.batch`` (see the module docstring)."""
    import torch  # lazy: torch

    net = loss_gradients(model, ctx)
    with torch.no_grad():
        total = torch.zeros((), dtype=torch.float64, device=ctx.device)
        for layer in weighted_layers(net):
            if layer.weight.grad is not None:
                total += layer.weight.grad.norm().to(torch.float64)
    score = float(total)
    return ProxyValue(score, "no weight receives a gradient from the loss" if score == 0 else "")
