"""FLOPs and parameters of the network, next to the proxies: the size baselines every zero-cost
proxy study reports (Abdelfattah et al. 2021, Table 1; NAS-Bench-Suite-Zero 2022).

FLOPs are counted by `nasenergy.hardware.flops.count_model` (PyTorch's flop counter, one image,
``2 * MACs``), parameters as every parameter tensor's element count, of the network given (for a
NATS architecture, its deployed network, not NATS-Bench's network as built).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasenergy.hardware.flops import count_model
from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.result import ProxyValue

if TYPE_CHECKING:
    from torch import nn

__all__ = ["flops", "params"]


def flops(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """Floating-point operations per image of `model` (``2 * MACs``; element-wise work not counted)."""
    return ProxyValue(float(count_model(model, ctx.input_shape).flops_per_img))


def params(model: nn.Module, ctx: ProxyContext) -> ProxyValue:
    """Number of parameters of `model`."""
    return ProxyValue(float(sum(p.numel() for p in model.parameters())))
