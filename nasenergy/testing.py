"""Fakes for testing code that uses nasenergy's hardware layer, without a GPU.

* `FakeNvml`: a deterministic drop-in for the ``pynvml`` module (pass it as ``nvml=`` to
  `nasenergy.hardware.nvml.open_device`), simulating GPUs with a ticking energy counter, power
  that follows a settable load, lockable clocks, injectable errors and shared state between
  processes; several GPUs of different UUIDs, power limits and ``power_factor`` (one board draws
  more than its twin) stand for the boards of one host. See `nasenergy.hardware._fake_nvml` for
  the exact model.
* `ManualClock`: a hand-advanced time source for `FakeNvml`.
* `FakeMeter`: a deterministic `Meter` whose figures come from a documented formula over the
  network's real FLOP count (``device_name="fake"``, ``source="modelled"``), with per-architecture
  overrides; see `nasenergy.hardware._fake_meter`. ``FakeMeter.board(k, throughput_factor=...,
  power_factor=...)`` acts as board k of one model (``gpu_uuid="GPU-fake-000k"``) whose throughput
  and energy per image stand in a known ratio to board 0's (to test cross-board calibration,
  `nasenergy.hardware.boards`).
* `write_fake_profile`: a recorded-profile CSV of `FakeMeter` figures, for `RecordedMeter` users.
* `write_cifar10`, `write_cifar100`, `write_image_folder`, `write_png`, `write_npz`, `cifar_rows`:
  small data sets in the real formats `nasenergy.train.load_data` reads (synthetic pixels).

Every figure these fakes produce is synthetic.
"""

from nasenergy.hardware._fake_meter import FakeMeter, write_fake_profile
from nasenergy.train._fake_data import cifar_rows, write_cifar10, write_cifar100, write_image_folder, write_npz, write_png
from nasenergy.hardware._fake_nvml import (
    H200_GRAPHICS_CLOCKS_MHZ,
    H200_MEMORY_CLOCKS_MHZ,
    FakeGpu,
    FakeHandle,
    FakeNvml,
    FakeNvmlCall,
    FakeNVMLError,
    ManualClock,
)

__all__ = [
    "H200_GRAPHICS_CLOCKS_MHZ",
    "H200_MEMORY_CLOCKS_MHZ",
    "FakeGpu",
    "FakeHandle",
    "FakeMeter",
    "FakeNVMLError",
    "FakeNvml",
    "FakeNvmlCall",
    "ManualClock",
    "cifar_rows",
    "write_cifar10",
    "write_cifar100",
    "write_fake_profile",
    "write_image_folder",
    "write_npz",
    "write_png",
]
