"""The default parts: the dominance filter's energy bound matches what the front holds, and each
full evaluation draws its own reproducible seed."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.filter import ScaledBound
from nasenergy.search.command.components import default_energy_bound, make_dvfs, make_filter
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.loop.pipeline import evaluation_seed
from nasenergy.testing import FakeMeter


@pytest.fixture(scope="module")
def tss():
    from search_spaces import get_space

    return get_space("tss")


def test_the_modelled_bound_never_exceeds_the_modelled_optimum(tss):
    config = SearchConfig(dvfs="modelled")
    meter = FakeMeter(noise_cv=0.05, seed=1, device_name="fake H200")
    step = make_dvfs(config, meter, tss)
    assert step.source == "modelled" and "no margin" in step.bound_label
    ratios = []
    for arch in tss.sample(40, seed=2):
        m = meter.measure_arch(arch, precision="fp16", batch_size=1024)
        best = step.optimal_clock(arch, m).best.energy_j_per_img
        ratios.append(step.energy_bound(m) / best)
    assert max(ratios) <= 1.0  # safe: a candidate is never skipped on an energy it could not reach
    assert min(ratios) > 0.5  # and tighter than the fixed default optimism (half the default energy)


def test_without_dvfs_the_bound_is_the_measurement_itself(tss):
    config = SearchConfig(dvfs="none")
    assert make_dvfs(config, FakeMeter(device_name="fake H200"), tss) is None
    bound, label = default_energy_bound(config)
    assert bound == ScaledBound(energy_factor=1.0, noise_sigmas=0.0) and "no DVFS" in label
    assert make_filter(config).energy_bound == bound
    # A DVFS step without a parameter set of its own keeps the filter's fixed optimism.
    assert default_energy_bound(SearchConfig(dvfs="measured", allow_clock_control=True)).bound == ScaledBound()


def test_a_given_bound_reaches_the_filter():
    def bound(_m):
        return 1.0

    assert make_filter(SearchConfig(), energy_bound=bound).energy_bound is bound
    assert make_filter(SearchConfig(filter="none")).mode == "none"


def test_evaluation_seeds_are_reproducible_and_distinct():
    seeds = [evaluation_seed(0, n) for n in range(1000)]
    assert seeds == [evaluation_seed(0, n) for n in range(1000)]
    assert len(set(seeds)) == 1000 and all(0 <= s < 2**32 for s in seeds)
    assert evaluation_seed(1, 5) != evaluation_seed(0, 5)


def test_auto_on_a_gpu_without_parameters_uses_the_generic_model(tss):
    from nasenergy.hardware.nvml import open_device
    from nasenergy.testing import FakeGpu, FakeNvml

    name = "NVIDIA L4 (fake)"
    meter = FakeMeter(device_name=name, idle_power_w=16.0, max_power_w=70.0, sm_clock_mhz=2040.0)
    for mode in ("auto", "modelled"):
        with pytest.raises(UsageError, match="no NVML device") if mode == "modelled" else _nothing():
            assert make_dvfs(SearchConfig(dvfs=mode), meter, tss) is None
    meter.nvml_device = open_device(0, FakeNvml([FakeGpu(
        name=name, graphics_clocks_mhz=tuple(range(210, 2041, 15)), default_sm_clock_mhz=2040,
        idle_power_w=16.0, power_limit_w=72.0, power_limit_range_w=(40.0, 72.0))]))
    step = make_dvfs(SearchConfig(dvfs="auto"), meter, tss)
    assert step is not None and step.label == "modelled (generic)" and "generic model" in step.note
    arch = tss.sample(1, seed=3)[0]
    m = meter.measure_arch(arch, precision="fp16", batch_size=1024)
    clock = step.optimal_clock(arch, m)
    assert clock.label == "modelled (generic)" and clock.sm_clock_mhz < 2040
    assert step.energy_bound(m) <= clock.best.energy_j_per_img


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
