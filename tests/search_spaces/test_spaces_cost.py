"""Parameter and MAC counts equal NATS-Bench's official records and the built networks."""

from __future__ import annotations

import pytest

from search_spaces import DATASETS, ModelCost, get_space

RECORD_DATASETS = (*DATASETS, "cifar10-valid")


@pytest.mark.parametrize("dataset", RECORD_DATASETS)
@pytest.mark.parametrize("index", [0, 11, 284])
@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_count_equals_official_records(space_name, index, dataset, official_records):
    rows = [
        r for r in official_records if r["space"] == space_name and int(r["arch_index"]) == index and r["dataset"] == dataset
    ]
    assert rows, "no official record for this case"
    space = get_space(space_name)
    cost = space.count(space.arch_at(index), dataset)
    for row in rows:  # every seed and schedule stores the same figures
        assert str(space.arch_at(index)) == row["arch_str"]
        assert cost.params_m == pytest.approx(float(row["params_M"]), abs=5e-7)
        assert cost.nats_flops_m == pytest.approx(float(row["flops_M"]), abs=5e-7)
    assert cost.flops == 2 * cost.macs


def test_known_counts_without_data_files():
    tss = get_space("tss")
    cost = tss.count(tss.arch_at(11), "cifar10")
    assert cost == ModelCost(params=802_426, macs=113_951_370, flops=227_902_740)
    assert cost.params_m == pytest.approx(0.802426) and cost.nats_flops_m == pytest.approx(113.95137)


def test_model_cost_rejects_inconsistent_flops():
    with pytest.raises(ValueError):
        ModelCost(params=1, macs=10, flops=10)


def test_count_properties_over_the_whole_tss_space():
    tss = get_space("tss")
    costs = {arch: tss.count(arch, "cifar10") for arch in tss.enumerate()}
    all_none = tss.parse("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|")
    all_conv = tss.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|")
    smallest = min(costs.values(), key=lambda c: c.macs)
    largest = max(costs.values(), key=lambda c: c.macs)
    assert costs[all_none] == smallest and costs[all_conv] == largest
    # Parameter-free ops cost nothing: swapping skip / pool / none leaves the count unchanged.
    for arch in tss.sample(100, seed=4):
        free = tuple("none" if op in ("skip_connect", "avg_pool_3x3") else op for op in arch.ops)
        assert costs[arch] == costs[type(arch)(free)]


def _torch_counts(model, input_shape):
    """Parameters, and MACs per image by NATS-Bench's rule (convolutions and linear layers only)."""
    import torch

    macs = []

    def conv_hook(module, inputs, output):
        kh, kw = module.kernel_size
        per_pixel = kh * kw * module.in_channels * module.out_channels // module.groups
        macs.append(per_pixel * output.shape[2] * output.shape[3] + (0 if module.bias is None else output[0].numel()))

    def linear_hook(module, inputs, output):
        macs.append(module.in_features * module.out_features + module.out_features)

    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            module.register_forward_hook(conv_hook)
        elif isinstance(module, torch.nn.Linear):
            module.register_forward_hook(linear_hook)
    with torch.no_grad():
        model(torch.zeros(1, *input_shape))
    return sum(p.numel() for p in model.parameters()), sum(macs)


@pytest.mark.parametrize("space_name", ["tss", "sss"])
@pytest.mark.parametrize("dataset", DATASETS)
def test_count_equals_the_built_network(space_name, dataset, torch_single_thread):
    space = get_space(space_name)
    for arch in [space.arch_at(11), *space.sample(2, seed=DATASETS.index(dataset))]:
        params, macs = _torch_counts(space.build(arch, dataset), space.input_shape(dataset))
        cost = space.count(arch, dataset)
        assert (cost.params, cost.macs) == (params, macs), str(arch)
