"""The DVFS step of a run: where each candidate's energy-optimal clock comes from, and the energy
bound of the dominance filter that matches it. `make_dvfs` builds the step of ``--dvfs`` through
its registered mode (`nasenergy.search.command.dvfs_modes`); the built-in modes' factories live here.

DVFS (``--dvfs``):

* ``modelled``: `nasenergy.dvfs.optimal_clock_for` from the default-clock measurement, with the
  shipped parameter set of the measured GPU; for a GPU without one, a ``generic`` set built from
  what NVML reports and each measurement (`nasenergy.dvfs.generic`), labelled
  ``modelled (generic)``. Without NVML facts (e.g. a recorded profile of such a GPU) it is refused.
* ``measured``: the clock is locked at each probed clock and the network measured again
  (`nasenergy.dvfs.MeasuredBackend`); needs the CUDA meter and ``--allow-clock-control``; clocks
  are restored after each probe.
* ``recorded``: needs recorded clock sweeps of the searched networks, which nasenergy does not
  ship; refused with a clear message.
* ``auto``: ``modelled`` (calibrated, extrapolated or generic) where it can be served, else
  ``none``; either way `DvfsStep.note` says which, and the run announces it.
* ``none``: throughput and energy are scored at the default clock.

The dominance filter compares a candidate's optimistic figures with the front, so its energy bound
must match what the front holds (`DvfsStep.energy_bound`, `default_energy_bound`):

* modelled optimal clocks: `nasenergy.dvfs.optimistic_energy_bound` with no error margin. The
  front's energies come from the same model, and the bound (the model's lowest curve) never
  exceeds the modelled optimum, so no margin is needed for the filter to be safe;
* measured optimal clocks: the same bound with its default margin for model error;
* no DVFS step: the front holds the very figures the cheap measurement gives, so the bound is the
  measurement itself (`ScaledBound` with an energy factor of 1 and no noise slack).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from nasenergy.dvfs import (
    ClockControl,
    MeasuredBackend,
    find_optimal_clock,
    optimal_clock_for,
    optimistic_energy_bound,
    params_for_device,
)
from nasenergy.dvfs.api import DEFAULT_BOUND_MARGIN
from nasenergy.dvfs.backends import point_from_measurement
from nasenergy.dvfs.generic import GENERIC_LABEL, GpuFacts, generic_params
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.points import OptimalClock
from nasenergy.errors import UsageError
from nasenergy.filter import ScaledBound
from nasenergy.filter.energy_bound import EnergyBound
from nasenergy.hardware.meter import ArchMeter, ClockControlMeter, Meter
from nasenergy.measurement import Measurement
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.dvfs_modes import DVFS_MODES
from search_spaces import Arch, SpaceProtocol

__all__ = [
    "DvfsStep",
    "EnergyBoundChoice",
    "EnergyBoundFn",
    "OptimalClockFn",
    "auto_step",
    "default_energy_bound",
    "make_dvfs",
    "measured_step",
    "modelled_step",
    "no_step",
    "recorded_step",
]

OptimalClockFn = Callable[[Any, Measurement], OptimalClock]
"""``(arch, default-clock measurement) -> nasenergy.dvfs.OptimalClock`` (an architecture of the
space: its type is the space's own)."""

EnergyBoundFn = EnergyBound
"""``measurement -> optimistic figures at the optimal clock`` (see `nasenergy.filter.energy_bound`)."""


@dataclass(frozen=True)
class DvfsStep:
    """The DVFS step of a run.

    Attributes:
        source: ``modelled`` or ``measured``.
        optimal_clock: the energy-optimal clock of a measured candidate.
        energy_bound: the dominance filter's optimistic bound matching ``optimal_clock``.
        bound_label: one line naming the bound, for the report.
        note: a line to announce (e.g. that the generic model is used), or ``None``.
        label: where its clocks come from, for outputs: ``modelled (calibrated)``,
            ``modelled (generic)``, ``measured``, ...
    """

    source: str
    optimal_clock: OptimalClockFn
    energy_bound: EnergyBoundFn
    bound_label: str
    note: str | None = None
    label: str = ""


class EnergyBoundChoice(NamedTuple):
    """An energy bound for the dominance filter and the line naming it in the report."""

    bound: EnergyBoundFn
    label: str


def default_energy_bound(config: SearchConfig) -> EnergyBoundChoice:
    """The dependency-free energy bound for ``config``: the measurement itself for a mode that
    scores at the default clock only (`DvfsMode.default_clock_only`, e.g. ``none``), else
    `nasenergy.filter.ScaledBound`'s default optimism."""
    if DVFS_MODES.get(config.dvfs).default_clock_only:
        return EnergyBoundChoice(
            ScaledBound(energy_factor=1.0, noise_sigmas=0.0), "default-clock figures as measured (no DVFS step)"
        )
    bound = ScaledBound()
    return EnergyBoundChoice(bound, f"default-clock energy x {bound.energy_factor} (fixed optimism)")


def make_dvfs(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> DvfsStep | None:
    """The DVFS step of ``config.dvfs`` (its registered `nasenergy.search.command.dvfs_modes.DvfsMode`)
    with its matching energy bound, or ``None`` (no step).

    Raises:
        UsageError: a mode the meter or the installed data cannot serve.
    """
    return DVFS_MODES.get(config.dvfs).create(config, meter, space)


def no_step(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> None:
    """``--dvfs none``: throughput and energy are scored at the default clock."""
    return None


def recorded_step(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> DvfsStep | None:
    """``--dvfs recorded``: refused, since no recorded clock sweeps of the NATS networks are installed.

    Raises:
        UsageError: always.
    """
    raise UsageError(
        "--dvfs recorded replays recorded clock sweeps of each network, and none are installed "
        "for the NATS spaces; use --dvfs modelled (or measured on a GPU)"
    )


def modelled_step(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> DvfsStep | None:
    """``--dvfs modelled``: the DVFS model with the GPU's shipped parameters, else generic ones.

    Raises:
        UsageError: no shipped parameters and no NVML device to build generic ones from.
    """
    return _modelled("modelled", meter)


def auto_step(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> DvfsStep | None:
    """``--dvfs auto``: ``modelled`` where it can be served, else ``None`` (the default clock)."""
    return _modelled("auto", meter)


def _shipped_params(meter: Meter | ArchMeter) -> tuple[GpuDvfsParams | None, str]:
    """The shipped DVFS parameters of the meter's GPU, or ``None`` and why there are none."""
    device = meter.device_name
    if not device:
        return None, "no device name"
    try:
        return params_for_device(device), ""
    except UsageError as exc:
        return None, str(exc)


def _modelled(mode: str, meter: Meter | ArchMeter) -> DvfsStep | None:
    params, missing = _shipped_params(meter)
    if params is None:
        return _generic_step(mode, meter, meter.device_name, missing)

    def modelled(_arch: Arch, measurement: Measurement) -> OptimalClock:
        return optimal_clock_for(measurement, params=params)

    return DvfsStep(
        "modelled", modelled, _model_bound(params, margin_frac=0.0),
        f"the DVFS model's lowest energy curve ({params.name} parameters, no margin)",
        label=f"modelled ({params.provenance})",
    )


def measured_step(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> DvfsStep | None:
    """``--dvfs measured``: each candidate's clocks are probed on the GPU.

    Raises:
        UsageError: a meter that cannot set clocks (not the CUDA meter).
    """
    params, _ = _shipped_params(meter)
    measured = _measured_optimal_clock(config, meter, space)
    if params is None:
        fixed = default_energy_bound(config)
        return DvfsStep("measured", measured, fixed.bound, fixed.label)

    return DvfsStep(
        "measured", measured, _model_bound(params, margin_frac=DEFAULT_BOUND_MARGIN),
        f"the DVFS model's lowest energy curve ({params.name} parameters) less {DEFAULT_BOUND_MARGIN:.0%} for model error",
    )


def _generic_step(mode: str, meter: Meter | ArchMeter, device: str | None, why: str) -> DvfsStep | None:
    """The ``modelled (generic)`` step for a GPU without a shipped parameter set, from the
    meter's NVML device (read only); ``None`` for ``auto`` when there is no NVML device.

    Raises:
        UsageError: ``modelled`` without an NVML device to read the GPU's facts from.
    """
    nvml_device = getattr(meter, "nvml_device", None)
    if nvml_device is None:
        if mode == "modelled":
            raise UsageError(f"--dvfs modelled: {why}, and no NVML device to build generic "
                             "parameters from")
        return None

    facts = GpuFacts.from_device(nvml_device)

    def params_of(measurement: Measurement) -> GpuDvfsParams:
        return generic_params(facts.with_measurement(measurement))

    def modelled(_arch: Arch, measurement: Measurement) -> OptimalClock:
        return optimal_clock_for(measurement, params=params_of(measurement))

    def bound(measurement: Measurement) -> float:
        if measurement.energy_j_per_img is None:
            return math.nan
        return optimistic_energy_bound(measurement, params_of(measurement), margin_frac=0.0)

    return DvfsStep(
        "modelled", modelled, bound,
        "the DVFS model's lowest energy curve (generic parameters, no margin)",
        note=(f"--dvfs {mode}: no calibrated DVFS parameter set for {device!r}; optimal clocks come "
              f"from the generic model, built from what NVML reports, and are labelled "
              f"{GENERIC_LABEL!r}"), label=GENERIC_LABEL)


def _model_bound(params: GpuDvfsParams, *, margin_frac: float) -> EnergyBoundFn:
    """`nasenergy.dvfs.optimistic_energy_bound` with fixed parameters (NaN without energy figures)."""
    def bound(measurement: Measurement) -> float:
        if measurement.energy_j_per_img is None:
            return math.nan
        return optimistic_energy_bound(measurement, params, margin_frac=margin_frac)

    return bound


def _measured_optimal_clock(config: SearchConfig, meter: Meter | ArchMeter, space: SpaceProtocol) -> OptimalClockFn:
    if not isinstance(meter, ClockControlMeter):
        raise UsageError("--dvfs measured probes clocks on the GPU; it needs --hardware cuda (or auto on a GPU)")
    control = ClockControl(0, allow=config.allow_clock_control)  # this worker's GPU
    shape = space.input_shape(config.dataset)

    def measured(arch: Arch, measurement: Measurement) -> OptimalClock:
        model = space.build_deployed(arch, config.dataset)
        fmt = measurement.memory_format
        channels_last = None if fmt is None else fmt == "channels_last"
        backend = MeasuredBackend(
            control, lambda: meter.measure(model, shape, batch_size=config.batch_size, precision=config.precision,
                                           channels_last=channels_last)
        )
        default = point_from_measurement(measurement, float(backend.default_clock_mhz()))
        return find_optimal_clock(backend, default_point=default)

    return measured
