"""A measurement's optimal clock: its parameter set, the clocks it may take, and the chosen clock.

One job: from a default-clock `Measurement` (or a caller's `WorkloadObservation`), the DVFS
parameter set (`resolve_params`: shipped, board-adjusted or generic), whether the run was
power-capped and which clocks it may take (`is_power_capped`, `candidate_clocks`), the modelled
optimal clock with its saving band (`optimal_clock_for`, `optimal_clock_for_observation`), and a
cheap optimistic energy bound (`optimistic_energy_bound`). The clock rules are
`nasenergy.dvfs.clock_choice`'s.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from nasenergy.dvfs.clock_choice import EXPECTED, choose_clock, saving_band
from nasenergy.dvfs.generic import CAPPED_KEY, GpuFacts, generic_params
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, observation_from_measurement
from nasenergy.dvfs.params import POWER_CAP_FRAC, GpuDvfsParams, params_for_device, with_board_power_limit
from nasenergy.dvfs.points import MIN_ENERGY, ClockPoint, OptimalClock
from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement

__all__ = ["DEFAULT_BOUND_MARGIN", "candidate_clocks", "is_power_capped", "measurement_observation",
           "optimal_clock_for", "optimal_clock_for_observation", "optimistic_energy_bound", "resolve_params"]

#: Default safety margin of `optimistic_energy_bound`: at or above the 90th percentile of the
#: model's absolute energy error at its chosen clock in the leave-one-out validation on the A100
#: and V100 sweeps (results/dvfs_validation).
DEFAULT_BOUND_MARGIN = 0.20


def resolve_params(measurement: Measurement, params: GpuDvfsParams | None = None, *,
                   device: Any = None, facts: GpuFacts | None = None) -> GpuDvfsParams:
    """The DVFS parameter set for a measurement.

    `params` if given. Else the shipped set matching ``measurement.device_name``, with the
    board's power limit where the board is known and differs (`with_board_power_limit`). Else a
    ``generic`` set (`nasenergy.dvfs.generic`) from the board's facts: `facts` (e.g.
    `nasenergy.dvfs.generic.facts_from_measurement`, no device handle needed) or those of an open
    NVML `device` (read only), completed by the measurement.

    Raises:
        UsageError: no shipped set matches and neither `facts` nor `device` is given.
    """
    if params is not None:
        return params
    board = facts if facts is not None else (
        GpuFacts.from_device(device) if device is not None else None)
    try:
        shipped = params_for_device(measurement.device_name)
    except UsageError as exc:
        if board is None:
            raise UsageError(f"{exc}; give the board's facts (GpuFacts, facts_from_measurement) "
                             "or an NVML device for a generic set") from None
        return generic_params(board.with_measurement(measurement))
    if board is None:
        return shipped
    return with_board_power_limit(shipped, board.power_limit_w, source=board.source)


def is_power_capped(params: GpuDvfsParams, obs: WorkloadObservation) -> bool:
    """Whether the run of `obs` was held at the power limit: board power at `POWER_CAP_FRAC` of
    the set's limit, or a generic set built from a run NVML reported as power-capped."""
    return (obs.power_capped or obs.power_w >= POWER_CAP_FRAC * params.power_limit_w
            or params.source_of(CAPPED_KEY) is not None)


def candidate_clocks(params: GpuDvfsParams, obs: WorkloadObservation,
                     clocks_mhz: Sequence[float] | None = None) -> list[float]:
    """The clocks the search may choose: `clocks_mhz` (default: the set's supported clocks),
    for a power-capped run only those at or below the clock it held (it cannot hold a higher
    one under this load), with the held clock itself."""
    clocks = sorted(float(c) for c in (clocks_mhz if clocks_mhz is not None
                                       else params.supported_clocks_mhz))
    if not clocks:
        raise UsageError("no clocks to choose from")
    if is_power_capped(params, obs):
        held = obs.sm_clock_mhz
        clocks = [c for c in clocks if c <= held + 1e-6]
        if not clocks or clocks[-1] < held - 1e-6:
            clocks.append(held)
    return clocks


def measurement_observation(measurement: Measurement, params: GpuDvfsParams | None
                            ) -> tuple[GpuDvfsParams, WorkloadObservation, ClockPoint]:
    """The parameter set for `measurement` (`params`, else the shipped set of its device), its
    default-clock observation (power-capped where `is_power_capped`) and its default point."""
    p = params if params is not None else params_for_device(measurement.device_name)
    obs = observation_from_measurement(measurement, p)
    if is_power_capped(p, obs) and not obs.power_capped:
        obs = dataclasses.replace(obs, power_capped=True)
    default = ClockPoint.from_time_power(obs.sm_clock_mhz, obs.time_s_per_img, obs.power_w,
                                         measurement.source)
    return p, obs, default


def optimal_clock_for(measurement: Measurement, *, params: GpuDvfsParams | None = None,
                      mode: str = MIN_ENERGY, max_slowdown: float | None = None,
                      clocks_mhz: Sequence[float] | None = None,
                      choice: str = EXPECTED) -> OptimalClock:
    """The modelled optimal SM clock of a workload measured at its default clock.

    Args:
        measurement: a default-clock measurement with board power (or total energy).
        params: the GPU's DVFS parameters; default: the shipped set matching
            ``measurement.device_name``.
        mode: ``min-energy`` | ``bounded-slowdown`` | ``min-edp``.
        max_slowdown: for ``bounded-slowdown``, the largest throughput loss (fraction).
        clocks_mhz: clocks to consider, for every kind of set; default: the parameter set's
            supported clocks. A power-capped run (`is_power_capped`) keeps only those at or
            below the clock it held (`candidate_clocks`).
        choice: ``expected`` (default: the clock of least expected energy over the uncertainty
            band, equation 7 of `nasenergy.dvfs.model`) or ``point`` (least point-estimate
            energy, the simpler rule, kept for comparison). Either way the figures reported at the chosen
            clock are the point estimate's.

    Returns:
        An `OptimalClock` with ``source="modelled"``, ``basis`` the parameter set's provenance
        (``calibrated`` | ``extrapolated`` | ``generic``) and ``saving_band_frac`` from
        `saving_band`; its ``default`` point is the measurement itself, and its ``caveat`` names the parameter set (and its own caveat, e.g. that the H200
        set is extrapolated).

    Raises:
        UsageError: no matching parameter set, no power in the measurement, bad mode.
    """
    p, obs, default = measurement_observation(measurement, params)
    return optimal_clock_for_observation(p, obs, source=default.source, mode=mode,
                                         max_slowdown=max_slowdown, clocks_mhz=clocks_mhz,
                                         choice=choice)


def optimal_clock_for_observation(params: GpuDvfsParams, obs: WorkloadObservation, *,
                                  source: str = "measured", mode: str = MIN_ENERGY,
                                  max_slowdown: float | None = None,
                                  clocks_mhz: Sequence[float] | None = None,
                                  choice: str = EXPECTED) -> OptimalClock:
    """`optimal_clock_for` on a `WorkloadObservation` a caller built from their own figures
    (time per unit of work, board power, the clock held, optionally counters, a power-cap flag
    and a neighbour-clock run); `source` labels its default point."""
    if is_power_capped(params, obs) and not obs.power_capped:
        obs = dataclasses.replace(obs, power_capped=True)
    default = ClockPoint.from_time_power(obs.sm_clock_mhz, obs.time_s_per_img, obs.power_w, source)
    model = DvfsModel(params)
    opt = choose_clock(model, obs, default, clocks_mhz=candidate_clocks(params, obs, clocks_mhz),
                       mode=mode, max_slowdown=max_slowdown, choice=choice)
    band = saving_band(params, obs, opt.sm_clock_mhz, model.alpha(obs))
    return dataclasses.replace(opt, basis=params.provenance, saving_band_frac=band)


def optimistic_energy_bound(measurement: Measurement, params: GpuDvfsParams | None = None, *,
                            margin_frac: float = DEFAULT_BOUND_MARGIN) -> float:
    """A cheap lower bound on the energy per image at the workload's optimal clock, joules.

    Modelled energy rises with ``alpha`` at every clock below the default one, so the smallest
    ``alpha`` the parameter set allows gives the lowest modelled curve; its minimum is then
    lowered by `margin_frac` for model error. One vectorised curve, no search. Use it to discard
    candidates that cannot win even at their best clock.

    Args:
        measurement: a default-clock measurement with board power (or total energy).
        params: DVFS parameters; default: the shipped set matching the device name.
        margin_frac: relative model-error margin (0.2 = 20% below the lowest modelled energy).

    Raises:
        UsageError: bad margin, no matching parameter set, or no power in the measurement.
    """
    if not 0.0 <= margin_frac < 1.0:
        raise UsageError(f"margin_frac must be in [0, 1), got {margin_frac}")
    p, obs, default = measurement_observation(measurement, params)
    lo = min(pred.lo for pred in p.alpha_predictors)
    curve = DvfsModel(p).curve(obs, alpha=lo)
    best = min(float(curve.energy_j_per_img.min()), default.energy_j_per_img)
    return best * (1.0 - margin_frac)
