"""The NVML wrapper against FakeNvml: readings, units, sorting and typed errors."""

from __future__ import annotations

import pytest

from nasenergy.errors import NasEnergyError
from nasenergy.hardware import nvml as nv
from nasenergy.testing import FakeGpu, FakeNvml, ManualClock


def _open(**kw):
    clock = ManualClock()
    fake = FakeNvml(clock=clock, **kw)
    return fake, clock, nv.open_device(0, nvml=fake)


def test_identity_and_units():
    fake, clock, dev = _open()
    assert dev.name == "NVIDIA H200 (fake)"
    assert dev.uuid == "GPU-fake-0000"
    assert dev.driver_version == "550.00-fake"
    assert dev.power_w() == pytest.approx(84.0)          # mW -> W
    assert dev.power_limit_w() == pytest.approx(700.0)
    assert dev.sm_clock_mhz() == 1980
    assert dev.max_sm_clock_mhz() == 1980
    assert dev.default_sm_clock_mhz() == 1980
    assert dev.memory_clock_mhz() == 3201
    assert dev.has_energy_counter()


def test_supported_clocks_sorted_ascending():
    fake, _, dev = _open()
    assert dev.supported_memory_clocks_mhz() == [2201, 3201]
    g = dev.supported_graphics_clocks_mhz()
    assert len(g) == 110 and g[0] == 345 and g[-1] == 1980 and g == sorted(g)
    assert dev.supported_graphics_clocks_mhz(2201) == g
    # the default memory clock is the highest one
    assert ("nvmlDeviceGetSupportedGraphicsClocks", (0, 3201)) in fake.calls


def test_energy_counter_ticks_and_power():
    fake, clock, dev = _open()
    e0 = dev.total_energy_mj()
    fake.set_load(300.0)
    clock.advance(0.05)
    assert dev.total_energy_mj() == e0            # no tick yet
    clock.advance(0.05)                           # tick at 0.1 s
    assert dev.total_energy_mj() - e0 == 30_000   # 300 W * 0.1 s = 30 J
    assert dev.power_w() == pytest.approx(300.0)
    clock.advance(0.35)                           # ticks at 0.2, 0.3, 0.4
    assert dev.total_energy_mj() - e0 == 120_000


def test_locked_clocks_change_reported_clock():
    fake, _, dev = _open()
    dev.set_locked_clocks(1000, 1000)
    assert dev.sm_clock_mhz() == 990                # highest supported clock <= 1000
    assert fake.locked_clocks_mhz() == (1000, 1000)
    dev.reset_locked_clocks()
    assert dev.sm_clock_mhz() == 1980
    assert fake.locked_clocks_mhz() is None
    assert [h["op"] for h in fake.lock_history()] == ["set", "reset"]


def test_no_permission_message():
    _, _, dev = _open(permission_denied=True)
    with pytest.raises(nv.NvmlNoPermission) as ei:
        dev.set_locked_clocks(900, 1200)
    msg = str(ei.value)
    assert "root" in msg and "CAP_SYS_ADMIN" in msg and "\n" not in msg
    with pytest.raises(nv.NvmlNoPermission):
        dev.reset_locked_clocks()


def test_bad_clock_range_is_invalid_argument():
    _, _, dev = _open()
    with pytest.raises(nv.NvmlInvalidArgument, match=r"\[1200, 900\]"):
        dev.set_locked_clocks(1200, 900)
    with pytest.raises(nv.NvmlInvalidArgument):     # rejected by (fake) NVML itself
        dev.set_locked_clocks(100, 200)


def test_no_energy_counter_is_not_supported():
    _, _, dev = _open(gpus=[FakeGpu(has_energy_counter=False)])
    assert not dev.has_energy_counter()
    with pytest.raises(nv.NvmlNotSupported, match="energy counter"):
        dev.total_energy_mj()
    assert dev.power_w() > 0


@pytest.mark.parametrize(
    ("code", "exc"),
    [
        (FakeNvml.NVML_ERROR_NOT_SUPPORTED, nv.NvmlNotSupported),
        (FakeNvml.NVML_ERROR_NO_PERMISSION, nv.NvmlNoPermission),
        (FakeNvml.NVML_ERROR_NOT_FOUND, nv.NvmlNotFound),
        (FakeNvml.NVML_ERROR_INVALID_ARGUMENT, nv.NvmlInvalidArgument),
        (FakeNvml.NVML_ERROR_DRIVER_NOT_LOADED, nv.NvmlUnavailable),
        (FakeNvml.NVML_ERROR_GPU_IS_LOST, nv.NvmlError),
    ],
)
def test_each_error_code_maps_to_its_type(code, exc):
    _, _, dev = _open(fail_on={"nvmlDeviceGetPowerUsage": code})
    with pytest.raises(exc) as ei:
        dev.power_w()
    assert type(ei.value) is exc
    assert isinstance(ei.value, NasEnergyError)
    assert ei.value.nvml_code == code
    assert "power of GPU 0" in str(ei.value) and "\n" not in str(ei.value)


def test_library_missing_is_unavailable():
    fake = FakeNvml(fail_on={"nvmlInit": FakeNvml.NVML_ERROR_LIBRARY_NOT_FOUND})
    with pytest.raises(nv.NvmlUnavailable, match="driver"):
        nv.open_device(0, nvml=fake)
    assert nv.device_count(nvml=fake) == 0


def test_bad_index_is_not_found_and_shuts_down():
    fake = FakeNvml(gpus=2)
    assert nv.device_count(nvml=fake) == 2
    with pytest.raises(nv.NvmlNotFound, match="index 5"):
        nv.open_device(5, nvml=fake)
    assert fake.call_names()[-1] == "nvmlShutdown"


def test_default_clock_falls_back_to_max_when_unsupported():
    _, _, dev = _open(fail_on={"nvmlDeviceGetDefaultApplicationsClock":
                               FakeNvml.NVML_ERROR_NOT_SUPPORTED})
    assert dev.default_sm_clock_mhz() == 1980


def test_close_is_idempotent_and_blocks_calls():
    fake, _, dev = _open()
    with dev:
        pass
    dev.close()
    assert fake.call_names().count("nvmlShutdown") == 1
    with pytest.raises(nv.NvmlError, match="closed"):
        dev.power_w()
