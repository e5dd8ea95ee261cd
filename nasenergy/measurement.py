"""The result of one cheap hardware measurement of a network.

Every figure carries its unit in its name and the record says where it came from (`source`):
``measured`` on this machine now, ``recorded`` (replayed from a profile measured earlier) or
``modelled`` (predicted, e.g. by the DVFS model). Unavailable figures are ``None``, never invented.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

Source = Literal["measured", "recorded", "modelled"]
SOURCES: tuple[str, ...] = ("measured", "recorded", "modelled")
Precision = Literal["fp32", "tf32", "fp16", "bf16"]
PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16")
EnergyBasis = Literal["total", "above_idle", "unavailable"]
NETWORK_FORMS: tuple[str | None, ...] = ("deployed", "as_built", None)
MEMORY_FORMATS: tuple[str | None, ...] = ("channels_last", "contiguous", None)
#: What an energy figure was read from: NVML's total-energy counter, its power-sample buffer, or
#: its power reading integrated over host time (``None``: not recorded, or no energy).
ENERGY_READINGS: tuple[str | None, ...] = ("energy_counter", "power_samples", "power_reading", None)
COUNTER_FIELDS: tuple[str, ...] = ("sm_util_pct", "sm_occupancy_pct", "dram_bw_util_pct", "tensor_util_pct",
                                   "gpu_util_pct", "memory_util_pct")
"""The GPU activity fields, shared by `Measurement` and `nasenergy.hardware.counters.GpuCounters`."""


@dataclass(frozen=True)
class Measurement:
    """One network measured at one batch size and precision on one device.

    Attributes:
        device_name: e.g. ``"NVIDIA H200"`` or ``"cpu: AMD EPYC ..."``.
        precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
        batch_size: images per forward pass.
        input_shape: the shape of one image, ``(C, H, W)``.
        throughput_img_per_s: images per second (median over repeats).
        latency_ms_per_batch: milliseconds per forward pass of one batch (median over repeats).
        macs_per_img: multiply-accumulates per image (one MAC = one multiply plus one add).
        flops_per_img: floating-point operations per image, ``2 * macs_per_img``.
        params: number of trainable parameters.
        peak_flops_per_s: the peak FLOP/s that utilization is relative to.
        peak_source: ``measured`` (a large matmul on this device at this precision) or
            ``datasheet``.
        utilization: ``flops_per_img * throughput_img_per_s / peak_flops_per_s`` (0..1).
        energy_j_per_img: joules per image, on `energy_basis`; ``None`` if unavailable.
        energy_basis: ``total`` (board energy), ``above_idle`` (idle power subtracted) or
            ``unavailable``.
        avg_power_w: mean board power during the energy window, watts; ``None`` if unavailable.
        idle_power_w: board power of the idle device, watts; ``None`` if unavailable.
        sm_clock_mhz: the SM clock seen during the run; ``None`` if unavailable.
        n_repeats: how many timed repeats the medians are over (energy windows, where the
            throughput was taken from them).
        throughput_cv: coefficient of variation of throughput over the repeats.
        energy_cv: coefficient of variation of energy per image over the repeats, or ``None``.
        measure_cost_s: wall-clock seconds this measurement took, set-up included.
        source: ``measured`` | ``recorded`` | ``modelled``.
        network_form: for NATS architectures, which network `params`, `flops_per_img` and every
            hardware figure belong to: ``deployed`` (no dead or zero ops; what a user would run)
            or ``as_built`` (NATS-Bench's reference implementation); ``None`` for any other module.
        params_official: NATS-Bench's parameter count of the architecture (the as-built network);
            ``None`` outside NATS-Bench.
        flops_per_img_official: NATS-Bench's FLOPs per image (``2 *`` its ``flops`` field, which
            counts MACs) of the as-built network; ``None`` outside NATS-Bench.
        memory_format: ``channels_last`` or ``contiguous``: the layout the figures were measured in
            (the faster of the two when the meter chose); ``None`` if not recorded.
        energy_reading: what `energy_j_per_img` was read from (`ENERGY_READINGS`): ``energy_counter``,
            ``power_samples`` or ``power_reading``; ``None`` if not recorded or unavailable.
        counters_kind: ``gpm`` (NVML GPM metrics), ``utilization_rates`` or ``unavailable``;
            ``None`` if not recorded. The ``*_pct`` fields below are the GPU's activity over the
            energy window, percent (see `nasenergy.hardware.counters`).
        sm_util_pct: share of SMs busy (GPM).
        sm_occupancy_pct: active warps against the maximum (GPM).
        dram_bw_util_pct: DRAM bandwidth used against its peak (GPM).
        tensor_util_pct: share of time any tensor core was busy (GPM).
        gpu_util_pct: NVML's GPU utilization rate.
        memory_util_pct: NVML's memory utilization rate.
        gpu_uuid: the UUID of the board that measured (NVML's ``GPU-...``); ``None`` off a GPU or
            where not recorded. With `device_name`, `driver_version`, `sm_clock_mhz` and
            `power_limit_w` it names the board and its state at the time (`nasenergy.hardware.boards`).
        driver_version: the NVIDIA driver version at the time; ``None`` if not recorded.
        power_limit_w: the board's power-management limit in force at the time, watts.
        normalised_to_gpu_uuid: set when `throughput_img_per_s` and `energy_j_per_img` were
            divided by this board's ratios to a reference board (cross-board calibration,
            `nasenergy.hardware.boards.normalise`): the reference board's UUID; ``None``: as read.
        board_throughput_ratio: the ratio divided out of the throughput (this board over the
            reference board, on the calibration's reference networks); ``None`` if not normalised.
        board_energy_ratio: the same for energy per image.
    """

    device_name: str
    precision: str
    batch_size: int
    input_shape: tuple[int, ...]
    throughput_img_per_s: float
    latency_ms_per_batch: float
    macs_per_img: float
    flops_per_img: float
    params: int
    peak_flops_per_s: float
    peak_source: str
    utilization: float
    energy_j_per_img: float | None
    energy_basis: str
    avg_power_w: float | None
    idle_power_w: float | None
    sm_clock_mhz: float | None
    n_repeats: int
    throughput_cv: float
    energy_cv: float | None
    measure_cost_s: float
    source: str
    network_form: str | None = None
    params_official: int | None = None
    flops_per_img_official: float | None = None
    memory_format: str | None = None
    energy_reading: str | None = None
    counters_kind: str | None = None
    sm_util_pct: float | None = None
    sm_occupancy_pct: float | None = None
    dram_bw_util_pct: float | None = None
    tensor_util_pct: float | None = None
    gpu_util_pct: float | None = None
    memory_util_pct: float | None = None
    gpu_uuid: str | None = None
    driver_version: str | None = None
    power_limit_w: float | None = None
    normalised_to_gpu_uuid: str | None = None
    board_throughput_ratio: float | None = None
    board_energy_ratio: float | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.energy_j_per_img is None and self.energy_basis != "unavailable":
            raise ValueError("energy_basis must be 'unavailable' when energy_j_per_img is None")
        if self.network_form not in NETWORK_FORMS:
            raise ValueError(f"network_form must be one of {NETWORK_FORMS}, got {self.network_form!r}")
        if self.memory_format not in MEMORY_FORMATS:
            raise ValueError(f"memory_format must be one of {MEMORY_FORMATS}, got {self.memory_format!r}")
        if self.energy_reading not in ENERGY_READINGS:
            raise ValueError(f"energy_reading must be one of {ENERGY_READINGS}, got {self.energy_reading!r}")

    @staticmethod
    def utilization_of(flops_per_img: float, throughput_img_per_s: float, peak_flops_per_s: float) -> float:
        """``flops_per_img * throughput_img_per_s / peak_flops_per_s``; NaN if the peak is not positive."""
        if not peak_flops_per_s > 0:
            return math.nan
        return flops_per_img * throughput_img_per_s / peak_flops_per_s

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-serialisable dict (``input_shape`` as a list)."""
        d = dataclasses.asdict(self)
        d["input_shape"] = list(self.input_shape)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Measurement":
        """Inverse of `to_dict`; unknown keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["input_shape"] = tuple(int(x) for x in kw["input_shape"])
        return cls(**kw)
