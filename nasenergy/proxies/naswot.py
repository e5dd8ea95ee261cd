"""NASWOT: the log-determinant of the ReLU-code kernel of Mellor et al. (2021).

J. Mellor, J. Turner, A. Storkey, E. J. Crowley, "Neural Architecture Search without Training",
ICML 2021.

Definition: for a batch of N images, every ReLU's input is read; unit j is *active* for image i
when that input is > 0, giving each image a binary code ``c_i`` over all ReLU units of the network.
The kernel ``K_H[i, l] = N_A - d_H(c_i, c_l)`` counts the units where two codes agree (computed as
``c c^T + (1 - c)(1 - c)^T``, accumulated over the ReLUs as in the authors' code), and the score is
``log |det K_H|``. Higher (more distinct codes) predicts a better network. The network is in train
mode (batch norm uses the batch's statistics), as initialised by its builder; the batch is
`nasenergy.proxies.data`'s (64 images by default; the paper uses 128).

When two images share a code (e.g. a network whose output does not depend on its input: every
image then has the same code), ``K_H`` is singular and the score is ``-inf`` with that reason; a
network without ReLUs scores ``-inf`` too.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from nasenergy.proxies._common import ProxyContext, private_copy
from nasenergy.proxies.result import ProxyValue

if TYPE_CHECKING:
    from torch import nn

__all__ = ["naswot"]


def naswot(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """The NASWOT score of `model` on ``ctx.batch`` (see the module docstring)."""
    import torch  # lazy: torch
    from torch import nn  # lazy: torch

    assert ctx.batch is not None, "naswot needs an input batch"
    net = private_copy(model, ctx.device, train=True)
    n = ctx.batch.batch_size
    kernel = torch.zeros((n, n), dtype=torch.float64, device=ctx.device)
    n_units = 0

    def hook(_module: nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
        nonlocal kernel, n_units
        codes = (inputs[0].detach().reshape(n, -1) > 0).to(torch.float64)
        kernel += codes @ codes.T + (1.0 - codes) @ (1.0 - codes).T
        n_units += codes.shape[1]

    handles = [m.register_forward_pre_hook(hook) for m in net.modules() if isinstance(m, nn.ReLU)]
    try:
        with torch.no_grad():
            net(ctx.batch.images)
    finally:
        for h in handles:
            h.remove()
    if n_units == 0:
        return ProxyValue(-math.inf, "the network has no ReLU")
    sign, logdet = torch.linalg.slogdet(kernel)
    if float(sign) <= 0 or not math.isfinite(float(logdet)):
        return ProxyValue(-math.inf, "two images share a ReLU code (K_H is singular)")
    return ProxyValue(float(logdet))
