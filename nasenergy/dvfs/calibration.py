"""Fitting a GPU's DVFS parameters to measured clock sweeps (equations in `nasenergy.dvfs.model`).

Calibration, for one GPU and a set of workload sweeps:

1. ``alpha`` of each workload: least squares of equation (1) against its measured time ratios
   ``t(f) / t(f_default)``, for each candidate overlap exponent ``p``.
2. Power shape ``P_s, f_knee, v_floor, q, beta``: non-linear least squares (scipy) of equation (3)
   against every measured power, relative error, using the *measured* time ratios, so the power
   fit does not depend on ``p`` or ``alpha``. A few starting knees are tried; the best fit wins.
3. ``p``: the candidate whose modelled energy curves (fitted ``alpha``, fitted power) are closest
   to the measured energies (RMS of the log ratio).
4. Alpha predictors: linear regressions (scikit-learn) of the fitted ``alpha`` on default-clock
   features, one per feature set that every sweep has; outputs are clipped to the range of
   ``alpha`` seen.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from nasenergy.dvfs.model import power_w, time_ratio
from nasenergy.dvfs.params import AlphaPredictor, GpuDvfsParams, compute_share
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.errors import UsageError

DEFAULT_OVERLAP_EXPONENTS: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 4.0)
DEFAULT_FEATURE_SETS: tuple[tuple[str, ...], ...] = (
    ("compute_share",),
    ("sm_active", "dram_active", "power_frac"),
    ("power_frac",),
)
ALPHA_MIN = 0.02


@dataclass(frozen=True)
class PowerShape:
    """The fitted power-shape parameters of equation (3) and their fit quality.

    Attributes:
        static_power_w: ``P_s``, watts.
        knee_clock_mhz: ``f_knee``, MHz.
        v_floor: ``V(f_knee) / V(f_max)``.
        v_exponent: ``q``.
        per_cycle_share: ``beta``.
        rms_frac: RMS relative error of the fitted powers.
    """

    static_power_w: float
    knee_clock_mhz: float
    v_floor: float
    v_exponent: float
    per_cycle_share: float
    rms_frac: float


@dataclass(frozen=True)
class Calibration:
    """The result of `calibrate`.

    Attributes:
        params: the fitted parameter set.
        alphas: fitted ``alpha`` per workload (at the chosen ``p``).
        power_rms_frac: RMS relative power error over all sweep points.
        time_rms_frac: RMS relative time error (fitted ``alpha``).
        energy_rms_frac: RMS of ``log(E_model / E_measured)`` (fitted ``alpha``).
    """

    params: GpuDvfsParams
    alphas: Mapping[str, float]
    power_rms_frac: float
    time_rms_frac: float
    energy_rms_frac: float


def _shape_params(base: GpuDvfsParams, shape: Sequence[float] | np.ndarray) -> GpuDvfsParams:
    ps, knee, vfl, q, beta = (float(x) for x in shape)
    return dataclasses.replace(base, static_power_w=ps, knee_clock_mhz=knee, v_floor=vfl,
                               v_exponent=q, per_cycle_share=beta)


def fit_alpha(sweep: Sweep, overlap_exponent: float) -> float:
    """The ``alpha`` that best fits `sweep`'s time ratios under equation (1)."""
    from scipy.optimize import least_squares

    f0 = sweep.default_clock_mhz
    tau = sweep.t / sweep.t[-1]
    res = least_squares(lambda a: time_ratio(sweep.f, f0, a[0], overlap_exponent) - tau,
                        x0=[0.5], bounds=([1e-3], [1.0]))
    return float(res.x[0])


def fit_power_shape(sweeps: Sequence[Sweep], template: GpuDvfsParams) -> PowerShape:
    """Fit ``P_s, f_knee, v_floor, q, beta`` of equation (3) to every sweep's powers.

    Args:
        sweeps: the workloads' sweeps (their highest clock is their default clock).
        template: a parameter set giving the supported clocks (for ``f_max``); its shape values
            are ignored.
    """
    from scipy.optimize import least_squares

    f_max = template.max_clock_mhz
    p0_min = min(s.power_w[-1] for s in sweeps)

    def residuals(x: np.ndarray) -> np.ndarray:
        prm = _shape_params(template, x)
        out = []
        for s in sweeps:
            tau = s.t / s.t[-1]
            model = power_w(s.f, s.default_clock_mhz, s.power_w[-1], tau, prm)
            out.append(model / s.p - 1.0)
        return np.concatenate(out)

    lo = [0.0, 0.2 * f_max, 0.3, 1.0, 0.0]
    hi = [max(p0_min, 1e-3), 0.99 * f_max, 1.0, 4.0, 1.0]
    best = None
    for knee0 in (0.5, 0.7, 0.85):
        x0 = [0.8 * hi[0], knee0 * f_max, 0.75, 1.5, 0.3]
        r = least_squares(residuals, x0=x0, bounds=(lo, hi))
        if best is None or r.cost < best.cost:
            best = r
    assert best is not None
    rms = float(np.sqrt(np.mean(best.fun ** 2)))
    ps, knee, vfl, q, beta = (float(v) for v in best.x)
    return PowerShape(ps, knee, vfl, q, beta, rms_frac=rms)


def _fit_predictor(features: tuple[str, ...], rows: list[dict[str, float | None]],
                   alphas: np.ndarray) -> AlphaPredictor:
    from sklearn.linear_model import LinearRegression

    lo = max(ALPHA_MIN, float(alphas.min()))
    if not features or len(rows) < len(features) + 2:
        mean = float(np.clip(alphas.mean(), lo, 1.0))
        rmse = float(np.sqrt(np.mean((alphas - mean) ** 2)))
        return AlphaPredictor(features, tuple(0.0 for _ in features), mean, lo, rmse=rmse)
    x = np.array([[float(r[f]) for f in features] for r in rows])  # type: ignore[arg-type]
    reg = LinearRegression().fit(x, alphas)
    pred = AlphaPredictor(features, tuple(float(c) for c in reg.coef_), float(reg.intercept_), lo)
    fitted = np.array([pred.predict(r) for r in rows])
    return dataclasses.replace(pred, rmse=float(np.sqrt(np.mean((alphas - fitted) ** 2))))


def sweep_features(sweep: Sweep, power_limit_w: float, idle_power_w: float
                   ) -> dict[str, float | None]:
    """The alpha-predictor features of a sweep's default-clock point."""
    return {
        "power_frac": (sweep.power_w[-1] - idle_power_w) / (power_limit_w - idle_power_w),
        "flop_util": sweep.flop_util,
        "sm_active": sweep.sm_active,
        "dram_active": sweep.dram_active,
        "gpu_busy": sweep.gpu_busy,
        "compute_share": compute_share(sweep.sm_active, sweep.dram_active),
    }


def calibrate(
    sweeps: Sequence[Sweep], *, name: str, gpu: str, device_patterns: tuple[str, ...],
    power_limit_w: float, idle_power_w: float | None = None,
    supported_clocks_mhz: Sequence[float] | None = None,
    overlap_exponents: Sequence[float] = DEFAULT_OVERLAP_EXPONENTS,
    feature_sets: Sequence[tuple[str, ...]] = DEFAULT_FEATURE_SETS,
    caveat: str | None = None, sources: Mapping[str, str] | None = None,
) -> Calibration:
    """Fit a `GpuDvfsParams` to measured sweeps of one GPU (steps in the module docstring).

    Args:
        sweeps: at least three workloads' sweeps; each one's highest clock is its default clock.
        name: the parameter set's name.
        gpu: the GPU it describes.
        device_patterns: the device names it applies to.
        power_limit_w: board power limit, watts (datasheet).
        idle_power_w: idle board power, watts; ``None`` uses the lowest power in the sweeps (an
            upper bound on idle, recorded as such in ``sources``).
        supported_clocks_mhz: clocks the model is valid for; default: every clock in the sweeps.
        overlap_exponents: candidate values of ``p``.
        feature_sets: alpha-predictor feature sets, most informative first; a set is used only
            if every sweep has its features. A constant predictor is always added last.
        caveat: shown with every prediction.
        sources: citations per parameter, merged with the ones calibration records.

    Raises:
        UsageError: fewer than three sweeps, or sweeps whose default clocks differ.
    """
    if len(sweeps) < 3:
        raise UsageError(f"calibration needs at least 3 sweeps, got {len(sweeps)}")
    clocks = tuple(sorted(set(supported_clocks_mhz) if supported_clocks_mhz is not None
                          else {f for s in sweeps for f in s.clocks_mhz}))
    f_max = clocks[-1]
    idle = float(idle_power_w) if idle_power_w is not None else float(min(s.p.min() for s in sweeps))
    src = {
        "power_limit_w": "datasheet (given to calibration)",
        "idle_power_w": ("given to calibration" if idle_power_w is not None
                         else "lowest board power seen in the calibration sweeps (upper bound)"),
        "static_power_w, knee_clock_mhz, v_floor, v_exponent, per_cycle_share":
            f"least-squares fit to {len(sweeps)} measured sweeps",
        "overlap_exponent": "chosen from candidates by energy-curve fit to the same sweeps",
        "alpha_predictors": "linear regression of fitted alpha on default-clock features",
    }
    src.update(dict(sources or {}))
    template = GpuDvfsParams(
        name=name, gpu=gpu, device_patterns=tuple(device_patterns), supported_clocks_mhz=clocks,
        default_clock_mhz=f_max, power_limit_w=float(power_limit_w), idle_power_w=idle,
        static_power_w=0.0, knee_clock_mhz=0.7 * f_max, v_floor=0.8, v_exponent=1.0,
        per_cycle_share=0.3, overlap_exponent=1.0,
        alpha_predictors=(AlphaPredictor((), (), 0.5, ALPHA_MIN),), caveat=caveat,
        sources=tuple(src.items()))
    shape = fit_power_shape(sweeps, template)
    shaped = _shape_params(template, [shape.static_power_w, shape.knee_clock_mhz, shape.v_floor,
                                      shape.v_exponent, shape.per_cycle_share])

    best: tuple[float, float, dict[str, float]] | None = None
    for p in overlap_exponents:
        alphas = {s.workload: fit_alpha(s, p) for s in sweeps}
        errs = []
        for s in sweeps:
            tau = time_ratio(s.f, s.default_clock_mhz, alphas[s.workload], p)
            e = power_w(s.f, s.default_clock_mhz, s.power_w[-1], tau, shaped) * tau * s.t[-1]
            errs.append(np.log(e / s.energy))
        score = float(np.sqrt(np.mean(np.concatenate(errs) ** 2)))
        if best is None or score < best[0] - 1e-12:
            best = (score, float(p), alphas)
    assert best is not None
    e_rms, p_best, alphas = best

    feats = [sweep_features(s, power_limit_w, idle) for s in sweeps]
    y = np.array([alphas[s.workload] for s in sweeps])
    predictors = []
    for fs in feature_sets:
        if all(all(r.get(f) is not None and math.isfinite(float(r[f])) for f in fs)  # type: ignore[arg-type]
               for r in feats):
            predictors.append(_fit_predictor(tuple(fs), feats, y))
    predictors.append(_fit_predictor((), feats, y))

    t_err = np.concatenate([
        time_ratio(s.f, s.default_clock_mhz, alphas[s.workload], p_best) / (s.t / s.t[-1]) - 1.0
        for s in sweeps])
    params = dataclasses.replace(
        shaped, overlap_exponent=p_best, alpha_predictors=tuple(predictors),
        fit=(("n_sweeps", float(len(sweeps))), ("power_rms_frac", shape.rms_frac),
             ("time_rms_frac", float(np.sqrt(np.mean(t_err ** 2)))),
             ("energy_rms_log", e_rms)))
    return Calibration(params=params, alphas=alphas, power_rms_frac=shape.rms_frac,
                       time_rms_frac=float(np.sqrt(np.mean(t_err ** 2))), energy_rms_frac=e_rms)
