import math

import pytest
import torch

from nasenergy.errors import UsageError
from nasenergy.proxies.compute import compute_arch_proxies, compute_proxies
from nasenergy.proxies.registry import proxy_names

from proxy_nets import CLASSES, SHAPE, ZERO_CELL, tiny_net

FAST = dict(batch_size=6, seed=0)


@pytest.fixture(scope="module")
def reports(tss_nets):
    out = {}
    for name in ("skip", "conv", "zero"):
        out[name] = compute_proxies(tss_nets[name], (3, 8, 8), 120, **FAST)
    out["skip_again"] = compute_proxies(tss_nets["skip"], (3, 8, 8), 120, **FAST)
    return out


def test_every_registered_proxy_is_computed_timed_and_labelled(reports):
    r = reports["skip"]
    assert r.names() == proxy_names()
    for x in r:
        assert x.source == "measured" and x.cost_s > 0 and x.device == "cpu" and x.seed == 0
    assert r["synflow"].batch_size == 1 and r["synflow"].data == "ones"
    assert r["jacov"].batch_size == 6 and r["jacov"].data == "gaussian"
    assert r["flops"].data == "none"


def test_each_proxy_is_deterministic_given_the_seed(reports):
    assert reports["skip"].scores() == reports["skip_again"].scores()


def test_each_proxy_tells_two_networks_apart(reports):
    a, b = reports["skip"].scores(), reports["conv"].scores()
    assert all(a[n] != b[n] for n in proxy_names())


def test_another_batch_seed_changes_the_data_dependent_proxies_only(tss_nets):
    other = compute_proxies(tss_nets["skip"], (3, 8, 8), 120, batch_size=6, seed=1).scores()
    base = compute_proxies(tss_nets["skip"], (3, 8, 8), 120, **FAST).scores()
    assert other["jacov"] != base["jacov"] and other["naswot"] != base["naswot"]
    assert other["synflow"] == base["synflow"] and other["params"] == base["params"]


def test_a_network_blind_to_its_input_gets_defined_scores_and_reasons(reports):
    r = reports["zero"]
    assert r["jacov"].score == -math.inf and r["naswot"].score == -math.inf
    assert r["synflow"].score == 0 and r["snip"].score == 0 and r["grad_norm"].score == 0
    assert all(r[n].reason for n in ("synflow", "jacov", "naswot", "snip", "grad_norm"))
    assert r["params"].score > 0 and not r["params"].reason


def test_the_callers_network_is_left_as_it_was():
    net = tiny_net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    compute_proxies(net, SHAPE, CLASSES, batch_size=4)
    assert not net.training
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert all(p.grad is None for p in net.parameters())


def test_an_architecture_is_scored_on_its_deployed_network(tss):
    r = compute_arch_proxies(tss, ZERO_CELL, "ImageNet16-120", names=["params", "jacov"], batch_size=4)
    assert r.names() == ("params", "jacov") and r.input_shape == (3, 16, 16) and r.num_classes == 120
    assert r.network == ZERO_CELL and r.init_seed == 0
    assert r["params"].score == tss.count_deployed(ZERO_CELL, "ImageNet16-120").params


def test_bad_requests_are_usage_errors():
    with pytest.raises(UsageError, match="unknown proxy"):
        compute_proxies(tiny_net(), SHAPE, CLASSES, names=["fisher"])
    with pytest.raises(UsageError, match="device"):
        compute_proxies(tiny_net(), SHAPE, CLASSES, device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(UsageError, match="no CUDA"):
            compute_proxies(tiny_net(), SHAPE, CLASSES, device="cuda")
