"""The quality and regret curves of `experiments/search_quality.py` (and `budget_quality.py`):
the searched subspace scored as the search scores it (`Truth`), each run's curves over its
evaluations and the bootstrap intervals of their means and of the evaluations-to-reach factor."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nasenergy.objectives import objectives_for
from nasenergy.quality import DeployRegion, regret_profile

BUDGET = 200
N_BOOT = 2000
N_LIMITS = 10
"""Energy budgets and throughput floors of the regret measure (each)."""
OBJECTIVES = objectives_for(("accuracy", "throughput", "energy"))


@dataclass
class Truth:
    """The searched subspace scored as the search scores it."""

    study: str
    region: DeployRegion
    keys: list[str]
    points: np.ndarray
    volume: float
    front_keys: set[str] = field(default_factory=set)



def quality_curve(truth: Truth, pts: np.ndarray, budget: int = BUDGET) -> np.ndarray:
    """The quality ratio after 1..budget evaluations (a run that stopped early keeps its last value)."""
    curve = truth.region.curve(pts, OBJECTIVES) / truth.volume if len(pts) else np.zeros(0)
    out = np.zeros(budget)
    n = min(len(curve), budget)
    out[:n] = curve[:n]
    if 0 < n < budget:
        out[n:] = curve[n - 1]
    return out


def regret_limits(truth: Truth, n: int = N_LIMITS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The energy budgets and throughput floors of `nasenergy.quality.regret_profile` over the
    subspace (taken from it, so both use the same limits) and the best accuracy possible under each."""
    profile = regret_profile(truth.points, truth.points, OBJECTIVES, truth.region, n=n)
    energy = np.asarray(profile.energy_budgets_j_per_img)
    thr = np.asarray(profile.throughput_floors_img_per_s)
    pts = truth.points[truth.region.feasible_mask(truth.points, OBJECTIVES)]
    floor = truth.region.accuracy_floor_pct
    best_e = np.array([max(floor, pts[pts[:, 2] <= e * (1 + 1e-12), 0].max(initial=floor)) for e in energy])
    best_t = np.array([max(floor, pts[pts[:, 1] >= t * (1 - 1e-12), 0].max(initial=floor)) for t in thr])
    return energy, thr, best_e, best_t


def regret_curve(truth: Truth, pts: np.ndarray, limits: tuple[np.ndarray, ...], budget: int = BUDGET) -> np.ndarray:
    """The mean regret in accuracy points over the energy budgets and throughput floors after
    1..budget evaluations (as `nasenergy.quality.regret_profile`, computed incrementally)."""
    energy, thr, best_e, best_t = limits
    floor = truth.region.accuracy_floor_pct
    pts = np.asarray(pts, dtype=float).reshape(-1, 3)[:budget]
    out = np.full(budget, float(np.mean(np.concatenate([best_e, best_t]) - floor)))
    if not len(pts):
        return out
    acc = np.where(pts[:, 0] >= floor, pts[:, 0], floor)
    under_e = np.maximum.accumulate(np.where(pts[:, 2][:, None] <= energy[None, :] * (1 + 1e-12), acc[:, None], floor), axis=0)
    over_t = np.maximum.accumulate(np.where(pts[:, 1][:, None] >= thr[None, :] * (1 - 1e-12), acc[:, None], floor), axis=0)
    regret = np.concatenate([np.maximum(best_e - under_e, 0), np.maximum(best_t - over_t, 0)], axis=1).mean(axis=1)
    out[:len(regret)] = regret
    if len(regret) < budget:
        out[len(regret):] = regret[-1]
    return out


def evals_to_reach(mean_curve: np.ndarray, target: float) -> int | None:
    """The first number of evaluations whose mean quality reaches ``target`` (None: never)."""
    hit = np.flatnonzero(mean_curve >= target - 1e-12)
    return int(hit[0]) + 1 if len(hit) else None


def factor_with_interval(curves: np.ndarray, base: np.ndarray, k: int, rng: np.random.Generator,
                         n_boot: int = N_BOOT) -> tuple[int | None, float, float, float, float]:
    """Evaluations needed to reach the baseline's mean quality at ``k``, the factor k / needed
    (0 for never), its bootstrap 95 % interval and the share of resamples that never reach it."""
    needed = evals_to_reach(curves.mean(axis=0), base[:, k - 1].mean())
    factors = np.empty(n_boot)
    for b in range(n_boot):
        c = curves[rng.integers(0, len(curves), len(curves))].mean(axis=0)
        t = base[rng.integers(0, len(base), len(base)), k - 1].mean()
        n = evals_to_reach(c, t)
        factors[b] = 0.0 if n is None else k / n
    lo, hi = np.percentile(factors, [2.5, 97.5])
    return needed, 0.0 if needed is None else k / needed, float(lo), float(hi), float(np.mean(factors == 0))


def mean_interval(values: np.ndarray, rng: np.random.Generator, n_boot: int = N_BOOT) -> tuple[float, float, float]:
    boots = np.array([values[rng.integers(0, len(values), len(values))].mean() for _ in range(n_boot)])
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return float(values.mean()), float(lo), float(hi)

