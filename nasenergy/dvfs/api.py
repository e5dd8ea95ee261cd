"""Convenience entry points: a measurement's optimal clock, a cheap optimistic energy bound, and
the user-facing curve table of ``python -m nasenergy.profile ... --dvfs``."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from nasenergy.dvfs.backends import ExpectedBackend, ModelledBackend
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, observation_from_measurement
from nasenergy.dvfs.params import (POWER_CAP_FRAC, GpuDvfsParams, params_for_device,
                                   shipped_params, with_board_power_limit)
from nasenergy.dvfs.points import MIN_ENERGY, ClockPoint, OptimalClock
from nasenergy.dvfs.clock_search import find_optimal_clock
from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement
from nasenergy.dvfs.generic import CAPPED_KEY, GpuFacts, generic_params, reshape

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


#: Clock-choice rules of `optimal_clock_for` (equation 7 of `nasenergy.dvfs.model`).
EXPECTED = "expected"
POINT = "point"
CHOICES: tuple[str, ...] = (EXPECTED, POINT)


def band_members(params: GpuDvfsParams, obs: WorkloadObservation, alpha: float, *,
                 shape_references: Sequence[GpuDvfsParams] | None = None,
                 rmse: float | None = None) -> list[tuple[GpuDvfsParams, float]]:
    """The ``(parameter set, alpha)`` pairs the model's uncertainty band spans.

    ``alpha`` takes ``alpha - r``, ``alpha`` and ``alpha + r`` (clipped to the least lower clip of
    the set's predictors and 1), with ``r`` the residual (``rmse``) of the first predictor usable
    with the workload's features unless `rmse` is given. The shape is `params` itself and, for a
    ``generic`` set, `params` reshaped to each calibrated reference in turn
    (`nasenergy.dvfs.generic.reshape`; default references: the shipped calibrated sets). The
    saving band (`saving_band`) is the range over these members; the ``expected`` clock choice
    (equation 7 of `nasenergy.dvfs.model`) minimises their mean energy.
    """
    if rmse is None:
        preds = [a for a in params.alpha_predictors if a.usable_with(obs.features(params))]
        rmse = preds[0].rmse if preds else max(a.rmse for a in params.alpha_predictors)
    lo = min(a.lo for a in params.alpha_predictors)
    if shape_references is not None and params.provenance == "generic":
        shapes = [params] + [reshape(params, r, shape_references) for r in shape_references]
    else:
        shapes = _shapes(params)
    return [(shape, min(1.0, max(lo, a)))
            for shape in shapes for a in (alpha - rmse, alpha, alpha + rmse)]


def saving_band(params: GpuDvfsParams, obs: WorkloadObservation, sm_clock_mhz: float,
                alpha: float, *, shape_references: Sequence[GpuDvfsParams] | None = None
                ) -> tuple[float, float]:
    """``(low, high)`` energy saving at `sm_clock_mhz` against the default clock under the
    model's uncertainty.

    Always: the workload's ``alpha`` off by the predictor's calibration residual (``rmse``) either
    way. For a ``generic`` set also its shape: the saving is recomputed with the shape of each
    calibrated reference in turn (`nasenergy.dvfs.generic.reshape`; default references: the
    shipped calibrated sets), since which GPU the unknown one resembles is not known
    (`band_members`). The default-clock energy is measured, so the band is about the other clocks
    only. How often the measured saving falls inside it is in results/dvfs_validation.
    """
    e0 = obs.power_w * obs.time_s_per_img
    savings = [1.0 - float(DvfsModel(shape).curve(obs, [sm_clock_mhz], alpha=a)
                           .energy_j_per_img[0]) / e0
               for shape, a in band_members(params, obs, alpha,
                                            shape_references=shape_references)]
    return min(savings), max(savings)


def clock_backend(model: DvfsModel, obs: WorkloadObservation, *, alpha: float | None = None,
                  clocks_mhz: Sequence[float] | None = None, choice: str = EXPECTED,
                  shape_references: Sequence[GpuDvfsParams] | None = None,
                  rmse: float | None = None) -> ModelledBackend:
    """The modelled curve the clock search of a clock-choice rule searches: the point estimate's
    (``point``), or the mean over the band members (``expected``, `ExpectedBackend` over
    `band_members`). Arguments as `choose_clock`.

    Raises:
        UsageError: unknown choice.
    """
    if choice not in CHOICES:
        raise UsageError(f"unknown clock choice {choice!r}; choose from {', '.join(CHOICES)}")
    a = model.alpha(obs) if alpha is None else float(alpha)
    if choice == POINT:
        return ModelledBackend(model, obs, clocks_mhz, alpha=a)
    members = band_members(model.params, obs, a, shape_references=shape_references, rmse=rmse)
    return ExpectedBackend(model, obs, members, clocks_mhz, alpha=a)


def search_clock(backend: ModelledBackend, default: ClockPoint, *, mode: str = MIN_ENERGY,
                 max_slowdown: float | None = None) -> OptimalClock:
    """`find_optimal_clock` on a `clock_backend`, reporting the point estimate's operating point
    at the clock found, so the figures at the chosen clock are those of the model's curve
    (`DvfsModel.curve`) whichever rule chose it."""
    opt = find_optimal_clock(backend, mode=mode, max_slowdown=max_slowdown, default_point=default)
    if not isinstance(backend, ExpectedBackend):
        return opt
    best = (opt.default if abs(opt.sm_clock_mhz - default.sm_clock_mhz) < 1e-6
            else backend.point_probe(opt.sm_clock_mhz))
    return dataclasses.replace(
        opt, best=best, energy_saving_frac=1.0 - best.energy_j_per_img / default.energy_j_per_img,
        throughput_change_frac=best.throughput_img_per_s / default.throughput_img_per_s - 1.0)


def choose_clock(model: DvfsModel, obs: WorkloadObservation, default: ClockPoint, *,
                 alpha: float | None = None, clocks_mhz: Sequence[float] | None = None,
                 mode: str = MIN_ENERGY, max_slowdown: float | None = None,
                 choice: str = EXPECTED, shape_references: Sequence[GpuDvfsParams] | None = None,
                 rmse: float | None = None) -> OptimalClock:
    """The modelled optimal clock of one observation under a clock-choice rule.

    ``point`` searches the point-estimate curve. ``expected`` (equation 7 of
    `nasenergy.dvfs.model`) searches the mean of the band members' curves (`band_members`), then
    reports the point-estimate operating point at the clock it found (`clock_backend`,
    `search_clock`).

    Args:
        model: the GPU's model.
        obs: the default-clock observation.
        default: the default-clock point (measured).
        alpha: the compute-bound share; default: the model's prediction.
        clocks_mhz: clocks to consider; default: the parameter set's supported clocks.
        mode, max_slowdown: as `find_optimal_clock`.
        choice: ``expected`` | ``point``.
        shape_references, rmse: as `band_members`.

    Raises:
        UsageError: unknown choice (and as `find_optimal_clock`).
    """
    backend = clock_backend(model, obs, alpha=alpha, clocks_mhz=clocks_mhz, choice=choice,
                            shape_references=shape_references, rmse=rmse)
    return search_clock(backend, default, mode=mode, max_slowdown=max_slowdown)


def _setup(measurement: Measurement, params: GpuDvfsParams | None
           ) -> tuple[GpuDvfsParams, WorkloadObservation, ClockPoint]:
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
    p, obs, default = _setup(measurement, params)
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
    p, obs, default = _setup(measurement, params)
    lo = min(pred.lo for pred in p.alpha_predictors)
    curve = DvfsModel(p).curve(obs, alpha=lo)
    best = min(float(curve.energy_j_per_img.min()), default.energy_j_per_img)
    return best * (1.0 - margin_frac)


def _rows_to_show(n: int, keep: set[int], max_rows: int) -> list[int]:
    if n <= max_rows:
        return list(range(n))
    step = max(1, int(np.ceil(n / max(1, max_rows - len(keep)))))
    rows = set(range(0, n, step)) | {n - 1}
    for k in keep:
        rows |= {j for j in (k - 1, k, k + 1) if 0 <= j < n}
    return sorted(rows)


def show_curve(measurement: Measurement, *, device: Any = None, png_path: str | Path | None = None,
               mode: str = MIN_ENERGY, params: GpuDvfsParams | None = None,
               max_slowdown: float | None = None, max_rows: int = 30,
               network: str | None = None) -> str:
    """A text table of the modelled energy/time curve over SM clocks, with the chosen point.

    Args:
        measurement: the default-clock measurement of one network.
        device: an open NVML device (`nasenergy.hardware.nvml.NvmlDevice`) whose supported clocks
            are used instead of the parameter set's (read only; clocks are not changed); for a
            GPU without a shipped set, its facts give a ``generic`` set (`resolve_params`).
        png_path: also write a plot of energy and throughput against clock there, with the
            saving band and the network's name.
        mode: ``min-energy`` | ``bounded-slowdown`` | ``min-edp``.
        params: DVFS parameters; default: `resolve_params`.
        max_slowdown: for ``bounded-slowdown``, the largest throughput loss (fraction).
        max_rows: rows of the table (clocks are thinned, keeping the marked ones).
        network: the network's name, shown in the table and the plot.

    Returns:
        The table; ``*`` marks the chosen clock and ``d`` the default clock.

    Raises:
        UsageError: no shipped set matches and no device is given, or no power measured.
    """
    p = resolve_params(measurement, params, device=device)
    p, obs, default = _setup(measurement, p)
    clocks = candidate_clocks(p, obs, device.supported_graphics_clocks_mhz()
                              if device is not None else None)
    opt = optimal_clock_for(measurement, params=p, mode=mode, max_slowdown=max_slowdown,
                            clocks_mhz=clocks)
    model = DvfsModel(p)
    curve = model.curve(obs, clocks)
    f = curve.clocks_mhz
    i_best = int(np.argmin(np.abs(f - opt.sm_clock_mhz)))
    i_def = int(np.argmin(np.abs(f - default.sm_clock_mhz)))
    name = network or "one network"
    band = opt.saving_band_frac or (opt.energy_saving_frac, opt.energy_saving_frac)
    lines = [
        f"DVFS curve of {name} on {measurement.device_name} ({measurement.precision}, "
        f"batch {measurement.batch_size}); parameter set {p.name} ({p.provenance})",
        f"source: default clock {default.sm_clock_mhz:g} MHz {measurement.source}; "
        f"other clocks {opt.label}",
    ]
    if opt.caveat:
        lines.append(f"caveat: {opt.caveat}")
    lines += [
        f"mode {mode}: best {opt.sm_clock_mhz:g} MHz ({opt.label}), energy "
        f"{opt.energy_j_per_img * 1e3:.4g} mJ/img ({_pct1(opt.energy_saving_frac)} % saved vs "
        f"default, band {_pct1(band[0])} % to {_pct1(band[1])} %), throughput "
        f"{_pct1(opt.throughput_change_frac, sign=True)} % vs default, {opt.n_probes} probes",
        "",
        f"{'':2}{'clock_mhz':>9} {'time_us_per_img':>16} {'throughput_img_per_s':>21} "
        f"{'power_w':>8} {'energy_mj_per_img':>18} {'saved_vs_default_pct':>21}",
    ]
    e_def = default.energy_j_per_img
    for i in _rows_to_show(len(f), {i_best, i_def}, max_rows):
        mark = ("*" if i == i_best else "") + ("d" if i == i_def else "")
        e = curve.energy_j_per_img[i]
        lines.append(f"{mark:2}{f[i]:9.0f} {curve.time_s_per_img[i] * 1e6:16.5g} "
                     f"{1.0 / curve.time_s_per_img[i]:21.6g} {curve.power_w[i]:8.1f} "
                     f"{e * 1e3:18.5g} {_pct1(1.0 - e / e_def):>21}")
    text = "\n".join(lines)
    if png_path is not None:
        lo_e, hi_e = _band_curves(model, obs, clocks)
        _plot(curve.clocks_mhz, curve.energy_j_per_img, 1.0 / curve.time_s_per_img, opt,
              Path(png_path), f"{name} on {measurement.device_name}: {opt.label} DVFS curve "
              f"({p.name} parameters)", band=(lo_e, hi_e))
    return text


def _pct1(frac: float, *, sign: bool = False) -> str:
    """``frac`` in percent with one decimal, never ``-0.0``; savings are positive when energy
    falls (the sign convention of every saving nasenergy prints), changes carry their sign."""
    value = round(100.0 * float(frac), 1) + 0.0
    return f"{value:+.1f}" if sign else f"{value:.1f}"


def _shapes(params: GpuDvfsParams) -> list[GpuDvfsParams]:
    """`params`, and for a generic set the same with each calibrated reference's shape."""
    if params.provenance != "generic":
        return [params]

    refs = [r for r in shipped_params().values() if r.provenance == "calibrated"]
    return [params] + [reshape(params, r, refs) for r in refs]


def _band_curves(model: DvfsModel, obs: WorkloadObservation, clocks: Sequence[float] | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest modelled energy per clock over the band of `saving_band`."""
    curves = [DvfsModel(shape).curve(obs, clocks, alpha=a).energy_j_per_img
              for shape, a in band_members(model.params, obs, model.alpha(obs))]
    return np.min(curves, axis=0), np.max(curves, axis=0)


def _plot(f: np.ndarray, e: np.ndarray, thr: np.ndarray, opt: OptimalClock, path: Path,
          title: str, band: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f, e * 1e3, color="tab:blue", label=f"energy per image ({opt.label})")
    if band is not None:
        ax.fill_between(f, band[0] * 1e3, band[1] * 1e3, color="tab:blue", alpha=0.2,
                        label="band: sensitivity +/- calibration residual"
                              + (" and each reference GPU's shape" if opt.basis == "generic" else ""))
    ax.scatter([opt.default.sm_clock_mhz], [opt.default.energy_j_per_img * 1e3], color="black",
               zorder=3, label=f"default clock ({opt.default.source})")
    lo_s, hi_s = opt.saving_band_frac or (opt.energy_saving_frac, opt.energy_saving_frac)
    ax.scatter([opt.sm_clock_mhz], [opt.energy_j_per_img * 1e3], color="tab:red", zorder=3,
               label=f"chosen: {opt.sm_clock_mhz:g} MHz ({opt.mode}), saving "
                     f"{opt.energy_saving_frac:.0%} ({lo_s:.0%} to {hi_s:.0%})")
    ax.set_xlabel("SM clock (MHz)")
    ax.set_ylabel("energy per image (mJ)")
    ax2 = ax.twinx()
    ax2.plot(f, thr, color="tab:gray", linestyle="--", label=f"throughput ({opt.label})")
    ax2.set_ylabel("throughput (img/s)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center")
    ax.set_title(textwrap.fill(title, 90), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
