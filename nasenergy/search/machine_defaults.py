"""Settings that fit the meter: what the search takes when ``--precision``, ``--batch-size`` or
``--objectives`` is not given, and what it refuses before the first candidate.

The CPU meter (`nasenergy.hardware.cpu_meter.CpuMeter`) measures fp32 and bf16 only and has no
energy counter. With ``--hardware cpu`` (or ``auto`` resolving to it) the search therefore takes
fp32, a batch of `CPU_BATCH_SIZE` (the recorded profile's fp32 batch; 1,024 images at fp32 take
seconds per forward pass on a small CPU) and the objectives accuracy and throughput, saying in one
line that energy was dropped. Asked explicitly for what the meter cannot measure, it refuses with
one line. On other meters the defaults are `SearchConfig`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from nasenergy.errors import UsageError
from nasenergy.search.config import OBJECTIVE_NAMES, SearchConfig
from nasenergy.hardware.cpu_meter import CpuMeter
from nasenergy.hardware.select import resolve_hardware

CPU_PRECISION = "fp32"
CPU_BATCH_SIZE = 256

_DEFAULTS = SearchConfig()


@dataclass(frozen=True)
class MachineSettings:
    """The resolved measurement settings and objectives of a run.

    Attributes:
        precision: the precision measured.
        batch_size: images per forward pass of the cheap measurement.
        objectives: the objectives searched.
        notes: one-line notes on what was changed from the general defaults (to print).
    """

    precision: str
    batch_size: int
    objectives: tuple[str, ...]
    notes: tuple[str, ...] = ()


def fit_to_meter(
    meter_kind: str,
    *,
    precision: str | None = None,
    batch_size: int | None = None,
    objectives: tuple[str, ...] | None = None,
) -> MachineSettings:
    """The settings of a run on ``meter_kind`` (``cuda``, ``cpu`` or ``recorded``); ``None`` means
    the flag was not given.

    Raises:
        UsageError: an explicit precision or objective the meter cannot measure (one line).
    """
    if meter_kind != "cpu":
        return MachineSettings(
            precision or _DEFAULTS.precision, batch_size or _DEFAULTS.batch_size, objectives or OBJECTIVE_NAMES
        )

    if precision is not None and precision not in CpuMeter.precisions:
        raise UsageError(
            f"--precision {precision} is not measured by the CPU meter; use {' or '.join(CpuMeter.precisions)}"
        )
    if objectives is not None and "energy" in objectives:
        raise UsageError(
            "the CPU meter has no energy counter, so energy cannot be an objective; use --objectives "
            "accuracy,throughput or measure on a GPU (--hardware cuda)"
        )
    notes = []
    if objectives is None:
        objectives = tuple(o for o in OBJECTIVE_NAMES if o != "energy")
        notes.append("note: the CPU meter has no energy counter: energy dropped, searching accuracy and throughput")
    return MachineSettings(precision or CPU_PRECISION, batch_size or CPU_BATCH_SIZE, objectives, tuple(notes))


def resolved_meter_kind(hardware: str, space_name: str = "tss") -> str:
    """The meter ``--hardware`` selects here for `space_name` (``auto`` resolved without announcing it)."""
    return resolve_hardware(hardware, announce=None, space_name=space_name)


def check_meter_serves(meter_kind: str, config: SearchConfig) -> None:
    """Refuse, before the first candidate, a setting the meter cannot measure (for settings made
    without `fit_to_meter`, e.g. a `SearchConfig` built in code).

    Raises:
        UsageError: one line naming the flag to change.
    """
    fit_to_meter(meter_kind, precision=config.precision, objectives=config.objectives)

