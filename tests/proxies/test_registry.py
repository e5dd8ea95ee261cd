import pytest

from nasenergy.errors import UsageError
from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.compute import compute_proxies
from nasenergy.proxies.registry import PROXIES, ProxyKind, proxy_kind, proxy_names, register_proxy
from nasenergy.proxies.result import ProxyValue

from proxy_nets import CLASSES, SHAPE, tiny_net


def test_the_built_in_proxies_are_registered_in_table_order():
    assert proxy_names() == ("synflow", "jacov", "naswot", "snip", "grad_norm", "flops", "params")
    assert not proxy_kind("synflow").needs_data and proxy_kind("naswot").needs_data
    with pytest.raises(UsageError, match="choose from"):
        proxy_kind("fisher")


def test_a_registered_proxy_is_computed_like_the_built_in_ones():
    def depth(model, ctx: ProxyContext) -> ProxyValue:
        return ProxyValue(float(len(list(model.modules()))))

    register_proxy(ProxyKind("depth", depth, needs_data=False, unit="modules", batch="none"))
    try:
        r = compute_proxies(tiny_net(), SHAPE, CLASSES, names=["depth"])
        assert r["depth"].score == 10 and r["depth"].unit == "modules"
        with pytest.raises(UsageError, match="already registered"):
            register_proxy(ProxyKind("depth", depth, needs_data=False, unit="modules"))
    finally:
        PROXIES.unregister("depth")
