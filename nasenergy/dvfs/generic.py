"""Generic DVFS parameters for an NVIDIA GPU that has no calibrated parameter set.

The shape of the model (equations in `nasenergy.dvfs.model`) is carried over from the calibrated
sets in relative units, averaged over them; everything that is the GPU's own comes from NVML and
from the network's own default-clock measurement:

* from NVML (`GpuFacts.from_device`): the supported SM clocks, the power limit in force and the
  clock-event (throttle) reasons at the time of reading;
* from the default-clock measurement (`GpuFacts.with_measurement`): the idle power, the SM clock
  held under load (the median of the clocks sampled during the run) and the board power under
  load, and whether that run was capped. A run is taken as **power-capped** when NVML's reasons
  say so (read during the run: `GpuFacts.from_device` under load, or `facts_from_measurement`'s
  ``clock_event_reasons``) or when it drew at least `POWER_CAP_FRAC` of the power limit, and as
  **thermally capped** when the reasons say so. The idle power is the measurement's where it has
  one (``idle_power_source = "measured"``), else estimated from the power limit and the
  references' idle/limit ratio (`estimate_idle_power_w`, ``"estimated"``), and the parameter
  set's sources and caveat say which;
* from the calibrated sets (`generic_params`): the voltage knee as a fraction of the highest
  clock, ``v_floor``, ``v_exponent``, ``per_cycle_share``, ``overlap_exponent`` and the
  static/idle power ratio (means over the sets), and the alpha predictors (for each feature set
  every reference has: the mean weights and intercept, the least lower clip). Their features
  (compute share, power fraction of the span idle..limit) are already normalised per GPU.

A capped run starts the curve at the clock actually measured: the default clock is that clock and
no clock above it is considered (the GPU cannot hold a higher one under this load), while the
knee keeps its place relative to the GPU's highest supported clock.

Which reference the unknown GPU resembles is not known, so its uncertainty band spans the mean
shape and each reference's (`reshape`), and the clock is chosen by least expected energy over
that band (equation 7 of `nasenergy.dvfs.model`, `nasenergy.dvfs.api.choose_clock`); that is what
keeps it off the steep low-clock side when the mean shape or ``alpha`` is off.

The result has ``provenance = "generic"`` and a caveat that says so; every optimal clock found with
it is labelled ``modelled (generic)``. Its accuracy on GPUs it was not fitted to is measured by
the leave-one-GPU-out validation (`nasenergy.dvfs.validation.leave_one_gpu_out`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from nasenergy.dvfs.params import POWER_CAP_FRAC, AlphaPredictor, GpuDvfsParams, shipped_params
from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement
from nasenergy.dvfs.calibration import DEFAULT_FEATURE_SETS

#: NVML clock-event reason bits (nvml.h ``nvmlClocksEventReason*``).
REASON_SW_POWER_CAP = 0x4
REASON_HW_SLOWDOWN = 0x8
REASON_SW_THERMAL = 0x20
REASON_HW_THERMAL = 0x40
REASON_HW_POWER_BRAKE = 0x80
POWER_REASONS = REASON_SW_POWER_CAP | REASON_HW_POWER_BRAKE
THERMAL_REASONS = REASON_SW_THERMAL | REASON_HW_THERMAL | REASON_HW_SLOWDOWN

GENERIC_LABEL = "modelled (generic)"
#: The `GpuDvfsParams.sources` key a generic set built from a power-capped run carries.
CAPPED_KEY = "power_capped"


@dataclass(frozen=True)
class GpuFacts:
    """What is known about a GPU without a calibrated parameter set.

    Attributes:
        device_name: the name NVML reports.
        supported_clocks_mhz: supported SM (graphics) clocks, MHz, ascending.
        power_limit_w: the power limit in force, watts.
        idle_power_w: board power of the idle GPU, watts, or ``None``.
        loaded_sm_clock_mhz: the SM clock measured under load, MHz, or ``None``.
        loaded_power_w: the board power measured under load, watts, or ``None``.
        power_capped: whether the loaded run was held below its clock by the power limit.
        thermally_capped: whether it was held back by temperature.
        source: where the facts come from (shown in the parameter set's sources).
        idle_power_source: ``measured`` (board power of the idle GPU, read before the run) or
            ``None`` while unknown; `generic_params` then estimates it (`estimate_idle_power_w`).
    """

    device_name: str
    supported_clocks_mhz: tuple[float, ...]
    power_limit_w: float
    idle_power_w: float | None = None
    loaded_sm_clock_mhz: float | None = None
    loaded_power_w: float | None = None
    power_capped: bool = False
    thermally_capped: bool = False
    source: str = "NVML"
    idle_power_source: str | None = None

    def __post_init__(self) -> None:
        clocks = tuple(sorted(float(c) for c in self.supported_clocks_mhz))
        if len(clocks) < 2 or clocks[0] <= 0:
            raise UsageError(f"{self.device_name}: need at least two positive supported clocks")
        object.__setattr__(self, "supported_clocks_mhz", clocks)
        if not (math.isfinite(self.power_limit_w) and self.power_limit_w > 0):
            raise UsageError(f"{self.device_name}: power limit must be positive, got {self.power_limit_w}")
        if self.idle_power_w is not None and self.idle_power_source is None:
            object.__setattr__(self, "idle_power_source", "measured")

    @classmethod
    def from_device(cls, device: Any) -> "GpuFacts":
        """Read the facts of an open `nasenergy.hardware.nvml.NvmlDevice` (read only).

        Clock-event reasons are read now: they describe a capped run only if the GPU is under
        load at this moment; `with_measurement` adds what the measurement itself shows.
        """
        reasons = 0
        try:
            reasons = int(device.clocks_event_reasons())
        except Exception:  # an older driver or binding: the measurement still tells power caps
            reasons = 0
        return cls(device_name=str(device.name),
                   supported_clocks_mhz=tuple(device.supported_graphics_clocks_mhz()),
                   power_limit_w=float(device.power_limit_w()),
                   power_capped=bool(reasons & POWER_REASONS),
                   thermally_capped=bool(reasons & THERMAL_REASONS),
                   source=f"NVML (device {device.name!r})")

    def with_measurement(self, m: Measurement) -> "GpuFacts":
        """These facts completed by a default-clock measurement: idle power, the clock held and
        the power drawn under load, and a power cap where the run drew the limit (at any clock:
        a card held at its limit at the highest clock is capped there too)."""
        clock = float(m.sm_clock_mhz) if m.sm_clock_mhz else self.loaded_sm_clock_mhz
        power = float(m.avg_power_w) if m.avg_power_w else self.loaded_power_w
        at_limit = power is not None and power >= POWER_CAP_FRAC * self.power_limit_w
        idle, idle_src = self.idle_power_w, self.idle_power_source
        if m.idle_power_w:
            idle, idle_src = float(m.idle_power_w), "measured"
        return dataclasses.replace(
            self, idle_power_w=idle, idle_power_source=idle_src,
            loaded_sm_clock_mhz=clock, loaded_power_w=power,
            power_capped=self.power_capped or bool(at_limit))

    @property
    def capped(self) -> bool:
        """Whether the loaded run was power- or thermally capped."""
        return self.power_capped or self.thermally_capped


def _mean(values: Iterable[float]) -> float:
    return float(np.mean(list(values)))


def mean_predictors(references: Sequence[GpuDvfsParams]) -> tuple[AlphaPredictor, ...]:
    """Alpha predictors averaged over `references`: one per feature set any reference has, averaged
    over the references that have it (mean weights and intercept, least lower clip, largest
    residual, so the saving band of a generic set is the widest of its references'), most
    features-informative first in the calibration's order, the constant predictor last."""
    found: dict[tuple[str, ...], list[AlphaPredictor]] = {}
    for r in references:
        for a in r.alpha_predictors:
            found.setdefault(tuple(a.features), []).append(a)
    priority = list(DEFAULT_FEATURE_SETS)
    order = sorted(found, key=lambda fs: (fs == (), priority.index(fs) if fs in priority
                                          else len(priority), -len(fs)))
    out = []
    for fs in order:
        group = found[fs]
        out.append(AlphaPredictor(
            fs, tuple(_mean(a.coef[i] for a in group) for i in range(len(fs))),
            _mean(a.intercept for a in group), min(a.lo for a in group),
            max(a.hi for a in group), rmse=max(a.rmse for a in group)))
    return tuple(out)


def estimate_idle_power_w(power_limit_w: float, references: Sequence[GpuDvfsParams]) -> float:
    """An idle board power for a GPU whose idle power was not read: its power limit times the
    mean idle/limit ratio of `references` (labelled ``estimated`` wherever it is used)."""
    return _mean(r.idle_power_w / r.power_limit_w for r in references) * float(power_limit_w)


def _references(references: Sequence[GpuDvfsParams] | None) -> list[GpuDvfsParams]:
    refs = list(references) if references is not None else [
        p for p in shipped_params().values() if p.provenance == "calibrated"]
    if not refs:
        raise UsageError("generic DVFS parameters need at least one calibrated reference set")
    return refs


def generic_params(facts: GpuFacts, references: Sequence[GpuDvfsParams] | None = None
                   ) -> GpuDvfsParams:
    """A ``generic`` parameter set for the GPU `facts` describe (see the module docstring).

    Args:
        facts: the GPU's NVML facts, completed by a measurement where one exists.
        references: calibrated sets to carry the shape over from; default: the shipped sets with
            ``provenance == "calibrated"``.

    Raises:
        UsageError: no reference set, or a power limit not above the idle power.
    """
    refs = _references(references)
    notes = []
    if facts.idle_power_w is not None and facts.idle_power_w > 0:
        idle = float(facts.idle_power_w)
        idle_src = f"{facts.idle_power_source or 'measured'}: idle board power read before the run"
    else:
        idle = estimate_idle_power_w(facts.power_limit_w, refs)
        idle_src = ("estimated: power limit x the mean idle/limit ratio of "
                    + ", ".join(r.name for r in refs))
        notes.append(f"idle power estimated ({idle:.0f} W), not measured")
    if not facts.power_limit_w > idle:
        raise UsageError(f"{facts.device_name}: power limit {facts.power_limit_w:g} W is not above "
                         f"idle power {idle:g} W")
    full = facts.supported_clocks_mhz
    f_top = full[-1]
    knee = _mean(r.knee_clock_mhz / r.max_clock_mhz for r in refs) * f_top
    clocks = full
    default = f_top if facts.loaded_sm_clock_mhz is None else float(facts.loaded_sm_clock_mhz)
    if facts.capped and facts.loaded_sm_clock_mhz is not None and default < f_top:
        clocks = tuple(c for c in full if c <= default + 1e-6)
        if clocks[-1] < default - 1e-6:
            clocks = clocks + (default,)
        if len(clocks) < 2:
            raise UsageError(f"{facts.device_name}: capped at {default:g} MHz, at or below its "
                             "lowest supported clock; nothing to model")
        knee = min(knee, 0.5 * (clocks[-2] + clocks[-1]))
        why = "power" if facts.power_capped else "thermally"
        notes.append(f"{why}-capped under load at {default:g} MHz: the curve starts there")
    default = min(max(default, clocks[0]), clocks[-1])
    names = ", ".join(r.name for r in refs)
    caveat = (f"GENERIC: no calibrated DVFS parameter set for {facts.device_name}; the model's shape "
              f"is the mean of the calibrated sets ({names}) in relative units, and only the "
              "clocks, power limit, idle power and loaded clock are this GPU's"
              + ("; " + "; ".join(notes) if notes else ""))
    sources = {
        "supported_clocks_mhz": facts.source,
        "power_limit_w": facts.source,
        "idle_power_w": idle_src,
        "default_clock_mhz": ("the SM clock measured under load" if facts.loaded_sm_clock_mhz
                              is not None else "highest supported clock"),
        "knee_clock_mhz": "mean knee/highest-clock ratio of " + names,
        "static_power_w": "mean static/idle ratio of " + names + " x idle_power_w",
        "v_floor, v_exponent, per_cycle_share, overlap_exponent": "means of " + names,
        "alpha_predictors": "mean weights of the same predictors of " + names,
    }
    if facts.power_capped:
        sources[CAPPED_KEY] = ("NVML software power-cap reason" if facts.loaded_power_w is None
                               or facts.loaded_power_w < POWER_CAP_FRAC * facts.power_limit_w
                               else f"board power at {POWER_CAP_FRAC:.0%} of the limit or more")
    return GpuDvfsParams(
        name="generic", gpu=f"{facts.device_name} (generic)", device_patterns=(facts.device_name,),
        supported_clocks_mhz=clocks, default_clock_mhz=default,
        power_limit_w=float(facts.power_limit_w), idle_power_w=idle,
        static_power_w=_mean(r.static_power_w / r.idle_power_w for r in refs) * idle,
        knee_clock_mhz=knee, v_floor=_mean(r.v_floor for r in refs),
        v_exponent=_mean(r.v_exponent for r in refs),
        per_cycle_share=_mean(r.per_cycle_share for r in refs),
        overlap_exponent=_mean(r.overlap_exponent for r in refs),
        alpha_predictors=mean_predictors(refs), provenance="generic", caveat=caveat,
        sources=tuple(sources.items()))


def reshape(params: GpuDvfsParams, reference: GpuDvfsParams,
            references: Sequence[GpuDvfsParams]) -> GpuDvfsParams:
    """`params` (a generic set averaged over `references`) with the shape of one `reference`
    instead of the mean: its knee fraction and static/idle ratio (scaled from the mean ones), its
    ``v_floor``, ``v_exponent``, ``per_cycle_share`` and ``overlap_exponent``. The saving band of
    a generic set spans these (`nasenergy.dvfs.api.saving_band`)."""
    knee_mean = _mean(r.knee_clock_mhz / r.max_clock_mhz for r in references)
    static_mean = _mean(r.static_power_w / r.idle_power_w for r in references)
    knee = params.knee_clock_mhz * (reference.knee_clock_mhz / reference.max_clock_mhz) / knee_mean
    clocks = params.supported_clocks_mhz
    knee = min(knee, 0.5 * (clocks[-2] + clocks[-1]))
    return dataclasses.replace(
        params, knee_clock_mhz=knee,
        static_power_w=params.static_power_w * (reference.static_power_w / reference.idle_power_w)
        / static_mean,
        v_floor=reference.v_floor, v_exponent=reference.v_exponent,
        per_cycle_share=reference.per_cycle_share, overlap_exponent=reference.overlap_exponent)


def facts_from_measurement(m: Measurement, *, power_limit_w: float,
                           supported_clocks_mhz: Sequence[float],
                           clock_event_reasons: int = 0) -> GpuFacts:
    """`GpuFacts` from a measurement and the NVML figures a caller already has, without a device
    handle: the power limit, the supported SM clocks and, optionally, the clock-event (throttle)
    reason bits read during the run (``nvmlDeviceGetCurrentClocksEventReasons``; 0x4 = software
    power cap). The held clock, the power under load and the idle power are the measurement's."""
    reasons = int(clock_event_reasons)
    return GpuFacts(device_name=m.device_name, supported_clocks_mhz=tuple(supported_clocks_mhz),
                    power_limit_w=power_limit_w, power_capped=bool(reasons & POWER_REASONS),
                    thermally_capped=bool(reasons & THERMAL_REASONS),
                    source="the caller (NVML figures given with the measurement)"
                    ).with_measurement(m)
