"""synflow: the data-free synaptic-flow score of Tanaka et al. (2020), as a NAS proxy by
Abdelfattah et al. (2021).

H. Tanaka, D. Kunin, D. L. K. Yamins, S. Ganguli, "Pruning neural networks without any data by
iteratively conserving synaptic flow", NeurIPS 2020; M. S. Abdelfattah, A. Mehrotra, L. Dudziak,
N. D. Lane, "Zero-Cost Proxies for Lightweight NAS", ICLR 2021.

Definition: every parameter and buffer is replaced by its absolute value (the network is
"sign-linearised"), the network is cast to float64, and one all-ones input (batch size 1) is passed
forward; ``R = sum(outputs)`` is back-propagated, and the score is ``sum |theta * dR/dtheta|`` over
the weights of every convolution and linear layer. Batch norm is used in eval mode, with the running
statistics of the initialisation (mean 0, variance 1), so it reduces to its (absolute) affine scale
and shift: the effect of Abdelfattah et al.'s "synflow without batch norm" and of Tanaka et al.'s
pruning loop, which scores in eval mode. No data is used; the score depends on the weights (the
network builder's seeded initialisation) only.

A network whose output does not depend on its input gets no gradient into any convolution, and a
score of 0 with a reason when every weight's score is zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasenergy.proxies._common import ProxyContext, private_copy, weighted_layers
from nasenergy.proxies.result import ProxyValue

if TYPE_CHECKING:
    from torch import nn

__all__ = ["synflow"]


def synflow(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """The synflow score of `model` (see the module docstring); batch size 1, all-ones input."""
    import torch  # lazy: torch

    net = private_copy(model, ctx.device, train=False, dtype=torch.float64)
    with torch.no_grad():
        for tensor in net.state_dict().values():
            if tensor.is_floating_point():
                tensor.abs_()
    ones = torch.ones((1, *ctx.input_shape), dtype=torch.float64, device=ctx.device)
    torch.sum(net(ones)).backward()
    with torch.no_grad():
        total = torch.zeros((), dtype=torch.float64, device=ctx.device)
        for layer in weighted_layers(net):
            if layer.weight.grad is not None:
                total += (layer.weight * layer.weight.grad).abs().sum()
    score = float(total)
    return ProxyValue(score, "no weight lies on a path from the input to the output" if score == 0 else "")
