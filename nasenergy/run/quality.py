"""A run's quality measure (`nasenergy.quality`), declared from its settings and its own measurements.

The accuracy floor is ``--min-accuracy`` where given, else the shipped median of the space's
deployed networks for the run's space and dataset (`nasenergy.quality.default_floor_pct`; only for
the default search metric). The hardware references are the slowest throughput and the largest
energy per image among the candidates the run measured (their cheap figures at the default clock),
so the region spans what the run could have chosen. The report, the progress bar and the plots all
use `run_region`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto import points_of
from nasenergy.quality import DEPLOY_HV_UNIT, DeployRegion, default_floor_pct, positive_figures

DEFAULT_METRIC = "x-valid/12"
REFS_FROM = "the slowest throughput and largest energy per image the run measured (default clock)"


def declared_floor(config: Mapping[str, Any]) -> tuple[float | None, str]:
    """``(floor, where it comes from)`` for a run's config; ``(None, reason)`` where none applies."""
    given = config.get("min_accuracy")
    if given is not None:
        return float(given), "--min-accuracy"
    if (config.get("search_metric") or DEFAULT_METRIC) != DEFAULT_METRIC:
        return None, "no floor for a --search-metric other than the default: give --min-accuracy"
    floor = default_floor_pct(str(config.get("space", "tss")), str(config.get("dataset", "cifar10")))
    if floor is None:
        return None, "no shipped floor for this space and dataset: give --min-accuracy"
    return floor, "median of the space's deployed networks"


def region_of(floor: float, floor_from: str, measured_throughput: Sequence[float | None],
              measured_energy: Sequence[float | None]) -> DeployRegion | None:
    """The region with references from the measured figures; ``None`` without any."""
    thr, energy = positive_figures(measured_throughput), positive_figures(measured_energy)
    if len(thr) == 0:
        return None
    return DeployRegion(floor, float(thr.min()), float(energy.max()) if len(energy) else 1.0,
                        floor_from=floor_from, refs_from=REFS_FROM)


def run_region(config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> DeployRegion | None:
    """The quality region of a run from its config and candidate rows (``None``: no floor, or
    nothing measured yet)."""
    floor, floor_from = declared_floor(config)
    if floor is None:
        return None
    return region_of(floor, floor_from, [r.get("measure_throughput_img_per_s") for r in rows],
                     [r.get("measure_energy_j_per_img") for r in rows])


@dataclass(frozen=True)
class RunQuality:
    """A run's standing under its region.

    Attributes:
        region: the declared region.
        volume: the deploy hypervolume of the run's evaluated networks (`DEPLOY_HV_UNIT`).
        in_region: evaluated networks at or above the floor.
        front_size: of those, the non-dominated ones.
        largest_share: the largest exclusive share of the volume one network holds (NaN if 0).
    """

    region: DeployRegion
    volume: float
    in_region: int
    front_size: int
    largest_share: float


def run_quality(region: DeployRegion, evaluated: Sequence[Mapping[str, Any]],
                objectives: Sequence[SearchObjective]) -> RunQuality:
    """The quality of ``evaluated`` rows under ``region``."""
    pts = points_of(list(evaluated), objectives)
    shares = region.shares(pts, objectives)
    feasible = region.feasible_mask(pts, objectives)
    largest = float(np.nanmax(shares)) if len(shares) and np.isfinite(shares).any() else float("nan")
    return RunQuality(region, region.volume(pts, objectives), int(feasible.sum()), int((shares > 0).sum()),
                      largest)


def quality_unit(objectives: Sequence[SearchObjective]) -> str:
    """The unit of the deploy hypervolume for these objectives."""
    parts = {"accuracy": "pt", "throughput": "dec", "energy": "dec"}
    return " x ".join(parts[o.name] for o in objectives if o.name in parts) or DEPLOY_HV_UNIT
