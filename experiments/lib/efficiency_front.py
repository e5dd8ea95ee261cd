"""Search efficiency, part 1: the set-up, the measured subspace, its true front and the
yardsticks: two hypervolume ratios and the front recall (see ``experiments/search_efficiency.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nasenergy.errors import UsageError
from nasenergy.hardware.coverage import CLASS_UNIT
from nasenergy.hardware.recorded import NotRecordedError, RecordedMeter
from nasenergy.objectives import OBJECTIVE_NAMES, objectives_for
from nasenergy.pareto import ParetoFront, hypervolume, search_hypervolume
from nasenergy.paths import shared_data_dir
from nasenergy.search.command.components import build_components
from nasenergy.search.command.config import DEFAULT_PATIENCE, SearchConfig

OBJECTIVES: tuple[str, ...] = OBJECTIVE_NAMES
DATASET = "cifar10"
METHODS: dict[str, tuple[str, str]] = {
    "random": ("random", "none"),
    "tpe": ("tpe", "none"),
    "nsga2": ("nsga2", "none"),
    "tpe+threshold": ("tpe", "threshold"),
    "tpe+dominance": ("tpe", "dominance"),
    "tpe+dominance@0.8": ("tpe", "dominance"),
    "tpe+dominance@0.5": ("tpe", "dominance"),
    "tpe+dominance+screen": ("tpe", "dominance"),
}
"""method -> (sampler, filter)."""
TARGET_RECALL: dict[str, float] = {"tpe+dominance@0.8": 0.8, "tpe+dominance@0.5": 0.5}
"""Methods that set the filter's target recall (the others keep the command's default)."""
SCREEN: dict[str, int] = {"tpe+dominance+screen": 4}
"""Methods that screen several measured candidates per full evaluation (``--screen``)."""
DEFAULT_METHODS: tuple[str, ...] = ("random", "tpe", "nsga2", "tpe+threshold", "tpe+dominance")
"""The methods run when ``--methods`` is not given; the recall variants are a sensitivity study."""
LEVELS: tuple[float, ...] = (0.95, 0.99)
WARMUP_FACTOR = 3.0
YARDSTICKS: dict[str, str] = {
    "normalised": "hv_norm_ratio",
    "origin": "hv_ratio",
    "recall": "front_recall",
}
"""Yardstick -> the prefix of its ratio columns; the first is the primary one."""
HV_YARDSTICKS: tuple[str, ...] = ("normalised", "origin")
"""The hypervolume yardsticks (in which one front point can hold most of the volume)."""
RECALL_ACCURACY_PP = 0.5
"""Front recall: a found point matches a true-front point when its accuracy is at most this many
percentage points lower ..."""
RECALL_HARDWARE_REL = 0.02
"""... and its throughput and energy per image are at most this share worse (about the spread of
the same network's figures between H200 boards)."""
PRIMARY = "normalised"

# ---------------------------------------------------------------------------------- subspace


@dataclass
class ClassFigures:
    """One profiled class: its default-clock measurement and its scored figures.

    Attributes:
        measurement: the recorded default-clock `Measurement`.
        throughput_img_per_s: at the modelled energy-optimal clock.
        energy_j_per_img: at the modelled energy-optimal clock.
        cost_s: what measuring it costs in a search (recorded, warm-up replaced by the median).
    """

    measurement: Any
    throughput_img_per_s: float
    energy_j_per_img: float
    cost_s: float


@dataclass
class Subspace:
    """The measured subspace: the profiled classes and the true Pareto front over their cells.

    Attributes:
        classes: network key (`nasenergy.run.network_key`) -> `ClassFigures`, for the
            profiled networks.
        n_cells: TSS cells whose network is profiled.
        true_front: ``(n, 3)`` objective rows (accuracy %, img/s, J/img) of the true front.
        true_hv: its origin-based hypervolume (`nasenergy.pareto.search_hypervolume`).
        true_front_arch_index: official index of the cell behind each true-front row.
        median_measure_cost_s: the profile's median measurement cost.
        n_warmup: classes whose cost was a warm-up (charged the median).
        lower: ``(3,)`` each objective's minimum over every point of the subspace (own units).
        upper: ``(3,)`` each objective's maximum over every point of the subspace.
        true_hv_norm: the true front's normalised hypervolume (`normalised_hv`).
        dataset: the NATS-Bench dataset whose accuracies it holds.
        n_networks_total: networks of the whole space, counted by the study's key.
        unit: what a network is (`nasenergy.hardware.coverage.Coverage.unit`).
        profile: the recorded profile replayed (``None``: the shipped one).
    """

    classes: dict[str, ClassFigures]
    n_cells: int
    true_front: np.ndarray
    true_hv: float
    true_front_arch_index: list[int]
    median_measure_cost_s: float
    n_warmup: int
    lower: np.ndarray
    upper: np.ndarray
    true_hv_norm: float
    dataset: str = DATASET
    n_networks_total: int = 0
    unit: str = CLASS_UNIT
    profile: str | None = None


def search_config(method: str, seed: int, budget: int, out: str | None = None, patience: int | None = None,
                  dataset: str = DATASET, profile: str | None = None) -> Any:
    """The `SearchConfig` of one run (recorded H200 profile, modelled DVFS, shared tables);
    ``patience`` None: the command's default stall guard; ``profile`` None: the shipped profile."""
    sampler, filt = METHODS[method]
    recall = {"target_recall": TARGET_RECALL[method]} if method in TARGET_RECALL else {}
    screen = SCREEN.get(method, 1)
    return SearchConfig(
        budget=budget, space="tss", dataset=dataset, objectives=OBJECTIVES,
        benchmark=str(shared_data_dir()), hardware="recorded", filter=filt, dvfs="modelled",
        sampler=sampler, seed=seed, out=out, quiet=True, profile=profile,
        patience=DEFAULT_PATIENCE if patience is None else patience, screen=screen, **recall,
    )


def build_subspace(config: Any, components: Any = None) -> Subspace:
    """Score every profiled network with the search's own parts (``components``, by default
    `build_components` of ``config``: the recorded meter, the modelled DVFS step and the study's
    network key), find the true front over every cell of those networks, and the bounds of each
    objective over all those cells (the normalised yardstick). A network's figures are measured on
    its first cell in official order (for a profile of networks as built, the class representative
    the profile holds)."""
    if components is None:
        components = build_components(config)
    space, oracle, measure = components.space, components.oracle, components.measure
    optimal_clock = components.optimal_clock
    rows = [r for r in RecordedMeter(config.profile, space=space).rows()
            if (r["precision"], int(r["batch_size"])) == (config.precision, config.batch_size)]
    median = float(np.median([float(r["measure_cost_s"]) for r in rows]))
    classes: dict[str, ClassFigures | None] = {}
    accuracies: dict[str, list[float]] = {}
    n_warmup = 0
    points, index = [], []
    n_cells = 0
    for i in range(space.size):
        arch = space.arch_at(i)
        key = components.key_of(arch)
        if key not in classes:
            classes[key], warmup = _figures(measure, optimal_clock, arch, median)
            n_warmup += warmup
        fig = classes[key]
        if fig is None:
            continue
        n_cells += 1
        if key not in accuracies:  # every cell of a network gets the network's answers
            accuracies[key] = sorted(possible_accuracies(oracle, arch, config.dataset))
        for acc in accuracies[key]:
            points.append([acc, fig.throughput_img_per_s, fig.energy_j_per_img])
            index.append(i)
    if not points:
        raise UsageError("the recorded profile holds no TSS cell: nothing to search")
    pts = np.array(points)
    objectives = objectives_for(OBJECTIVES)
    true = ParetoFront.from_points(pts, objectives, keys=index)
    front = true.points
    lower, upper = pts.min(axis=0), pts.max(axis=0)
    coverage = components.coverage
    return Subspace({k: f for k, f in classes.items() if f is not None}, n_cells, front, true.search_hypervolume(),
                    [int(k) for k in true.keys], median, n_warmup, lower, upper,
                    normalised_hv(front, lower, upper), config.dataset,
                    n_networks_total=len(classes), unit=coverage.unit if coverage else CLASS_UNIT,
                    profile=config.profile)


def _figures(measure: Any, optimal_clock: Any, arch: Any, median_cost_s: float) -> tuple[ClassFigures | None, bool]:
    """A network's scored figures from its recorded measurement (``None``: not in the profile),
    and whether its measurement was a warm-up: a cost above `WARMUP_FACTOR` times the median,
    charged the median."""
    try:
        m = measure(arch)
    except NotRecordedError:
        return None, False
    clock = optimal_clock(arch, m)
    cost = float(m.measure_cost_s)
    warmup = cost > WARMUP_FACTOR * median_cost_s
    return ClassFigures(m, float(clock.best.throughput_img_per_s), float(clock.best.energy_j_per_img),
                        median_cost_s if warmup else cost), warmup


def possible_accuracies(oracle: Any, arch: Any, dataset: str, n_draws: int = 30) -> set[float]:
    """Every search-metric value the oracle can return for `arch` (all recorded runs)."""
    first = oracle.evaluate(arch, dataset, seed=0)
    values = {float(first.accuracy_pct)}
    cells = getattr(oracle, "oracle", oracle)  # a network oracle's answers are means over its cells
    if cells.evaluate(arch, dataset, seed=0).trial != "mean":  # one run drawn at random: collect the others
        values |= {float(oracle.evaluate(arch, dataset, seed=s).accuracy_pct) for s in range(1, n_draws)}
    return values


# ----------------------------------------------------------------------------- hypervolume


def to_unit_maximisation(points: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Objective rows (accuracy %, img/s, J/img) min-max normalised with the given bounds and
    turned into maximisation: 0 is the subspace's worst value of each objective, 1 its best."""
    pts = np.asarray(points, dtype=float).reshape(-1, len(OBJECTIVES))
    span = np.where(upper > lower, upper - lower, 1.0)
    unit = (pts - lower) / span
    for j, obj in enumerate(objectives_for(OBJECTIVES)):
        if obj.sense == "minimize":
            unit[:, j] = 1.0 - unit[:, j]
    return unit


def normalised_hv(points: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """The normalised hypervolume of objective rows: `to_unit_maximisation`, reference point 0
    (the subspace's worst corner), exact 3-D volume (`nasenergy.pareto.hypervolume`); at most 1."""
    unit = to_unit_maximisation(points, lower, upper)
    return hypervolume(unit, [0.0] * unit.shape[1], ["maximize"] * unit.shape[1])


def matched_front_points(point: np.ndarray, true_front: np.ndarray) -> np.ndarray:
    """``(n,)`` bools: the true-front points that ``point`` (accuracy %, img/s, J/img) matches, being
    within `RECALL_ACCURACY_PP` of each one's accuracy and `RECALL_HARDWARE_REL` of its throughput
    and energy, or better."""
    front = np.asarray(true_front, dtype=float).reshape(-1, len(OBJECTIVES))
    return ((point[0] >= front[:, 0] - RECALL_ACCURACY_PP)
            & (point[1] >= front[:, 1] * (1 - RECALL_HARDWARE_REL))
            & (point[2] <= front[:, 2] * (1 + RECALL_HARDWARE_REL)))


def ratio_curves(values: np.ndarray, sub: Subspace) -> dict[str, np.ndarray]:
    """Each yardstick's ratio (found / true front) after each of the evaluated points, in order;
    for the front recall, the share of true-front points matched so far (`matched_front_points`).

    Args:
        values: ``(n, 3)`` evaluated objective rows (accuracy %, img/s, J/img) in evaluation order.
        sub: the measured subspace (true front and bounds).

    Returns:
        yardstick name -> ``(n,)`` ratios.
    """
    values = np.asarray(values, dtype=float).reshape(-1, len(OBJECTIVES))
    out = {name: np.zeros(len(values)) for name in YARDSTICKS}
    front = ParetoFront(objectives_for(OBJECTIVES))
    ratios = {name: 0.0 for name in YARDSTICKS}
    matched = np.zeros(len(sub.true_front), dtype=bool)
    for k, v in enumerate(values):
        if not np.isnan(v).any() and front.add(v):
            matched |= matched_front_points(v, sub.true_front)
            ratios = {"origin": front.search_hypervolume() / sub.true_hv,
                      "normalised": normalised_hv(front.points, sub.lower, sub.upper) / sub.true_hv_norm,
                      "recall": float(matched.mean()) if len(matched) else 0.0}
        for name in YARDSTICKS:
            out[name][k] = ratios[name]
    return out


def front_contributions(sub: Subspace, yardstick: str) -> np.ndarray:
    """Each true-front point's exclusive share of the true hypervolume under `yardstick` (under
    the front recall, every point counts alike)."""
    objectives = objectives_for(OBJECTIVES)
    if yardstick == "recall":
        return np.full(len(sub.true_front), 1.0 / max(1, len(sub.true_front)))

    def hv(front: np.ndarray) -> float:
        if yardstick == "origin":
            return search_hypervolume(front, objectives) / sub.true_hv
        return normalised_hv(front, sub.lower, sub.upper) / sub.true_hv_norm

    return np.array([1.0 - hv(np.delete(sub.true_front, i, axis=0)) for i in range(len(sub.true_front))])
