"""The dominance test of `nasenergy.filter.dominance.DominanceFilter`: reading the front,
checking the energy figure, and turning an optimistic point into an admit/skip `Decision`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from nasenergy.filter.energy_bound import EnergyBound, OptimisticFigures, ScaledBound
from nasenergy.filter.records import OBJECTIVE_SENSES, Decision, FilterError
from nasenergy.measurement import Measurement
from nasenergy.pareto import ParetoFront, dominating_index


def check_schedule(target_recall: float, min_fit: int, refit_every: int) -> None:
    """Refuse a bound level outside (0, 1), ``min_fit < 2`` or ``refit_every < 1``."""
    if not 0 < target_recall < 1:
        raise FilterError(f"target_recall must be in (0, 1), got {target_recall}")
    if int(min_fit) < 2:
        raise FilterError(f"min_fit must be at least 2, got {min_fit}")
    if int(refit_every) < 1:
        raise FilterError(f"refit_every must be at least 1, got {refit_every}")


def build_energy_bound(energy_bound: EnergyBound | dict[str, Any] | None) -> EnergyBound:
    """The filter's energy bound: `ScaledBound()` for ``None``, a `ScaledBound` from a dict's
    fields, else the callable itself."""
    if energy_bound is None:
        energy_bound = ScaledBound()
    elif isinstance(energy_bound, dict):
        try:
            energy_bound = ScaledBound(**energy_bound)
        except TypeError as exc:
            raise FilterError(f"bad energy_bound fields: {exc}") from None
    if not callable(energy_bound):
        raise FilterError("energy_bound must be callable (measurement -> optimistic figures)")
    return energy_bound


def front_points(front: Any, objectives: tuple[str, ...]) -> np.ndarray:
    """The front as rows in ``objectives`` order (empty for ``None``); checks its senses/shape."""
    if front is None:
        return np.empty((0, len(objectives)))
    if isinstance(front, ParetoFront):
        want = tuple(OBJECTIVE_SENSES[o] for o in objectives)
        if front.senses != want:
            raise FilterError(
                f"the front's senses {front.senses} do not match the filter's objectives {objectives}"
            )
        return front.points
    pts = np.asarray(front, dtype=float)
    if pts.size == 0:
        return np.empty((0, len(objectives)))
    if pts.ndim != 2 or pts.shape[1] != len(objectives):
        raise FilterError(
            f"the front must have one column per objective {objectives}, got shape {pts.shape}"
        )
    return pts


def require_energy(objectives: Sequence[str], energy_j_per_img: float | None, measurement: Measurement) -> None:
    """Refuse a candidate without energy per image when energy is an objective: its optimistic
    point could never be compared with the front, so the filter would silently admit all."""
    if "energy" not in objectives:
        return
    if energy_j_per_img is None or not math.isfinite(float(energy_j_per_img)):
        raise FilterError(
            f"energy is one of the filter's objectives but the measurement from {measurement.device_name} "
            "has no energy per image; create the filter with objectives=(\"accuracy\", \"throughput\")"
        )


def cold_start_decision(base: dict[str, Any], n_observed: int, min_fit: int) -> Decision:
    """Admit: too few evaluations to fit the accuracy model yet."""
    return Decision(
        admit=True,
        reason=f"cold start: {n_observed} of {min_fit} evaluations needed to fit the accuracy model; admitted",
        **base,
    )


def decision_figures(
    estimate: tuple[float, float, float], opt: OptimisticFigures, objectives: tuple[str, ...]
) -> dict[str, Any]:
    """The figures a decision reports: the accuracy estimate and the optimistic throughput/energy."""
    pred, lo, hi = estimate
    return {
        "accuracy_predicted": pred,
        "accuracy_lower": lo,
        "accuracy_upper": hi,
        "throughput_img_per_s_upper": opt.throughput_img_per_s_upper,
        "energy_j_per_img_lower": opt.energy_j_per_img_lower,
        "objectives": objectives,
    }


def dominance_decision(
    pts: np.ndarray,
    objectives: tuple[str, ...],
    figures: dict[str, Any],
    base: dict[str, Any],
    n_observed: int,
    target_recall: float,
) -> Decision:
    """Admit unless the optimistic point in ``figures`` is dominated by a row of ``pts``."""
    if len(pts) == 0:
        return Decision(admit=True, reason="the front is empty; admitted", **base, **figures)
    hi = figures["accuracy_upper"]
    values = {"accuracy": hi, "throughput": figures["throughput_img_per_s_upper"],
              "energy": figures["energy_j_per_img_lower"]}
    point = np.array([values[o] for o in objectives])
    if np.isnan(point).any():
        missing = [o for o, v in zip(objectives, point) if math.isnan(v)]
        return Decision(admit=True, reason=f"{', '.join(missing)} unknown; admitted", **base, **figures)
    if math.isinf(hi):
        return Decision(
            admit=True,
            reason=f"too few evaluations ({n_observed}) to bound accuracy at level {target_recall}; admitted",
            **base,
            **figures,
        )
    senses = [OBJECTIVE_SENSES[o] for o in objectives]
    idx = dominating_index(point, pts, senses)
    described = ", ".join(f"{o} {v:.4g}" for o, v in zip(objectives, point))
    if idx is None:
        return Decision(
            admit=True,
            reason=f"optimistic figures ({described}) are not dominated by the front; admitted",
            **base,
            **figures,
        )
    dom = tuple(float(v) for v in pts[idx])
    dom_s = ", ".join(f"{o} {v:.4g}" for o, v in zip(objectives, dom))
    return Decision(
        admit=False,
        reason=f"even optimistic figures ({described}) are dominated by front point ({dom_s}); skipped",
        dominating_point=dom,
        **base,
        **figures,
    )
