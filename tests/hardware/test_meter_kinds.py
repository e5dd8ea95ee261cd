"""The meter registry's properties (`nasenergy.hardware.registry.MeterKind`): a meter a user
registers with ``uses_gpu`` and ``takes_cuda_options`` is treated as the CUDA meter is, by the
search and by ``python -m nasenergy.profile``, without its name being checked anywhere."""

from __future__ import annotations

import argparse

import pytest

from nasenergy import profile
from nasenergy.hardware.meter_settings import get_setting
from nasenergy.hardware.registry import METERS, MeterKind, register_meter
from nasenergy.proxies.features import provider_for_hardware
from nasenergy.search.command import filter_features
from nasenergy.search.command.components import meter_options
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.loop import board_step
from nasenergy.search.workers import worker_processes
from nasenergy.testing import FakeMeter

GPU_KIND = "toy-gpu-meter"
HOST_KIND = "toy-host-meter"


@pytest.fixture
def toy_kinds():
    register_meter(MeterKind(GPU_KIND, lambda **options: FakeMeter(), uses_gpu=True, takes_cuda_options=True))
    register_meter(MeterKind(HOST_KIND, lambda **options: FakeMeter()))
    yield
    METERS.unregister(GPU_KIND)
    METERS.unregister(HOST_KIND)


def test_only_the_cuda_meter_is_built_in_as_a_gpu_meter():
    assert [n for n in METERS.names() if METERS.get(n).uses_gpu] == ["cuda"]
    assert [n for n in METERS.names() if METERS.get(n).takes_cuda_options] == ["cuda"]


def test_a_registered_gpu_meter_takes_the_meter_setting_as_cuda_does(toy_kinds):
    fast = SearchConfig(meter_setting="fast")
    assert meter_options(GPU_KIND, fast) == meter_options("cuda", fast) == dict(get_setting("fast").meter_options)
    assert meter_options(GPU_KIND, fast)  # the fast setting has options: the comparison can fail
    assert meter_options(HOST_KIND, fast) == meter_options("cpu", fast) == {}


def test_a_registered_gpu_meter_takes_the_profile_commands_cuda_options(toy_kinds):
    args = argparse.Namespace(peak="datasheet", energy_basis="total", no_energy=True)
    expected = {"peak": "datasheet", "energy_basis": "total", "measure_energy": False}
    assert profile.meter_options(GPU_KIND, args) == profile.meter_options("cuda", args) == expected
    assert profile.meter_options(HOST_KIND, args) == {}


def test_workers_of_a_registered_gpu_meter_are_pinned_to_the_visible_gpus(toy_kinds, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    for hardware in (GPU_KIND, "cuda", "auto"):
        assert worker_processes.pinned_gpus(SearchConfig(hardware=hardware, workers=2)) == ["0", "1"], hardware
    for hardware in (HOST_KIND, "cpu", "recorded"):
        assert worker_processes.pinned_gpus(SearchConfig(hardware=hardware, workers=2)) == [], hardware


def test_a_run_of_several_workers_on_a_registered_gpu_meter_has_boards(toy_kinds):
    assert board_step.boards_of_run(SearchConfig(hardware=GPU_KIND, workers=3), ["0", "1"]) == ["0", "1"]
    assert board_step.boards_of_run(SearchConfig(hardware=HOST_KIND, workers=3), ["0", "1"]) == []


def test_live_proxies_run_on_the_gpu_of_a_registered_gpu_meter(toy_kinds, monkeypatch):
    assert provider_for_hardware(GPU_KIND) == provider_for_hardware("cuda") == "proxies-live"
    assert provider_for_hardware(HOST_KIND) == "proxies"
    devices: list[str] = []

    def fake_provider(name, **options):
        devices.append(options["device"])
        return lambda arch: []

    monkeypatch.setattr(filter_features, "feature_provider", fake_provider)
    for hardware in (GPU_KIND, "cuda", HOST_KIND, "cpu"):
        filter_features.extra_features(["proxies-live"], space=object(), dataset="cifar10", hardware=hardware)
    assert devices == ["cuda", "cuda", "cpu", "cpu"]
