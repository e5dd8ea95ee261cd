"""The proxy registry: every zero-cost proxy (``--proxy``, `compute_proxies`) is one registered
`ProxyKind`.

A new proxy is one function ``fn(model, ctx: ProxyContext) -> ProxyValue`` plus one call::

    from nasenergy.proxies.registry import ProxyKind, register_proxy
    register_proxy(ProxyKind("myproxy", "mypackage.myproxy:score", needs_data=True, unit="score"))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nasenergy._registry import Registry, resolve

if TYPE_CHECKING:
    from torch import nn

    from nasenergy.proxies._common import ProxyContext
    from nasenergy.proxies.result import ProxyValue

__all__ = ["PROXIES", "ProxyKind", "proxy_kind", "proxy_names", "register_proxy"]


@dataclass(frozen=True)
class ProxyKind:
    """One proxy.

    Attributes:
        name: its name (a column of the recorded tables).
        function: ``fn(model, ctx) -> ProxyValue``, or a ``"module:attribute"`` string naming it.
        needs_data: whether it reads the input batch (else it runs data-free).
        unit: what its score counts.
        batch: the batch it runs on: ``"data"`` (the input batch), ``"ones"`` (one all-ones image)
            or ``"none"`` (no forward pass on data).
        higher_is_better: whether a higher score predicts a more accurate network (False for the
            sizes, which are not predictions).
        reference: the paper that defines it.
    """

    name: str
    function: Callable[[nn.Module, ProxyContext], ProxyValue] | str
    needs_data: bool
    unit: str
    batch: str = "data"
    higher_is_better: bool = True
    reference: str = ""

    def compute(self, model: nn.Module, ctx: ProxyContext) -> ProxyValue:
        """Run the proxy on `model`."""
        return resolve(self.function)(model, ctx)


PROXIES: Registry[ProxyKind] = Registry("proxy", plugin_group="nasenergy.proxies")
"""The registered proxies by name."""


def register_proxy(kind: ProxyKind, *, replace: bool = False) -> ProxyKind:
    """Make ``kind`` selectable (`compute_proxies`, ``--proxy``)."""
    return PROXIES.register(kind.name, kind, replace=replace)


def proxy_kind(name: str) -> ProxyKind:
    """The registered `ProxyKind` called `name`.

    Raises:
        UsageError: no such proxy.
    """
    return PROXIES.get(name)


def proxy_names() -> tuple[str, ...]:
    """Every registered proxy, in registration order."""
    return PROXIES.names()


_ABDELFATTAH = "Abdelfattah et al., Zero-Cost Proxies for Lightweight NAS, ICLR 2021"
register_proxy(ProxyKind("synflow", "nasenergy.proxies.synflow:synflow", needs_data=False, unit="score",
                         batch="ones", reference="Tanaka et al., NeurIPS 2020; " + _ABDELFATTAH))
register_proxy(ProxyKind("jacov", "nasenergy.proxies.jacov:jacov", needs_data=True, unit="score",
                         reference="Mellor et al., arXiv:2006.04647v1, 2020; " + _ABDELFATTAH))
register_proxy(ProxyKind("naswot", "nasenergy.proxies.naswot:naswot", needs_data=True, unit="log-det",
                         reference="Mellor et al., Neural Architecture Search without Training, ICML 2021"))
register_proxy(ProxyKind("snip", "nasenergy.proxies.snip:snip", needs_data=True, unit="score",
                         reference="Lee et al., SNIP, ICLR 2019; " + _ABDELFATTAH))
register_proxy(ProxyKind("grad_norm", "nasenergy.proxies.grad_norm:grad_norm", needs_data=True, unit="score",
                         reference=_ABDELFATTAH))
register_proxy(ProxyKind("flops", "nasenergy.proxies.counts:flops", needs_data=False, unit="flop/img",
                         batch="none", higher_is_better=False))
register_proxy(ProxyKind("params", "nasenergy.proxies.counts:params", needs_data=False, unit="params",
                         batch="none", higher_is_better=False))
