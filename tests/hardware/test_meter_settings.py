"""Meter settings: the named settings, variants for benchmarks, and the analytic counts they use."""

from __future__ import annotations

import inspect

import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware.meter_settings import (
    DEFAULT_METER_SETTING,
    METER_SETTINGS,
    get_setting,
    parse_setting,
)


def test_the_default_is_the_single_window_setting_and_full_is_the_meters_own_defaults():
    fast, full = get_setting(DEFAULT_METER_SETTING), get_setting("full")
    assert fast.name == "fast" and fast.analytic_counts
    assert fast.meter_options["energy_repeats"] == 1 and fast.meter_options["throughput_from_energy"] is True
    assert fast.meter_options["energy_warmup_s"] == 0.0 and fast.meter_options["energy_window_s"] >= 0.28
    assert dict(full.meter_options) == {} and not full.analytic_counts


def test_every_setting_names_only_options_the_cuda_meter_takes():
    from nasenergy.hardware.cuda_meter import CudaMeter

    takes = set(inspect.signature(CudaMeter).parameters)
    for setting in METER_SETTINGS.values():
        assert set(setting.meter_options) <= takes, setting.name


def test_a_variant_changes_only_what_it_names():
    v = parse_setting("fast:energy_window_s=0.38, energy_warmup_s=0.05,analytic_counts=no")
    assert v.name == "fast:energy_window_s=0.38, energy_warmup_s=0.05,analytic_counts=no"
    assert v.meter_options["energy_window_s"] == 0.38 and v.meter_options["energy_warmup_s"] == 0.05
    assert v.meter_options["energy_repeats"] == 1 and not v.analytic_counts
    assert parse_setting(" full ") is get_setting("full")
    with pytest.raises(TypeError):
        v.meter_options["energy_repeats"] = 3          # settings are read-only


@pytest.mark.parametrize("spec", ["quick", "fast:energy_window=0.3", "fast:energy_window_s", "fast:energy_repeats=two",
                                  "full:throughput_from_energy=maybe"])
def test_bad_settings_are_one_line_usage_errors(spec):
    with pytest.raises(UsageError) as ei:
        parse_setting(spec)
    assert "\n" not in str(ei.value)


def test_the_analytic_count_is_what_pytorch_counts():
    from search_spaces import get_space

    from nasenergy.hardware.deployed import deployed_count
    from nasenergy.hardware.flops import count_model

    for name, index, dataset in (("tss", 8466, "cifar10"), ("tss", 1234, "cifar100"), ("sss", 77, "cifar10")):
        space = get_space(name)
        arch = space.arch_at(index)
        counted = count_model(space.build_deployed(arch, dataset), space.input_shape(dataset))
        assert deployed_count(space, arch, dataset) == counted, (name, index)


def test_analytic_counts_reach_the_meter_without_counting(monkeypatch):
    import torch.utils.flop_counter as fc
    from search_spaces import get_space

    from nasenergy.hardware.deployed import deployed_count, deployed_measurer
    from nasenergy.testing import FakeMeter

    class NoCounting:
        def __init__(self, *a, **k):
            raise AssertionError("FLOPs were counted")

    space = get_space("tss")
    arch = space.arch_at(8466)
    measure = deployed_measurer(FakeMeter(), space, "cifar10", batch_size=1024, precision="fp16", analytic_counts=True)
    monkeypatch.setattr(fc, "FlopCounterMode", NoCounting)
    m = measure(arch)
    assert m.flops_per_img == deployed_count(space, arch, "cifar10").flops_per_img
    counting = deployed_measurer(FakeMeter(), space, "cifar10", batch_size=1024, precision="fp16")
    with pytest.raises(AssertionError, match="FLOPs were counted"):
        counting(arch)
