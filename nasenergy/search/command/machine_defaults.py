"""Settings that fit the meter: what the search takes when ``--precision``, ``--batch-size`` or
``--objectives`` is not given, and what it refuses before the first candidate.

Each meter kind declares what it can measure (`nasenergy.hardware.registry.MeterKind`: its
``precisions``, whether it ``measures_energy``, its ``default_precision`` and
``default_batch_size``). The CPU meter, for one, measures fp32 and bf16 only and has no energy
counter: with ``--hardware cpu`` (or ``auto`` resolving to it) the search takes fp32, a batch of
256 and the objectives accuracy and throughput, saying in one line that energy was dropped. Asked
explicitly for what the meter cannot measure, it refuses with one line. Where a kind declares
nothing, the defaults are `SearchConfig`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from nasenergy.errors import UsageError
from nasenergy.hardware.registry import METERS
from nasenergy.hardware.select import resolve_hardware
from nasenergy.search.command.config import OBJECTIVE_NAMES, SearchConfig

CPU_PRECISION = METERS.get("cpu").default_precision
CPU_BATCH_SIZE = METERS.get("cpu").default_batch_size

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
    """The settings of a run on ``meter_kind`` (a registered ``--hardware`` name, e.g. ``cuda``,
    ``cpu`` or ``recorded``); ``None`` means the flag was not given.

    Raises:
        UsageError: an explicit precision or objective the meter cannot measure (one line).
    """
    kind = METERS.get(meter_kind)
    if precision is not None and kind.precisions is not None and precision not in kind.precisions:
        raise UsageError(
            f"--precision {precision} is not measured by {kind.title}; use {' or '.join(kind.precisions)}"
        )
    notes = []
    if not kind.measures_energy:
        without_energy = tuple(o for o in OBJECTIVE_NAMES if o != "energy")
        if objectives is not None and "energy" in objectives:
            raise UsageError(
                f"{kind.title} has no energy counter, so energy cannot be an objective; use --objectives "
                f"{','.join(without_energy)} or measure on a GPU (--hardware cuda)"
            )
        if objectives is None:
            objectives = without_energy
            notes.append(f"note: {kind.title} has no energy counter: energy dropped, searching "
                         f"{' and '.join(without_energy)}")
    precision = precision or kind.default_precision or _DEFAULTS.precision
    by_precision = dict(kind.batch_size_by_precision)
    if batch_size is None and precision in by_precision:
        batch_size = by_precision[precision]
        notes.append(f"note: {precision} on {kind.title}: batch {batch_size}, the batch it holds at {precision} "
                     "(--batch-size to choose)")
    return MachineSettings(
        precision,
        batch_size or kind.default_batch_size or _DEFAULTS.batch_size,
        objectives or OBJECTIVE_NAMES,
        tuple(notes),
    )


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
