"""Choosing a clock on the model's curve: the clock-choice rules and the model's uncertainty band.

One job: from a `WorkloadObservation` and a `DvfsModel`, the clock a rule chooses
(`choose_clock`: ``point`` searches the point-estimate curve, ``expected``, equation 7 of
`nasenergy.dvfs.model`, the mean over the band members), the curve it searches
(`clock_backend`, `search_clock`), and the band itself: `band_members` (``alpha`` off by the
predictor's residual and, for a ``generic`` set, each reference GPU's shape) and the saving range
over it (`saving_band`).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from nasenergy.dvfs.backends import ExpectedBackend, ModelledBackend
from nasenergy.dvfs.clock_search import find_optimal_clock
from nasenergy.dvfs.generic import reshape
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
from nasenergy.dvfs.params import GpuDvfsParams, shipped_params
from nasenergy.dvfs.points import MIN_ENERGY, ClockPoint, OptimalClock
from nasenergy.errors import UsageError

__all__ = ["CHOICES", "EXPECTED", "POINT", "band_members", "choose_clock", "clock_backend", "saving_band",
           "search_clock"]


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
        mode: as `find_optimal_clock`.
        max_slowdown: as `find_optimal_clock`.
        choice: ``expected`` | ``point``.
        shape_references: as `band_members`.
        rmse: as `band_members`.

    Raises:
        UsageError: unknown choice (and as `find_optimal_clock`).
    """
    backend = clock_backend(model, obs, alpha=alpha, clocks_mhz=clocks_mhz, choice=choice,
                            shape_references=shape_references, rmse=rmse)
    return search_clock(backend, default, mode=mode, max_slowdown=max_slowdown)


def _shapes(params: GpuDvfsParams) -> list[GpuDvfsParams]:
    """`params`, and for a generic set the same with each calibrated reference's shape."""
    if params.provenance != "generic":
        return [params]

    refs = [r for r in shipped_params().values() if r.provenance == "calibrated"]
    return [params] + [reshape(params, r, refs) for r in refs]
