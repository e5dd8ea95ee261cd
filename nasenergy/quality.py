"""The search's quality measure: how good a set of evaluated networks is for a user who deploys one.

A plain hypervolume over (accuracy, throughput, energy) against the origin is dominated by trivial
networks: a network at chance accuracy that runs at millions of images per second spans most of the
volume by itself, so a search that finds it early looks finished. nasenergy measures a search's
quality on the **deploy region** instead, declared before any result is looked at:

1. **An accuracy floor.** Only networks at or above ``accuracy_floor_pct`` count: the accuracy a
   user needs (``--min-accuracy``), or, where none is given, the median search-metric accuracy of
   the space's deployed networks (a benchmark oracle knows it): the better half of the space.
2. **Hardware axes on a log scale.** Throughput and energy span three decades in one space; a
   factor of two is worth the same at every speed. Each enters as decades past a reference: the
   slowest throughput (``throughput_ref_img_per_s``) and the largest energy per image
   (``energy_ref_j_per_img``) of the networks the run could measure.
3. **The deploy hypervolume** (`DeployRegion.volume`) is the volume the points dominate in
   (accuracy points above the floor) x (decades of throughput above the reference) x (decades of
   energy per image below the reference), with the reference point at (floor, reference
   throughput, reference energy). Its unit is ``pt x dec x dec``.
4. **Regret under budgets** (`regret_profile`): the best accuracy reached under each of ten
   energy budgets and at each of ten throughput floors, log-spaced over the region's front, as the
   shortfall against the best possible; a budget where the run has no network counts as the
   full gap to the floor.

`DeployRegion.shares` gives each point's exclusive share of the volume (what the volume loses when
that point alone is removed), so no claim rests on a single network by accident.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto import ParetoError, hypervolume, non_dominated_mask

__all__ = [
    "DEPLOY_HV_UNIT",
    "N_BUDGETS",
    "DeployRegion",
    "RegretProfile",
    "median_floor",
    "positive_figures",
    "regret_profile",
    "region_from_points",
]

DEPLOY_HV_UNIT = "pt x dec x dec"
"""The unit of the deploy hypervolume with all three objectives: accuracy points x decades of
throughput x decades of energy per image (fewer factors with fewer objectives)."""

N_BUDGETS = 10
"""How many energy budgets and throughput floors `regret_profile` spans the region with."""


def _column(objectives: Sequence[SearchObjective], name: str) -> int | None:
    for j, obj in enumerate(objectives):
        if obj.name == name:
            return j
    return None


@dataclass(frozen=True)
class DeployRegion:
    """The region a user would deploy from, and the reference point of its hypervolume.

    Attributes:
        accuracy_floor_pct: networks below it do not count.
        throughput_ref_img_per_s: the throughput axis's origin (decades are counted from it).
        energy_ref_j_per_img: the energy axis's origin (decades below it count).
        floor_from: where the floor comes from, in words (``--min-accuracy``, ``median of the space``).
        refs_from: where the hardware references come from, in words.
    """

    accuracy_floor_pct: float
    throughput_ref_img_per_s: float
    energy_ref_j_per_img: float
    floor_from: str = ""
    refs_from: str = ""

    def __post_init__(self) -> None:
        for name in ("accuracy_floor_pct", "throughput_ref_img_per_s", "energy_ref_j_per_img"):
            value = float(getattr(self, name))
            if not np.isfinite(value):
                raise ParetoError(f"the deploy region's {name} must be finite, got {value}")
        if self.throughput_ref_img_per_s <= 0 or self.energy_ref_j_per_img <= 0:
            raise ParetoError("the deploy region's throughput and energy references must be positive")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        return asdict(self)

    def feasible_mask(self, points: np.ndarray | Sequence[Sequence[float]],
                      objectives: Sequence[SearchObjective]) -> np.ndarray:
        """Rows at or above the accuracy floor with every figure known."""
        pts = _matrix(points, objectives)
        acc = _column(objectives, "accuracy")
        ok = ~np.isnan(pts).any(axis=1)
        if acc is not None:
            ok &= pts[:, acc] >= self.accuracy_floor_pct
        return ok

    def transformed(self, points: np.ndarray | Sequence[Sequence[float]],
                    objectives: Sequence[SearchObjective]) -> np.ndarray:
        """The feasible rows in the region's coordinates, all maximised from 0: accuracy points
        above the floor, decades of throughput above its reference, decades of energy below its
        reference. Rows outside the region are dropped."""
        pts = _matrix(points, objectives)[self.feasible_mask(points, objectives)]
        out = np.empty_like(pts)
        with np.errstate(divide="ignore", invalid="ignore"):
            for j, obj in enumerate(objectives):
                col = pts[:, j]
                if obj.name == "accuracy":
                    out[:, j] = col - self.accuracy_floor_pct
                elif obj.name == "throughput":
                    out[:, j] = np.log10(np.where(col > 0, col, np.nan) / self.throughput_ref_img_per_s)
                elif obj.name == "energy":
                    out[:, j] = np.log10(self.energy_ref_j_per_img / np.where(col > 0, col, np.nan))
                else:
                    raise ParetoError(f"the deploy region knows no objective {obj.name!r}")
        return out[~np.isnan(out).any(axis=1)]

    def volume(self, points: np.ndarray | Sequence[Sequence[float]],
               objectives: Sequence[SearchObjective]) -> float:
        """The deploy hypervolume of ``points`` (in `DEPLOY_HV_UNIT`, fewer factors with fewer
        objectives). A point on the floor or at a reference adds nothing."""
        pts = self.transformed(points, objectives)
        return hypervolume(pts, [0.0] * len(objectives), ["maximize"] * len(objectives))

    def curve(self, points_in_order: np.ndarray | Sequence[Sequence[float]],
              objectives: Sequence[SearchObjective]) -> np.ndarray:
        """`volume` after each point in order (the k-th value uses the first k+1)."""
        pts = _matrix(points_in_order, objectives)
        out = np.zeros(len(pts))
        kept: list[np.ndarray] = []
        value = 0.0
        for k, p in enumerate(pts):
            if self.feasible_mask(p[None, :], objectives)[0]:
                kept.append(p)
                front = np.asarray(kept)
                kept = list(front[non_dominated_mask(front, objectives)])
                value = self.volume(np.asarray(kept), objectives)
            out[k] = value
        return out

    def shares(self, points: np.ndarray | Sequence[Sequence[float]],
               objectives: Sequence[SearchObjective]) -> np.ndarray:
        """Each row's exclusive share of the volume of all rows: 1 - volume(without it) / volume.
        0 for rows outside the region or dominated; NaN everywhere when the volume is 0."""
        pts = _matrix(points, objectives)
        total = self.volume(pts, objectives)
        out = np.zeros(len(pts))
        if total <= 0:
            return np.full(len(pts), np.nan)
        feasible = self.feasible_mask(pts, objectives)
        front = np.zeros(len(pts), dtype=bool)
        front[feasible] = non_dominated_mask(pts[feasible], objectives)
        for i in np.flatnonzero(front):
            rest = np.delete(pts, i, axis=0)
            out[i] = 1.0 - self.volume(rest, objectives) / total
        return out


def _matrix(points: np.ndarray | Sequence[Sequence[float]], objectives: Sequence[SearchObjective]) -> np.ndarray:
    pts = np.asarray(points, dtype=float)
    if pts.size == 0:
        return np.empty((0, len(objectives)))
    if pts.ndim != 2 or pts.shape[1] != len(objectives):
        raise ParetoError(f"points must have one column per objective ({len(objectives)}), got shape {pts.shape}")
    return pts


def median_floor(accuracies_pct: Sequence[float]) -> float:
    """The default accuracy floor: the median of the space's deployed networks' accuracies."""
    acc = np.asarray([a for a in accuracies_pct if a is not None and np.isfinite(a)], dtype=float)
    if len(acc) == 0:
        raise ParetoError("no accuracies to take the median floor of")
    return float(np.median(acc))


def positive_figures(values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """The finite, positive values (a hardware figure a reference may be taken from); ``None``
    entries are left out."""
    arr = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return arr[np.isfinite(arr) & (arr > 0)]


def region_from_points(points: np.ndarray | Sequence[Sequence[float]], objectives: Sequence[SearchObjective],
                       accuracy_floor_pct: float, *, floor_from: str = "", refs_from: str = "") -> DeployRegion:
    """A region whose hardware references are the slowest throughput and the largest energy of
    ``points`` (e.g. every network of a recorded profile, or every candidate a run measured).
    An objective not among ``objectives`` gets reference 1 (it is not used)."""
    pts = _matrix(points, objectives)
    thr, energy = _column(objectives, "throughput"), _column(objectives, "energy")

    def _extreme(j: int | None, fn: Any) -> float:
        if j is None:
            return 1.0
        col = positive_figures(pts[:, j])
        if len(col) == 0:
            raise ParetoError("no positive hardware figures to set the deploy region's references from")
        return float(fn(col))

    return DeployRegion(float(accuracy_floor_pct), _extreme(thr, np.min), _extreme(energy, np.max),
                        floor_from=floor_from, refs_from=refs_from)


@dataclass(frozen=True)
class RegretProfile:
    """Best accuracy under budgets, against the best possible.

    Attributes:
        energy_budgets_j_per_img: the energy budgets (log-spaced over the true region front).
        throughput_floors_img_per_s: the throughput floors (likewise).
        energy_regret_pt: for each budget, best possible accuracy minus the best reached (points).
        throughput_regret_pt: the same for each throughput floor.
    """

    energy_budgets_j_per_img: tuple[float, ...]
    throughput_floors_img_per_s: tuple[float, ...]
    energy_regret_pt: tuple[float, ...]
    throughput_regret_pt: tuple[float, ...]

    @property
    def mean_regret_pt(self) -> float:
        """The mean over every budget and floor (NaN when there are none)."""
        values = [*self.energy_regret_pt, *self.throughput_regret_pt]
        return float(np.mean(values)) if values else float("nan")


def _best_under(acc: np.ndarray, hw: np.ndarray, limits: np.ndarray, below: bool, floor: float) -> np.ndarray:
    out = np.full(len(limits), floor)
    for k, limit in enumerate(limits):
        ok = hw <= limit * (1 + 1e-12) if below else hw >= limit * (1 - 1e-12)
        if ok.any():
            out[k] = max(floor, float(acc[ok].max()))
    return out


def regret_profile(found: np.ndarray | Sequence[Sequence[float]], best_possible: np.ndarray | Sequence[Sequence[float]],
                   objectives: Sequence[SearchObjective], region: DeployRegion, n: int = N_BUDGETS) -> RegretProfile:
    """The regret of the networks ``found`` against ``best_possible`` (e.g. every network of the
    space) under ``n`` energy budgets and ``n`` throughput floors, log-spaced between the extremes
    of the region front of ``best_possible``. A budget with nothing found counts the full gap to
    the floor."""
    acc_j = _column(objectives, "accuracy")
    if acc_j is None:
        raise ParetoError("a regret profile needs accuracy among the objectives")
    truth = _matrix(best_possible, objectives)
    truth = truth[region.feasible_mask(truth, objectives)]
    mine = _matrix(found, objectives)
    mine = mine[region.feasible_mask(mine, objectives)]
    if len(truth) == 0:
        raise ParetoError("no network of the best possible set lies in the deploy region")
    front = truth[non_dominated_mask(truth, objectives)]
    result: dict[str, tuple[float, ...]] = {}
    for name, below in (("energy", True), ("throughput", False)):
        j = _column(objectives, name)
        if j is None:
            result[name], result[name + "_regret"] = (), ()
            continue
        lo, hi = float(front[:, j].min()), float(front[:, j].max())
        limits = np.geomspace(lo, hi, n) if hi > lo else np.array([lo])
        best = _best_under(truth[:, acc_j], truth[:, j], limits, below, region.accuracy_floor_pct)
        reached = _best_under(mine[:, acc_j], mine[:, j], limits, below, region.accuracy_floor_pct)
        result[name] = tuple(float(x) for x in limits)
        result[name + "_regret"] = tuple(float(x) for x in np.maximum(best - reached, 0.0))
    return RegretProfile(result["energy"], result["throughput"], result["energy_regret"], result["throughput_regret"])


FLOORS_FILE = "quality_floors.json"
"""The default accuracy floors, in ``nasenergy/data``: for each space and dataset, the
median search-metric accuracy of the space's deployed networks (each the mean over its cells) in
the embedded tables, written by ``experiments/deploy_region.py --write-floors``."""


def default_floor_pct(space: str, dataset: str) -> float | None:
    """The declared default accuracy floor of ``space`` and ``dataset`` (`FLOORS_FILE`), for the
    default search metric; ``None`` where none is shipped."""
    path = Path(__file__).resolve().parent / "data" / FLOORS_FILE
    if not path.is_file():
        return None
    floors = json.loads(path.read_text()).get("floors", {})
    value = floors.get(space, {}).get(dataset)
    return None if value is None else float(value)
