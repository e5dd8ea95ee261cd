"""jacov: the Jacobian-covariance score of Mellor et al. (2020), version 1 of "NAS without training".

J. Mellor, J. Turner, A. Storkey, E. J. Crowley, "Neural Architecture Search without Training",
arXiv:2006.04647v1 (2020); used as a zero-cost proxy by Abdelfattah et al., ICLR 2021.

Definition: for a batch of N images x_i, the Jacobian ``J_i = d(sum_k f_k(x_i)) / d x_i`` is taken
(the output summed over its logits, as in the authors' code); the N x N correlation matrix
``Sigma`` of the flattened Jacobians is formed, and with its eigenvalues ``lambda_j`` and
``k = 1e-5`` the score is ``-sum_j [log(lambda_j + k) + 1 / (lambda_j + k)]``. Higher (less
correlated Jacobians) predicts a better network. The network is in train mode (batch norm uses the
batch's statistics), as initialised by its builder; the batch is `nasenergy.proxies.data`'s (64
images by default).

A network whose output does not depend on its input has zero Jacobians, whose correlation is
undefined: its score is ``-inf`` (the worst), with that reason; so is a network where any image's
Jacobian is constant.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from nasenergy.proxies._common import ProxyContext, private_copy
from nasenergy.proxies.result import ProxyValue

if TYPE_CHECKING:
    from torch import nn

K = 1e-5
"""The eigenvalue offset of the score (Mellor et al.'s ``k``)."""

__all__ = ["K", "jacov", "jacov_score"]


def jacov_score(jacobians: np.ndarray) -> ProxyValue:
    """The score of the flattened Jacobians ``(N, D)`` (see the module docstring)."""
    jac = np.asarray(jacobians, dtype=np.float64)
    if not np.any(jac):
        return ProxyValue(-math.inf, "the output does not depend on the input (zero Jacobian)")
    if np.any(np.ptp(jac, axis=1) == 0):
        return ProxyValue(-math.inf, "some image's Jacobian is constant: its correlation is undefined")
    eigenvalues = np.linalg.eigvalsh(np.corrcoef(jac))
    return ProxyValue(float(-np.sum(np.log(eigenvalues + K) + 1.0 / (eigenvalues + K))))


def jacov(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """The jacov score of `model` on ``ctx.batch`` (see the module docstring)."""
    import torch  # lazy: torch

    assert ctx.batch is not None, "jacov needs an input batch"
    net = private_copy(model, ctx.device, train=True)
    x = ctx.batch.images.clone().requires_grad_(True)
    y = net(x)
    if y.requires_grad:
        y.backward(torch.ones_like(y))
    grad = x.grad if x.grad is not None else torch.zeros_like(x)  # None: no path from the input
    return jacov_score(grad.detach().reshape(x.shape[0], -1).cpu().numpy())
