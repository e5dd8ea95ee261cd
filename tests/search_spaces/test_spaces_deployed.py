"""The deployed form of a network: the as-built function without dead or zero ops."""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import torch
from torch import nn

from nasenergy.hardware.flops import count_model
from search_spaces import get_space
from search_spaces._deployed import ZERO_KEY, deploy_plan, live_edges
from search_spaces._nets import Cell, DeployedNetwork, deploy_network
from search_spaces._tss_order import TSS_SIZE

TSS = get_space("tss")
SSS = get_space("sss")
CHUNKS = 16


def _randomise_batch_norms(net: nn.Module, gen: torch.Generator) -> None:
    """Random affine parameters and running statistics, so that no op is an identity by chance."""
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.copy_(torch.rand(module.weight.shape, generator=gen) + 0.5)
                module.bias.copy_(torch.randn(module.bias.shape, generator=gen))
                module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=gen))
                module.running_var.copy_(torch.rand(module.running_var.shape, generator=gen) + 0.5)


def _worst_error(space_name: str, indices: list[int]) -> tuple[float, list[int]]:
    """Largest relative output difference over `indices`, and the indices over the tolerance."""
    torch.set_num_threads(1)
    space = get_space(space_name)
    gen = torch.Generator().manual_seed(indices[0])
    worst, bad = 0.0, []
    for index in indices:
        net = space.build(space.arch_at(index), "cifar10", seed=index)
        _randomise_batch_norms(net, gen)
        deployed = deploy_network(net)
        x = torch.randn(2, 3, 8, 8, generator=gen)
        with torch.no_grad():
            want, got = net(x), deployed(x)
        error = float((want - got).abs().max() / want.abs().max().clamp_min(1e-12))
        worst = max(worst, error)
        if not error <= 1e-5:  # fp32 rounding of sums taken in another order; NaN fails
            bad.append(index)
    return worst, bad


@pytest.mark.slow
def test_every_tss_deployed_network_computes_the_as_built_function() -> None:
    chunks = [list(range(i, TSS_SIZE, CHUNKS)) for i in range(CHUNKS)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_worst_error, ["tss"] * CHUNKS, chunks))
    bad = sorted(i for _, chunk_bad in results for i in chunk_bad)
    assert not bad, f"{len(bad)} cells differ, e.g. {TSS.arch_at(bad[0])}"
    assert sum(len(c) for c in chunks) == TSS_SIZE


def test_a_sample_of_tss_deployed_networks_computes_the_as_built_function() -> None:
    """The fast suite's share of the exhaustive test above: one cell of each of 64 deployed
    networks drawn at random (seeded), so many structures are checked in seconds."""
    by_key: dict[str, int] = {}
    for index in range(TSS_SIZE):
        by_key.setdefault(TSS.deployed_key(TSS.arch_at(index)), index)
    keys = sorted(by_key)
    chosen = [by_key[keys[int(k)]] for k in np.random.default_rng(2).choice(len(keys), 64, replace=False)]
    worst, bad = _worst_error("tss", sorted(chosen))
    assert not bad and worst < 1e-5


def test_sss_deployed_networks_compute_the_as_built_function() -> None:
    indices = [int(i) for i in np.random.default_rng(0).choice(SSS.size, 24, replace=False)]
    worst, bad = _worst_error("sss", indices)
    assert not bad and worst < 1e-5


def test_the_comparison_sees_a_wrong_deployed_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import search_spaces._nets as nets

    real = nets.deploy_plan
    # pretend every cell's zero-fed convolutions are dead: the outputs then differ
    monkeypatch.setattr(nets, "deploy_plan", lambda ops, wc=False: real(tuple("none" if o == "nor_conv_3x3" else o for o in ops), wc))
    arch = TSS.parse("|none~0|+|skip_connect~0|nor_conv_3x3~1|+|none~0|none~1|skip_connect~2|")
    _, bad = _worst_error("tss", [TSS.index(arch)])
    assert bad


def test_members_of_a_deployed_class_have_identical_networks() -> None:
    by_key: dict[str, set] = defaultdict(set)
    for arch in TSS.enumerate():
        plan = deploy_plan(arch.ops)
        cost = TSS.count_deployed(arch)
        structure = tuple((step.kind, step.inputs, step.op) for step in plan.steps)
        by_key[TSS.deployed_key(arch)].add((cost.params, cost.flops, structure, plan.output))
    assert all(len(members) == 1 for members in by_key.values())
    assert len(by_key) == len(TSS.deployed_classes()) == 6040


def test_the_as_built_costs_stay_the_official_ones_and_the_deployed_never_exceed_them() -> None:
    for arch in TSS.enumerate():
        built, deployed = TSS.count(arch), TSS.count_deployed(arch)
        assert deployed.params <= built.params and deployed.flops <= built.flops
    dead = TSS.parse("|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|")
    assert TSS.count_deployed(dead).flops < TSS.count(dead).flops
    assert TSS.deployed_key(dead) == TSS.deployed_key("|none~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|") == "x"


def test_the_counted_flops_of_deployed_networks_match_the_analytic_count() -> None:
    for index in np.random.default_rng(1).choice(TSS_SIZE, 40, replace=False):
        arch = TSS.arch_at(int(index))
        counted = count_model(TSS.build_deployed(arch), (3, 32, 32))
        analytic = TSS.count_deployed(arch)
        # PyTorch's counter leaves out the classifier bias, which NATS-Bench counts as 1 MAC per class
        assert counted.flops_per_img == analytic.flops - 2 * 10
        assert counted.params == analytic.params


@pytest.mark.parametrize(
    ("cell", "live"),
    [
        # none edges are never computed; the conv into node 1 never reaches the output
        ("|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|", (False, False, False, True, False, False)),
        # node 1 is fed only by zeros: the skip leaving it adds zeros, the conv BN's constant
        ("|none~0|+|skip_connect~0|nor_conv_3x3~1|+|none~0|skip_connect~1|avg_pool_3x3~2|", (False, True, True, False, False, True)),
        ("|none~0|+|skip_connect~0|avg_pool_3x3~1|+|none~0|skip_connect~1|avg_pool_3x3~2|", (False, True, False, False, False, True)),
        # disconnected: nothing reaches the output
        ("|nor_conv_3x3~0|+|avg_pool_3x3~0|nor_conv_1x1~1|+|none~0|none~1|none~2|", (False,) * 6),
    ],
)
def test_live_edges(cell: str, live: tuple[bool, ...]) -> None:
    assert live_edges(TSS.parse(cell).ops) == live


def test_a_disconnected_network_computes_nothing_upstream() -> None:
    arch = TSS.parse("|nor_conv_3x3~0|+|avg_pool_3x3~0|nor_conv_1x1~1|+|none~0|none~1|none~2|")
    deployed = TSS.build_deployed(arch)
    assert isinstance(deployed, DeployedNetwork) and deployed.stem is None
    assert not any(isinstance(m, (Cell, nn.Conv2d)) for m in deployed.layers.modules())
    assert TSS.deployed_key(arch) == ZERO_KEY
    assert TSS.count_deployed(arch).params == 2 * 64 + 64 * 10 + 10
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(deployed(x), TSS.build(arch)(x), rtol=1e-6, atol=1e-6)


def test_a_conv_of_zeros_is_computed_when_it_reaches_the_output() -> None:
    # node 1 is zero; ReLU-conv-BN of zeros is BN's constant, which reaches the output
    arch = TSS.parse("|none~0|+|skip_connect~0|nor_conv_3x3~1|+|none~0|none~1|skip_connect~2|")
    assert live_edges(arch.ops) == (False, True, True, False, False, True)
    assert TSS.deployed_key(arch) == "(nor_conv_3x3(0)+x)"
    only_constant = TSS.parse("|none~0|+|none~0|nor_conv_1x1~1|+|none~0|none~1|skip_connect~2|")
    assert TSS.deployed_key(only_constant).startswith("const:")
    deployed = TSS.build_deployed(only_constant)
    assert deployed.stem is None and sum(isinstance(m, nn.Conv2d) for m in deployed.modules()) == 1
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(deployed(x), TSS.build(only_constant)(x), rtol=1e-6, atol=1e-6)


def test_a_conv_read_twice_and_two_convs_are_different_deployed_networks() -> None:
    # NAS-Bench-201 puts both in one class; the first has one 1x1 convolution, the second two
    shared = TSS.parse("|nor_conv_1x1~0|+|none~0|skip_connect~1|+|skip_connect~0|skip_connect~1|skip_connect~2|")
    two = TSS.parse("|nor_conv_1x1~0|+|nor_conv_1x1~0|none~1|+|skip_connect~0|skip_connect~1|skip_connect~2|")
    assert TSS.deployed_key(shared) != TSS.deployed_key(two)
    assert TSS.count_deployed(shared).params < TSS.count_deployed(two).params


def test_the_readme_example_prints_what_it_says() -> None:
    arch = TSS.parse("|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|")
    assert (TSS.count(arch).params, TSS.count_deployed(arch).params, TSS.deployed_key(arch)) == (316346, 73306, "x")
