r"""The DVFS model: time, power and energy per image at any SM clock, from one default-clock run.

Used where clocks cannot be changed. Its inputs are a workload's time per image ``t0`` and mean
board power ``P0`` measured at the default clock ``f0`` (plus optional activity figures), and a
per-GPU `GpuDvfsParams`. Clocks ``f`` are SM clocks in MHz; ``f_max`` is the highest supported one.

Equations
---------
(1) Time. A share ``alpha`` of the default-clock time is compute that scales with ``1/f``; the rest
(DRAM traffic, launch and host overheads) does not. The two combine through a p-norm whose
exponent ``p >= 1`` is a per-GPU overlap parameter::

    tau(f) = t(f) / t0 = [ (alpha * f0 / f)**p + 1 - alpha**p ] ** (1 / p)

With ``p = 1`` this is ``alpha * f0/f + (1 - alpha)``, the plain serial model; as ``p`` grows it
tends to the roofline ``max(alpha * f0/f, 1)``, where the clock-independent part hides compute.
``tau(f0) = 1`` always.

(2) Voltage. Core voltage, relative to its value at ``f_max``, is flat below a knee and rises
above it::

    v(f) = v_floor + (1 - v_floor) * (max(0, f - f_knee) / (f_max - f_knee)) ** q

(3) Power. Board power is a static part ``P_s`` plus dynamic power that scales with ``V**2``; a
share ``beta`` of the dynamic power follows clock cycles (clock tree, stalled pipelines), the rest
follows completed work, i.e. the work rate ``1/tau``::

    P(f) = P_s + (P0 - P_s) * (v(f) / v(f0))**2 * [ beta * f / f0 + (1 - beta) / tau(f) ]

``P(f0) = P0``. For a compute-bound workload (``tau = f0/f``) both terms scale as ``f * V**2``.
(If ``P0 < P_s`` the dynamic part is taken as zero.)

(4) Energy and throughput per image::

    E(f) = P(f) * t0 * tau(f)          throughput(f) = 1 / (t0 * tau(f))

(5) ``alpha`` of an unseen workload is predicted from figures read at the default clock, without
changing clocks: ``alpha = clip(w0 + sum_k w_k x_k, alpha_lo, 1)``. The predictors of a parameter
set are tried in order, most informative first, and the first whose features the workload has is
used (`nasenergy.dvfs.params.FEATURES`): the compute share of (6) from GPU counters; else
``sm_active``, ``dram_active`` and ``power_frac = (P0 - P_idle) / (P_limit - P_idle)``; else
``power_frac`` alone; else a constant. Where the GPU-busy fraction ``b`` (time in which kernels
run) is known, ``alpha <= max(alpha_lo, b)``, since only busy time can scale with the clock.
The weights are fitted per GPU (`nasenergy.dvfs.calibration`).

(6) Per-network clock sensitivity. From the counters of the default-clock run (GPM on Hopper and
newer: ``sm_active = sm_util_pct / 100``, ``dram_active = dram_bw_util_pct / 100``; DCGM 1002 and
1005 in the published sweeps)::

    c = sm_active * (1 - dram_active)          (compute share, 0..1)
    alpha = clip(w0 + w1 * c, alpha_lo, 1)

``c`` is the share of time the SMs are busy while DRAM bandwidth is not the limit: a network that
streams memory (high ``dram_active``) or leaves SMs idle (launch gaps, small kernels) gets a small
``c``, so less of its time scales with ``1/f`` and its energy valley lies at a lower clock (the
voltage saving comes with little slowdown); a network whose SMs are saturated gets ``c`` near
``sm_active`` and a valley nearer the knee. How its power scales follows from the same ``alpha``
through (3): the per-work share ``(1 - beta)`` of its dynamic power falls with ``1/tau(f)``, so a
memory-bound network's power drops almost only through ``V**2`` and the per-cycle share. GPUs
without GPM (NVML utilization rates only) give ``gpu_busy`` but no DRAM bandwidth share; they
fall back to the ``power_frac`` predictor, capped by ``gpu_busy``.
Leave-one-workload-out regrets of this predictor against the ``power_frac`` one are in
``results/dvfs_validation`` (``experiments/dvfs_validate.py``).

(7) Choosing the clock (`nasenergy.dvfs.api.choose_clock`). ``alpha`` is predicted with an error
of about the predictor's calibration residual ``r``, and a GPU without a calibrated set also
has an uncertain shape. The band members are ``alpha_j in {alpha - r, alpha, alpha + r}``
(clipped to ``[alpha_lo, 1]``) times the shapes ``s`` (the parameter set itself; for a generic
set also its reshaping to each calibrated reference GPU, `nasenergy.dvfs.generic.reshape`). The
default rule, ``expected``, picks the clock of least mean energy over these ``M`` members::

    f* = argmin_f  (1 / M) * sum_{s, j} E_s(f; alpha_j)

(``min-edp`` multiplies that mean energy by the point estimate's time ``t(f; alpha)``;
``bounded-slowdown`` keeps its throughput bound on ``t(f; alpha)``, the figure reported), and
reports the point estimate ``E(f*; alpha)`` there. Energy is not symmetric in
``alpha`` around the valley: under-predicting ``alpha`` of a clock-sensitive workload sends
the clock into the steep low-clock side, where time and static energy grow fast, while
over-predicting it costs only the shallow voltage saving near the knee. The mean weighs that
asymmetry (and the clipping at ``alpha_lo``); the ``point`` rule, ``argmin_f E(f; alpha)``, is
the simpler rule, kept for comparison. Every member reproduces the measured point at ``f0``, so the default
clock stays a candidate whose energy is known.

(8) Two clocks. Where the workload was also timed at a lower clock ``f1`` (clock control
only, `WorkloadObservation.neighbour_clock_mhz`), ``alpha`` is the root of
``tau(f1; alpha) = t(f1) / t0`` in equation (1) (`alpha_from_neighbour`) instead of a prediction.

Per-GPU parameters: ``P_s, f_knee, v_floor, q, beta, p`` and the alpha predictor; per workload:
``t0, P0, f0`` (measured) and ``alpha`` (predicted). Their fitted values and sources are in the
shipped parameter files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from nasenergy.dvfs.params import POWER_CAP_FRAC, GpuDvfsParams, compute_share
from nasenergy.dvfs.points import ClockPoint
from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement


@dataclass(frozen=True)
class WorkloadObservation:
    """What is known about a workload at its default clock.

    Attributes:
        time_s_per_img: seconds per image at ``sm_clock_mhz``.
        power_w: mean total board power at ``sm_clock_mhz``, watts.
        sm_clock_mhz: the SM clock of that run, MHz.
        idle_power_w: idle board power of this GPU, watts; ``None`` uses the parameter set's.
        sm_active: fraction of time SMs were busy (0..1), or ``None``.
        dram_active: fraction of peak DRAM bandwidth in use (0..1), or ``None``.
        flop_util: achieved / peak arithmetic rate (0..1), or ``None``.
        gpu_busy: fraction of time a kernel was running (0..1), or ``None``; caps ``alpha``.
        alpha: a known compute-bound share (e.g. fitted to a sweep); ``None`` predicts it.
        power_capped: whether this run was held at the power limit (NVML's software power-cap
            reason, or board power at `POWER_CAP_FRAC` of the limit). Its power fraction is then
            saturated near 1 whatever the workload, so it is not used as a feature (equation 5
            falls through to the next predictor).
        neighbour_clock_mhz: the clock of a second run of the same workload at the next lower
            clock, where one was measured (clock control only). With it ``alpha`` is solved from
            the two times (`alpha_from_neighbour`, equation 8) instead of predicted.
        neighbour_time_s_per_img: that second run's time per image.
    """

    time_s_per_img: float
    power_w: float
    sm_clock_mhz: float
    idle_power_w: float | None = None
    sm_active: float | None = None
    dram_active: float | None = None
    flop_util: float | None = None
    gpu_busy: float | None = None
    alpha: float | None = None
    power_capped: bool = False
    neighbour_clock_mhz: float | None = None
    neighbour_time_s_per_img: float | None = None

    def __post_init__(self) -> None:
        for name in ("time_s_per_img", "power_w", "sm_clock_mhz"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"workload observation: {name} must be positive, got {v!r}")
        if self.alpha is not None and not 0 < self.alpha <= 1:
            raise UsageError(f"workload observation: alpha must be in (0, 1], got {self.alpha}")
        if (self.neighbour_clock_mhz is None) != (self.neighbour_time_s_per_img is None):
            raise UsageError("workload observation: give both neighbour_clock_mhz and "
                             "neighbour_time_s_per_img, or neither")
        if self.neighbour_clock_mhz is not None and not (
                0 < self.neighbour_clock_mhz < self.sm_clock_mhz
                and self.neighbour_time_s_per_img > 0):  # type: ignore[operator]
            raise UsageError("workload observation: the neighbour run must be at a positive clock "
                             f"below {self.sm_clock_mhz:g} MHz with a positive time")

    def features(self, params: GpuDvfsParams) -> dict[str, float | None]:
        """The alpha-predictor features of this workload on the GPU `params` describes."""
        idle = self.idle_power_w if self.idle_power_w is not None else params.idle_power_w
        span = params.power_limit_w - idle
        power_frac = (self.power_w - idle) / span if span > 0 and not self.power_capped else None
        return {"power_frac": power_frac, "flop_util": self.flop_util,
                "sm_active": self.sm_active, "dram_active": self.dram_active,
                "gpu_busy": self.gpu_busy,
                "compute_share": compute_share(self.sm_active, self.dram_active)}


def observation_from_measurement(m: Measurement, params: GpuDvfsParams | None = None, *,
                                 power_capped: bool | None = None) -> WorkloadObservation:
    """The default-clock observation in a `Measurement`.

    Board power is the one that makes the default-clock point the measurement's own figures:
    ``energy_j_per_img × throughput`` (on the energy's basis, adding idle power back for
    ``above_idle``), so the curve at the default clock gives the energy per image the measurement
    reports (the energy window's average power, ``avg_power_w``, can differ from it by a few tenths
    of a percent, as the window's throughput differs from the timed one). Without an energy figure
    it is ``avg_power_w``. The clock is ``sm_clock_mhz``, else the parameter set's default clock.
    `power_capped` ``None`` takes the run as power-capped when its board power reached
    `POWER_CAP_FRAC` of the set's power limit; pass NVML's verdict (the software power-cap reason)
    where it is known.

    Raises:
        UsageError: the measurement has neither power nor energy, or no usable clock.
    """
    if not m.throughput_img_per_s > 0:
        raise UsageError("measurement has no positive throughput; cannot model its DVFS curve")
    t0 = 1.0 / m.throughput_img_per_s
    power = m.avg_power_w
    if m.energy_j_per_img is not None and math.isfinite(m.energy_j_per_img) and m.energy_j_per_img > 0:
        power = m.energy_j_per_img / t0
        if m.energy_basis == "above_idle":
            idle = m.idle_power_w if m.idle_power_w is not None else (
                params.idle_power_w if params is not None else None)
            if idle is None:
                raise UsageError("measurement energy is above idle and no idle power is known")
            power += idle
    if power is None or not power > 0:
        raise UsageError(
            f"measurement on {m.device_name!r} has no board power or energy; the DVFS model needs one"
        )
    clock = m.sm_clock_mhz if m.sm_clock_mhz else (params.default_clock_mhz if params else None)
    if clock is None:
        raise UsageError("measurement has no SM clock and no parameter set gives a default clock")
    util = m.utilization if m.utilization is not None and math.isfinite(m.utilization) else None
    sm, dram, busy = counter_fractions(m)
    if power_capped is None:
        power_capped = params is not None and float(power) >= POWER_CAP_FRAC * params.power_limit_w
    return WorkloadObservation(time_s_per_img=t0, power_w=float(power), sm_clock_mhz=float(clock),
                               idle_power_w=m.idle_power_w, flop_util=util, sm_active=sm,
                               dram_active=dram, gpu_busy=busy, power_capped=bool(power_capped))


def _frac(pct: float | None) -> float | None:
    if pct is None or not isinstance(pct, (int, float)) or not math.isfinite(pct):
        return None
    return min(1.0, max(0.0, float(pct) / 100.0))


def counter_fractions(m: Measurement) -> tuple[float | None, float | None, float | None]:
    """``(sm_active, dram_active, gpu_busy)`` of a measurement's default-clock counters, 0..1.

    GPM counters (``counters_kind == "gpm"``) give all three; NVML's utilization rates give the
    GPU-busy fraction only (their memory rate is time memory was accessed, not a share of DRAM
    bandwidth, so it is not used as ``dram_active``).
    """
    busy = _frac(m.gpu_util_pct)
    if m.counters_kind == "gpm":
        return _frac(m.sm_util_pct), _frac(m.dram_bw_util_pct), busy
    if m.counters_kind == "utilization_rates":
        return None, None, busy
    return None, None, None


def cap_alpha(alpha: float, gpu_busy: float | None, lo: float) -> float:
    """``alpha`` capped at the GPU-busy fraction (when known), but not below `lo`."""
    if gpu_busy is None or not math.isfinite(gpu_busy):
        return alpha
    return max(lo, min(alpha, gpu_busy))


def alpha_from_neighbour(f0_mhz: float, t0_s: float, f1_mhz: float, t1_s: float, p: float,
                         lo: float = 0.02) -> float:
    """Equation (8): the ``alpha`` for which equation (1) gives ``t1 / t0`` at ``f1 < f0``.

    ``tau(f1)`` rises monotonically with ``alpha`` from 1 (``alpha -> 0``) to ``f0 / f1``
    (``alpha = 1``), so the root is found by bisection; a ratio outside that range (noise) is
    clipped to `lo` or 1.
    """
    if not 0 < f1_mhz < f0_mhz:
        raise UsageError(f"neighbour clock {f1_mhz:g} MHz must be below {f0_mhz:g} MHz")
    r = t1_s / t0_s
    if r <= float(time_ratio(f1_mhz, f0_mhz, lo, p)):
        return lo
    if r >= f0_mhz / f1_mhz:
        return 1.0
    a, b = lo, 1.0
    for _ in range(60):
        m = 0.5 * (a + b)
        if float(time_ratio(f1_mhz, f0_mhz, m, p)) < r:
            a = m
        else:
            b = m
    return 0.5 * (a + b)


def time_ratio(f_mhz: np.ndarray | float, f0_mhz: float, alpha: float, p: float) -> np.ndarray:
    """Equation (1): ``tau(f) = t(f) / t(f0)``."""
    f = np.asarray(f_mhz, dtype=float)
    a = min(1.0, max(1e-9, float(alpha)))
    return ((a * f0_mhz / f) ** p + 1.0 - a ** p) ** (1.0 / p)


def voltage_ratio(f_mhz: np.ndarray | float, f_max_mhz: float, knee_mhz: float, v_floor: float,
                  q: float) -> np.ndarray:
    """Equation (2): ``V(f) / V(f_max)``."""
    f = np.asarray(f_mhz, dtype=float)
    x = np.clip((f - knee_mhz) / (f_max_mhz - knee_mhz), 0.0, None)
    return v_floor + (1.0 - v_floor) * x ** q


def power_w(f_mhz: np.ndarray | float, f0_mhz: float, p0_w: float, tau: np.ndarray,
            params: GpuDvfsParams) -> np.ndarray:
    """Equation (3): board power in watts at clocks `f_mhz`, given the time ratios `tau` there."""
    f = np.asarray(f_mhz, dtype=float)
    v = voltage_ratio(f, params.max_clock_mhz, params.knee_clock_mhz, params.v_floor,
                      params.v_exponent)
    v0 = voltage_ratio(f0_mhz, params.max_clock_mhz, params.knee_clock_mhz, params.v_floor,
                       params.v_exponent)
    dyn = max(p0_w - params.static_power_w, 0.0)
    beta = params.per_cycle_share
    return params.static_power_w + dyn * (v / v0) ** 2 * (beta * f / f0_mhz
                                                         + (1.0 - beta) / np.asarray(tau))


@dataclass(frozen=True)
class Curve:
    """A modelled DVFS curve over several clocks (arrays aligned with ``clocks_mhz``).

    Attributes:
        clocks_mhz: SM clocks, MHz, ascending.
        time_s_per_img: seconds per image.
        power_w: board power, watts.
        energy_j_per_img: board energy per image, joules.
        alpha: the compute-bound share used.
    """

    clocks_mhz: np.ndarray
    time_s_per_img: np.ndarray
    power_w: np.ndarray
    energy_j_per_img: np.ndarray
    alpha: float = field(default=float("nan"))

    def points(self) -> list[ClockPoint]:
        """The curve as `ClockPoint`s (source ``modelled``)."""
        return [ClockPoint.from_time_power(f, t, p, "modelled")
                for f, t, p in zip(self.clocks_mhz, self.time_s_per_img, self.power_w)]


class DvfsModel:
    """Equations (1)-(5) for one GPU. See the module docstring.

    Args:
        params: the GPU's parameter set.
    """

    def __init__(self, params: GpuDvfsParams) -> None:
        self.params = params

    def alpha(self, obs: WorkloadObservation) -> float:
        """The compute-bound share: ``obs.alpha`` if given, else solved from a neighbour-clock run
        where the observation has one (equation 8), else predicted (equation 5).

        A predicted value is capped at ``obs.gpu_busy`` when that is known: only time in which
        the GPU runs kernels can scale with its clock.
        """
        if obs.alpha is not None:
            return float(obs.alpha)
        if obs.neighbour_clock_mhz is not None:
            lo = min(a.lo for a in self.params.alpha_predictors)
            return alpha_from_neighbour(obs.sm_clock_mhz, obs.time_s_per_img,
                                        obs.neighbour_clock_mhz,
                                        obs.neighbour_time_s_per_img,  # type: ignore[arg-type]
                                        self.params.overlap_exponent, lo)
        feats = obs.features(self.params)
        for predictor in self.params.alpha_predictors:
            if predictor.usable_with(feats):
                return cap_alpha(predictor.predict(feats), obs.gpu_busy, predictor.lo)
        raise UsageError(
            f"no alpha predictor of {self.params.name} can use the available features "
            f"{sorted(k for k, v in feats.items() if v is not None)}"
        )

    def curve(self, obs: WorkloadObservation, clocks_mhz: Sequence[float] | None = None,
              *, alpha: float | None = None) -> Curve:
        """Time, power and energy per image at `clocks_mhz` (default: all supported clocks).

        Args:
            obs: the default-clock observation.
            clocks_mhz: clocks to evaluate, MHz.
            alpha: override the compute-bound share.
        """
        clocks = np.asarray(sorted(clocks_mhz if clocks_mhz is not None
                                   else self.params.supported_clocks_mhz), dtype=float)
        if clocks.size == 0 or not np.all(clocks > 0):
            raise UsageError("clocks must be positive MHz values")
        a = self.alpha(obs) if alpha is None else float(alpha)
        f0 = obs.sm_clock_mhz
        tau = time_ratio(clocks, f0, a, self.params.overlap_exponent)
        p = power_w(clocks, f0, obs.power_w, tau, self.params)
        t = obs.time_s_per_img * tau
        return Curve(clocks, t, p, p * t, a)

    def point(self, obs: WorkloadObservation, sm_clock_mhz: float, *,
              alpha: float | None = None) -> ClockPoint:
        """The modelled operating point at one clock."""
        return self.curve(obs, [sm_clock_mhz], alpha=alpha).points()[0]
