"""Search efficiency: how many full evaluations each search method needs to find the Pareto front.

Compares random search, TPE and NSGA-II without a filter, and TPE with the threshold and the
dominance-aware utilization filters, on three objectives: accuracy (12-epoch x-valid of CIFAR-10, or of ``--dataset``, the
NATS-Bench search metric) ↑, throughput at the energy-optimal clock ↑ and energy per image at that
clock ↓. Throughput and energy come from the recorded H200 profile (default clock, **recorded**)
and the DVFS model with the extrapolated H200 parameters (optimal clock, **modelled**); accuracy
and its cost from the NATS-Bench tables in the shared data folder (**recorded**, costs of cells
without a record **estimated** by the oracle's rate model).

**Measured subspace.** The profile may cover only some TSS classes. The search runs over the whole
TSS space, but a candidate whose class is not in the profile is skipped without cost (outcome
``not_recorded`` in ``python -m nasenergy.search --hardware recorded``: no measurement, no budget);
the **true front** is the Pareto front over every TSS cell whose class is in the profile. For the few cells whose
12-epoch accuracy has several recorded runs, every run's value enters the true front, so no search
can exceed it.

**Two hypervolume yardsticks.** The primary one is the *normalised* hypervolume: each objective is
min-max normalised over every point of the measured subspace (the points the true front is taken
from), turned into maximisation (energy: ``(max - e) / (max - min)``), and the reference point is
the subspace's worst corner (0 after normalisation). It weighs the three objectives alike, so no
single extreme network holds most of it. The secondary one is the search's own convention
(`nasenergy.pareto.search_hypervolume`: accuracy %, img/s, img/J against the origin), kept
so that earlier results compare; in raw units one very fast network holds a large share of it.

Each run is a complete search through `nasenergy.search.run_search` (the command's own pipeline:
journal storage, claims, filter, modelled DVFS, stall guard, run files), with the recorded H200
meter and the table oracle over the shared data. Its run folder goes to ``--work-dir`` (git-ignored
``runs/``); its candidates are reduced to one CSV per run here. A run the stall guard stops
(``--patience``: that many candidates in a row without a new full evaluation) counts with the
ratio it reached.

Search cost of a run = Σ recorded NATS-Bench training+evaluation time of its full evaluations +
Σ recorded H200 measurement time of the classes it measured (a measurement above 3× the profile's
median cost is a measuring run's warm-up and is charged the median). The two are on different GPUs
(NATS-Bench's and the H200); both are GPU wall-clock seconds.

Writes one gzipped CSV per (method, seed) to ``OUT/runs/`` (runs already there are kept: the script
resumes; runs made on a different measured subspace are refused), then ``curves.csv``,
``summary.csv``, ``speedups.csv``, ``true_front.csv``, ``hv_vs_evaluations.png``,
``hv_vs_cost.png``, ``hv_vs_evaluations_origin.png`` and ``README.md``::

    python experiments/search_efficiency.py [--seeds 20] [--budget 200] [--jobs 2] [--patience 500]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.pareto import ParetoFront, hypervolume, search_hypervolume

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "search_efficiency"
OBJECTIVES: tuple[str, ...] = OBJECTIVE_NAMES
DATASET = "cifar10"
METHODS: dict[str, tuple[str, str]] = {
    "random": ("random", "none"),
    "tpe": ("tpe", "none"),
    "nsga2": ("nsga2", "none"),
    "tpe+threshold": ("tpe", "threshold"),
    "tpe+dominance": ("tpe", "dominance"),
    "tpe+dominance@0.95": ("tpe", "dominance"),
    "tpe+dominance@0.5": ("tpe", "dominance"),
}
"""method -> (sampler, filter)."""
TARGET_RECALL: dict[str, float] = {"tpe+dominance@0.95": 0.95, "tpe+dominance@0.5": 0.5}
"""Methods that set the filter's target recall (the others keep the command's default)."""
DEFAULT_METHODS: tuple[str, ...] = ("random", "tpe", "nsga2", "tpe+threshold", "tpe+dominance")
"""The methods run when ``--methods`` is not given; the recall variants are a sensitivity study."""
LEVELS: tuple[float, ...] = (0.95, 0.99)
WARMUP_FACTOR = 3.0
YARDSTICKS: dict[str, str] = {
    "normalised": "hv_norm_ratio",
    "origin": "hv_ratio",
}
"""Hypervolume yardstick -> the prefix of its ratio columns; the first is the primary one."""
PRIMARY = "normalised"
RUN_COLUMNS: tuple[str, ...] = (
    "method", "seed", "candidate", "outcome", "canonical", "arch_index", "evaluation_number",
    "accuracy_pct", "throughput_img_per_s", "energy_j_per_img", "utilization", "filter_reason",
    "measure_cost_s", "eval_cost_s", "eval_cost_source", "cum_cost_s", "hv", "hv_ratio",
    "hv_norm", "hv_norm_ratio", "stop_reason", "patience",
)
"""Columns of a run CSV; ``stop_reason`` and ``patience`` are the run's, repeated on every row."""


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
        classes: canonical string -> `ClassFigures`.
        n_cells: TSS cells whose class is profiled.
        true_front: ``(n, 3)`` objective rows (accuracy %, img/s, J/img) of the true front.
        true_hv: its origin-based hypervolume (`nasenergy.pareto.search_hypervolume`).
        true_front_arch_index: official index of the cell behind each true-front row.
        median_measure_cost_s: the profile's median measurement cost.
        n_warmup: classes whose cost was a warm-up (charged the median).
        lower: ``(3,)`` each objective's minimum over every point of the subspace (own units).
        upper: ``(3,)`` each objective's maximum over every point of the subspace.
        true_hv_norm: the true front's normalised hypervolume (`normalised_hv`).
        dataset: the NATS-Bench dataset whose accuracies it holds.
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


def search_config(method: str, seed: int, budget: int, out: str | None = None, patience: int | None = None,
                  dataset: str = DATASET) -> Any:
    """The `SearchConfig` of one run (recorded H200 profile, modelled DVFS, shared tables);
    ``patience`` None: the command's default stall guard."""
    from nasenergy.paths import shared_data_dir
    from nasenergy.search.config import DEFAULT_PATIENCE, SearchConfig

    sampler, filt = METHODS[method]
    recall = {"target_recall": TARGET_RECALL[method]} if method in TARGET_RECALL else {}
    return SearchConfig(
        budget=budget, space="tss", dataset=dataset, objectives=OBJECTIVES,
        benchmark=str(shared_data_dir()), hardware="recorded", filter=filt, dvfs="modelled",
        sampler=sampler, seed=seed, out=out, quiet=True,
        patience=DEFAULT_PATIENCE if patience is None else patience, **recall,
    )


def build_subspace(config: Any) -> Subspace:
    """Score every profiled class with the search's own parts (`build_components`: the recorded
    meter and the modelled DVFS step), find the true front over every cell of those classes, and
    the bounds of each objective over all those cells (the normalised yardstick)."""
    from nasenergy.hardware.recorded import RecordedMeter
    from nasenergy.search.components import build_components
    from nasenergy.search.objectives import objectives_for

    parts = build_components(config)
    space, oracle, measure, optimal_clock = parts.space, parts.oracle, parts.measure, parts.optimal_clock
    rows = [r for r in RecordedMeter(space=space).rows()
            if (r["precision"], int(r["batch_size"])) == (config.precision, config.batch_size)]
    costs = [float(r["measure_cost_s"]) for r in rows]
    median = float(np.median(costs))
    classes: dict[str, ClassFigures] = {}
    n_warmup = 0
    for r in rows:
        arch = space.parse(r["canonical_arch"])
        m = measure(arch)
        clock = optimal_clock(arch, m)
        cost = float(m.measure_cost_s)
        if cost > WARMUP_FACTOR * median:
            cost, n_warmup = median, n_warmup + 1
        classes[str(space.canonical(arch))] = ClassFigures(
            m, float(clock.best.throughput_img_per_s), float(clock.best.energy_j_per_img), cost)
    points, index = [], []
    n_cells = 0
    for i in range(space.size):
        arch = space.arch_at(i)
        fig = classes.get(str(space.canonical(arch)))
        if fig is None:
            continue
        n_cells += 1
        for acc in sorted(_possible_accuracies(oracle, arch, config.dataset)):
            points.append([acc, fig.throughput_img_per_s, fig.energy_j_per_img])
            index.append(i)
    if not points:
        raise UsageError("the recorded profile holds no TSS cell: nothing to search")
    pts = np.array(points)
    objectives = objectives_for(OBJECTIVES)
    true = ParetoFront.from_points(pts, objectives, keys=index)
    front = true.points
    lower, upper = pts.min(axis=0), pts.max(axis=0)
    return Subspace(classes, n_cells, front, true.search_hypervolume(),
                    [int(k) for k in true.keys], median, n_warmup, lower, upper,
                    normalised_hv(front, lower, upper), config.dataset)


def _possible_accuracies(oracle: Any, arch: Any, dataset: str, n_draws: int = 30) -> set[float]:
    """Every search-metric value the oracle can return for `arch` (all recorded runs)."""
    first = oracle.evaluate(arch, dataset, seed=0)
    values = {float(first.accuracy_pct)}
    if first.trial != "mean":  # one run drawn at random: collect the others
        values |= {float(oracle.evaluate(arch, dataset, seed=s).accuracy_pct) for s in range(1, n_draws)}
    return values


# ----------------------------------------------------------------------------- hypervolume


def to_unit_maximisation(points: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Objective rows (accuracy %, img/s, J/img) min-max normalised with the given bounds and
    turned into maximisation: 0 is the subspace's worst value of each objective, 1 its best."""
    from nasenergy.search.objectives import objectives_for

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


def ratio_curves(values: np.ndarray, sub: Subspace) -> dict[str, np.ndarray]:
    """Each yardstick's ratio (found / true front) after each of the evaluated points, in order.

    Args:
        values: ``(n, 3)`` evaluated objective rows (accuracy %, img/s, J/img) in evaluation order.
        sub: the measured subspace (true front and bounds).

    Returns:
        yardstick name -> ``(n,)`` ratios.
    """
    from nasenergy.search.objectives import objectives_for

    values = np.asarray(values, dtype=float).reshape(-1, len(OBJECTIVES))
    out = {name: np.zeros(len(values)) for name in YARDSTICKS}
    front = ParetoFront(objectives_for(OBJECTIVES))
    ratios = {name: 0.0 for name in YARDSTICKS}
    for k, v in enumerate(values):
        if not np.isnan(v).any() and front.add(v):
            ratios = {"origin": front.search_hypervolume() / sub.true_hv,
                      "normalised": normalised_hv(front.points, sub.lower, sub.upper) / sub.true_hv_norm}
        for name in YARDSTICKS:
            out[name][k] = ratios[name]
    return out


def front_contributions(sub: Subspace, yardstick: str) -> np.ndarray:
    """Each true-front point's exclusive share of the true hypervolume under `yardstick`."""
    from nasenergy.search.objectives import objectives_for

    objectives = objectives_for(OBJECTIVES)

    def hv(front: np.ndarray) -> float:
        if yardstick == "origin":
            return search_hypervolume(front, objectives) / sub.true_hv
        return normalised_hv(front, sub.lower, sub.upper) / sub.true_hv_norm

    return np.array([1.0 - hv(np.delete(sub.true_front, i, axis=0)) for i in range(len(sub.true_front))])


# -------------------------------------------------------------------------------- one search

UNFINISHED: tuple[str, ...] = ("interrupted", "worker_failed")
"""Stop reasons of searches that did not run their course (no run CSV is written)."""
MEASURED_OUTCOMES: tuple[str, ...] = ("evaluated", "filtered", "over_budget")
"""Outcomes of candidates that were measured (each new profiled class is measured once)."""


def run_pipeline(method: str, seed: int, budget: int, sub: Subspace, work_dir: Path,
                 patience: int | None = None) -> tuple[list[dict[str, Any]], str]:
    """One complete search with `nasenergy.search.run_search`; its candidates as `RUN_COLUMNS` rows
    (in trial order, with the cumulative cost and both hypervolume ratios) and its stop reason."""
    import shutil

    from nasenergy.search import run_search

    folder = work_dir / f"{method.replace('+', '_')}_seed{seed:02d}"
    if folder.exists():
        shutil.rmtree(folder)  # a run cut short earlier: start afresh rather than resume
    config = search_config(method, seed, budget, out=str(folder), patience=patience, dataset=sub.dataset)
    summary = run_search(config, resume_command="python experiments/search_efficiency.py")
    with (folder / "candidates.csv").open(newline="") as fh:
        cands = sorted(csv.DictReader(fh), key=lambda r: int(r["trial_number"]))
    values = np.array([[float(c["accuracy_pct"]), float(c["throughput_img_per_s"]), float(c["energy_j_per_img"])]
                       for c in cands if c["outcome"] == "evaluated"]).reshape(-1, len(OBJECTIVES))
    curves = ratio_curves(values, sub)
    rows, cum_cost, n_eval = [], 0.0, 0
    ratio = {name: 0.0 for name in YARDSTICKS}
    for c in cands:
        row: dict[str, Any] = {"method": method, "seed": seed, "candidate": int(c["trial_number"]),
                               "outcome": c["outcome"], "canonical": c["canonical"], "arch_index": c["arch_index"],
                               "filter_reason": c["filter_reason"] or None, "stop_reason": summary.stop_reason,
                               "patience": config.patience}
        fig = sub.classes.get(c["canonical"])
        if c["outcome"] in MEASURED_OUTCOMES and fig is not None:
            cum_cost += fig.cost_s
            row.update(measure_cost_s=fig.cost_s, utilization=float(c["utilization"]))
        if c["outcome"] == "evaluated":
            ratio = {name: float(curves[name][n_eval]) for name in YARDSTICKS}
            n_eval += 1
            cum_cost += float(c["eval_cost_s"])
            row.update(evaluation_number=n_eval, accuracy_pct=values[n_eval - 1, 0],
                       throughput_img_per_s=values[n_eval - 1, 1], energy_j_per_img=values[n_eval - 1, 2],
                       eval_cost_s=float(c["eval_cost_s"]), eval_cost_source=c["eval_cost_source"])
        row.update(cum_cost_s=cum_cost, hv=ratio["origin"] * sub.true_hv, hv_ratio=ratio["origin"],
                   hv_norm=ratio["normalised"] * sub.true_hv_norm, hv_norm_ratio=ratio["normalised"])
        rows.append(row)
    return rows, summary.stop_reason


# ------------------------------------------------------------------------------ run files


def run_path(out: Path, method: str, seed: int) -> Path:
    """The CSV of one (method, seed)."""
    return out / "runs" / f"{method.replace('+', '_')}_seed{seed:02d}.csv.gz"


def write_run(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write a run's rows atomically (a partial file never looks like a finished run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with gzip.open(tmp, "wt", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RUN_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(r.get(k)) for k in RUN_COLUMNS})
    os.replace(tmp, path)


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return format(v, ".10g")
    return v


def read_run(path: Path) -> list[dict[str, str]]:
    """The rows of a run CSV (gzipped)."""
    try:
        with gzip.open(path, "rt", newline="") as fh:
            return list(csv.DictReader(fh))
    except (OSError, EOFError, csv.Error) as exc:
        raise UsageError(f"{path}: not a readable run file ({exc}); move it away and rerun") from None


_WORKER: dict[str, Any] = {}


def _init_worker(budget: int, patience: int | None = None, dataset: str = DATASET) -> None:
    """Per process: the measured subspace (built once)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    _WORKER.update(subspace=build_subspace(search_config("tpe", 0, budget, dataset=dataset)), budget=budget,
                   patience=patience)


def _do_run(job: tuple[str, int, str, str]) -> tuple[str, int, float, str, int]:
    method, seed, out, work_dir = job
    t0 = time.perf_counter()
    rows, reason = run_pipeline(method, seed, _WORKER["budget"], _WORKER["subspace"], Path(work_dir),
                                _WORKER["patience"])
    if reason not in UNFINISHED:  # an interrupted search is no result: a rerun does it again
        write_run(run_path(Path(out), method, seed), rows)
    return method, seed, time.perf_counter() - t0, reason, len(rows)


def run_all(methods: Sequence[str], seeds: Sequence[int], budget: int, out: Path, work_dir: Path, jobs: int,
            deadline_s: float | None, patience: int | None = None,
            dataset: str = DATASET) -> list[tuple[str, int, float, str, int]]:
    """Every (method, seed) whose CSV is missing, seed-major (so a cut-off run set stays balanced
    across methods); stops starting new runs after ``deadline_s`` seconds."""
    todo = [(m, s, str(out), str(work_dir)) for s in seeds for m in methods if not run_path(out, m, s).is_file()]
    print(f"{len(todo)} runs to do ({len(methods) * len(seeds) - len(todo)} already done)", flush=True)
    done: list[tuple[str, int, float, str, int]] = []
    if not todo:
        return done
    t0 = time.perf_counter()
    if jobs <= 1:
        if "subspace" not in _WORKER:
            _init_worker(budget, patience, dataset)
        _WORKER.update(budget=budget, patience=patience)
        for job in todo:
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                print("deadline reached; rerun to continue", flush=True)
                break
            done.append(_do_run(job))
            _log_timing(out, done[-1])
        return done
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs, initializer=_init_worker,
                                                initargs=(budget, patience, dataset)) as pool:
        pending = [pool.apply_async(_do_run, (job,)) for job in todo]
        for p in pending:
            try:
                remaining = None if deadline_s is None else max(1.0, deadline_s - (time.perf_counter() - t0))
                done.append(p.get(timeout=remaining))
            except multiprocessing.TimeoutError:
                print("deadline reached; stopping (finished runs are kept; rerun to continue)", flush=True)
                pool.terminate()
                break
            _log_timing(out, done[-1])
    return done


TIMINGS_CSV = "run_timings.csv"


def _log_timing(out: Path, done: tuple[str, int, float, str, int]) -> None:
    """Print one finished run and append it to ``run_timings.csv`` (measured wall time)."""
    print("  %s seed %d: %.1f s (%s, %d candidates)" % done, flush=True)
    path = out / TIMINGS_CSV
    new = not path.is_file()
    with path.open("a", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        if new:
            w.writerow(["method", "seed", "wall_s", "stop_reason", "candidates"])
        w.writerow([done[0], done[1], f"{done[2]:.1f}", done[3], done[4]])


def read_timings(out: Path) -> dict[str, list[float]]:
    """Wall seconds of the logged runs, per method (the last entry of a re-run counts)."""
    path = out / TIMINGS_CSV
    if not path.is_file():
        return {}
    last: dict[tuple[str, str], float] = {}
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            last[(r["method"], r["seed"])] = float(r["wall_s"])
    out_: dict[str, list[float]] = {}
    for (m, _), t in last.items():
        out_.setdefault(m, []).append(t)
    return out_


# ------------------------------------------------------------------------------- analysis


@dataclass
class MethodCurves:
    """Hypervolume-ratio curves of one method over its seeds, under every yardstick.

    Attributes:
        seeds: the seeds, in order.
        by_eval: yardstick -> ``(n_seeds, budget)``: ratio after k+1 full evaluations (a run that
            stopped short keeps its last value).
        cost_at_eval: ``(n_seeds, budget)``: cumulative search cost (s) at the k+1-th evaluation.
        rows: each seed's rows.
        by_candidate: per seed, yardstick -> ratio after each candidate.
        cost_by_candidate: per seed, cumulative search cost (s) after each candidate.
        stop_reasons: per seed, why its search stopped (``unknown`` for runs that did not record it).
    """

    seeds: list[int]
    by_eval: dict[str, np.ndarray]
    cost_at_eval: np.ndarray
    rows: list[list[dict[str, str]]]
    by_candidate: list[dict[str, np.ndarray]]
    cost_by_candidate: list[np.ndarray]
    stop_reasons: list[str]


def evaluated_values(rows: Sequence[dict[str, str]]) -> np.ndarray:
    """``(n, 3)``: the objective rows of a run's evaluated candidates, in order."""
    return np.array([[float(r["accuracy_pct"]), float(r["throughput_img_per_s"]), float(r["energy_j_per_img"])]
                     for r in rows if r["outcome"] == "evaluated"]).reshape(-1, len(OBJECTIVES))


def check_run_matches(path: Path, rows: Sequence[dict[str, str]], curves: dict[str, np.ndarray]) -> None:
    """Refuse a run made on another measured subspace: its recorded origin-based ratio must be
    the one this subspace's true front gives.

    Raises:
        UsageError: the recorded and recomputed ratios differ.
    """
    recorded = [float(r["hv_ratio"]) for r in rows if r["outcome"] == "evaluated" and r.get("hv_ratio")]
    if not recorded or not len(curves["origin"]):
        return
    now = float(curves["origin"][-1])
    if not math.isclose(recorded[-1], now, rel_tol=1e-6, abs_tol=1e-9):
        raise UsageError(
            f"{path} was made on a different measured subspace (its final ratio {recorded[-1]:.6g} is "
            f"{now:.6g} against the current profile's true front); move {path.parent} and "
            f"{path.parent.parent / TIMINGS_CSV} away, or choose another --out")


def _stop_reason(rows: Sequence[dict[str, str]], n_eval: int, budget: int) -> str:
    recorded = rows[0].get("stop_reason") if rows else None
    if recorded:
        return recorded
    return "budget" if n_eval >= budget else "unknown"


def load_curves(out: Path, methods: Sequence[str], seeds: Sequence[int], budget: int,
                sub: Subspace) -> dict[str, MethodCurves]:
    """Curves of every finished run, recomputed from its evaluated figures against `sub` (so runs
    written before a yardstick existed are scored the same way).

    Raises:
        UsageError: a run made on another measured subspace (`check_run_matches`).
    """
    curves = {}
    for m in methods:
        ok = [(s, run_path(out, m, s)) for s in seeds if run_path(out, m, s).is_file()]
        if not ok:
            continue
        by_eval = {name: np.zeros((len(ok), budget)) for name in YARDSTICKS}
        cost = np.full((len(ok), budget), np.nan)
        all_rows, by_cand, cost_cand, reasons = [], [], [], []
        for i, (_, path) in enumerate(ok):
            rows = read_run(path)
            ratios = ratio_curves(evaluated_values(rows), sub)
            check_run_matches(path, rows, ratios)
            is_eval = np.array([r["outcome"] == "evaluated" for r in rows], dtype=bool)
            n_eval = int(is_eval.sum())
            for name in YARDSTICKS:
                vals = ratios[name][:budget]
                by_eval[name][i, : len(vals)] = vals
                by_eval[name][i, len(vals):] = vals[-1] if len(vals) else 0.0
            costs = np.array([float(r["cum_cost_s"]) for r in rows])
            ev_cost = costs[is_eval][:budget]
            cost[i, : len(ev_cost)] = ev_cost
            # ratio after each candidate: the ratio of the latest evaluation so far (0 before any)
            pos = np.cumsum(is_eval) - 1
            by_cand.append({name: np.where(pos >= 0, ratios[name][np.clip(pos, 0, None)] if n_eval else 0.0, 0.0)
                            for name in YARDSTICKS})
            cost_cand.append(costs)
            all_rows.append(rows)
            reasons.append(_stop_reason(rows, n_eval, budget))
        curves[m] = MethodCurves([s for s, _ in ok], by_eval, cost, all_rows, by_cand, cost_cand, reasons)
    return curves


def mean_ci(x: np.ndarray, n_boot: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds (axis 0) and a 95 % percentile-bootstrap interval of that mean (NaN cells,
    e.g. a seed that has not spent that much yet, are left out)."""

    x = np.asarray(x, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=0)
        if x.shape[0] < 2:
            return mean, mean, mean
        idx = np.random.default_rng(seed).integers(0, x.shape[0], size=(n_boot, x.shape[0]))
        boot = np.nanmean(x[idx], axis=1)
        return mean, np.nanquantile(boot, 0.025, axis=0), np.nanquantile(boot, 0.975, axis=0)


def evals_to_reach(curve: np.ndarray, level: float) -> int | None:
    """The first number of full evaluations whose ratio is at least `level` (None: never)."""
    hit = np.flatnonzero(curve >= level - 1e-12)
    return int(hit[0]) + 1 if len(hit) else None


def ratio_on_cost_grid(c: MethodCurves, grid: np.ndarray, yardstick: str) -> np.ndarray:
    """``(n_seeds, len(grid))``: each seed's ratio once it has spent each cost of `grid` (NaN
    beyond what the seed spent)."""
    out = np.full((len(c.seeds), len(grid)), np.nan)
    for i, (cost, by) in enumerate(zip(c.cost_by_candidate, c.by_candidate)):
        ratio = by[yardstick]
        pos = np.searchsorted(cost, grid, side="right") - 1
        vals = np.where(pos >= 0, ratio[np.clip(pos, 0, None)], 0.0)
        out[i] = np.where(grid <= cost[-1], vals, np.nan)
    return out


def front_points_found(rows: list[dict[str, str]], sub: Subspace) -> np.ndarray:
    """Which true-front points a run evaluated (same objective values)."""
    ev = evaluated_values(rows)
    return np.array([bool(len(ev)) and bool(np.any(np.all(np.isclose(ev, p, rtol=1e-6), axis=1)))
                     for p in sub.true_front])


def _found_class(rows: list[dict[str, str]], point: np.ndarray) -> bool:
    """Whether a run evaluated a cell of the class behind a true-front point (same throughput and
    energy: cells of a class share them)."""
    ev = evaluated_values(rows)
    return bool(len(ev)) and bool(np.any(np.all(np.isclose(ev[:, 1:], point[1:], rtol=1e-6), axis=1)))


def _yardstick_columns(c: MethodCurves, budget: int, yardstick: str) -> dict[str, Any]:
    """The summary columns of one yardstick: final ratio (mean, CI, range) and, per level, the
    seeds reaching it, the evaluations and the GPU-hours to reach it (censored medians)."""
    p = YARDSTICKS[yardstick]
    final = c.by_eval[yardstick][:, -1]
    mean, lo, hi = mean_ci(final[:, None])
    row: dict[str, Any] = {
        f"{p}_at_{budget}_mean": float(mean[0]), f"{p}_ci95_low": float(lo[0]), f"{p}_ci95_high": float(hi[0]),
        f"{p}_min": float(final.min()), f"{p}_max": float(final.max()),
    }
    for level in LEVELS:
        need = [evals_to_reach(c.by_eval[yardstick][i], level) for i in range(len(c.seeds))]
        row[f"{p}_seeds_reaching_{level:g}"] = sum(1 for n in need if n is not None)
        row[f"{p}_evals_to_{level:g}_median"] = _censored_median(need)
        cost = []
        for by, cum in zip(c.by_candidate, c.cost_by_candidate):
            hit = np.flatnonzero(by[yardstick] >= level - 1e-12)
            cost.append(float(cum[hit[0]]) / 3600 if len(hit) else None)
        row[f"{p}_gpu_h_to_{level:g}_median"] = _censored_median(cost, ".2f")
    return row


def summarize(curves: dict[str, MethodCurves], budget: int, sub: Subspace) -> list[dict[str, Any]]:
    """One summary row per method: both yardsticks (the primary first), then candidates and cost."""
    out = []
    top = {name: int(np.argmax(front_contributions(sub, name))) for name in YARDSTICKS}
    for m, c in curves.items():
        found = np.array([front_points_found(r, sub) for r in c.rows]).reshape(len(c.rows), -1)
        row: dict[str, Any] = {
            "method": m, "sampler": METHODS[m][0], "filter": METHODS[m][1], "n_seeds": len(c.seeds),
            "stalled_runs": sum(1 for r in c.stop_reasons if r == "stalled"),
            "runs_short_of_budget": int(sum(1 for r in c.rows
                                            if sum(1 for x in r if x["outcome"] == "evaluated") < budget)),
        }
        for name in YARDSTICKS:
            row.update(_yardstick_columns(c, budget, name))
        outcomes = {k: [sum(1 for x in r if x["outcome"] == k) for r in c.rows]
                    for k in ("filtered", "duplicate", "not_recorded")}
        row.update(
            candidates_median=float(np.median([len(r) for r in c.rows])),
            measured_median=float(np.median([sum(1 for x in r if x["measure_cost_s"]) for r in c.rows])),
            filtered_median=float(np.median(outcomes["filtered"])),
            duplicates_median=float(np.median(outcomes["duplicate"])),
            outside_profile_median=float(np.median(outcomes["not_recorded"])),
            cost_total_h_median=float(np.median([float(r[-1]["cum_cost_s"]) for r in c.rows])) / 3600,
            measure_cost_share_median=float(np.median([
                sum(float(x["measure_cost_s"] or 0) for x in r) / max(float(r[-1]["cum_cost_s"]), 1e-12)
                for r in c.rows])),
            front_points_found_median=float(np.median(found.sum(axis=1))),
            **{f"found_top_class_{name}": int(sum(_found_class(r, sub.true_front[top[name]]) for r in c.rows))
               for name in YARDSTICKS},
        )
        out.append(row)
    return out


def dominated_on_arrival(values: np.ndarray) -> np.ndarray:
    """For each evaluated point of a run, in order: was it weakly dominated by a point evaluated
    before it (so adding it left the run's front, and its hypervolume, unchanged)?"""
    signed = np.asarray(values, dtype=float) * np.array([1.0, 1.0, -1.0])  # all maximised
    out = np.zeros(len(signed), dtype=bool)
    for k in range(1, len(signed)):
        out[k] = bool(np.any(np.all(signed[:k] >= signed[k], axis=1)))
    return out


def filter_headroom(curves: dict[str, MethodCurves]) -> list[dict[str, Any]]:
    """Per method: the share of full evaluations that were dominated on arrival (median and range
    over seeds). For an unfiltered method this bounds what a per-candidate filter could save on the
    same proposals: a perfect filter skips exactly those evaluations, so it reaches the same
    hypervolume with ``1 - share`` of them, a factor of at most ``1 / (1 - share)``. For a filtered
    method it is the share of admitted candidates that turned out not to matter."""
    rows = []
    for method, c in curves.items():
        shares = np.array([float(dominated_on_arrival(evaluated_values(r)).mean()) if any(
            x["outcome"] == "evaluated" for x in r) else np.nan for r in c.rows])
        med = float(np.nanmedian(shares))
        rows.append({"method": method, "n_seeds": len(c.seeds), "dominated_share_median": med,
                     "dominated_share_min": float(np.nanmin(shares)),
                     "dominated_share_max": float(np.nanmax(shares)),
                     "perfect_filter_factor_median": 1.0 / (1.0 - med) if med < 1 else math.inf})
    return rows


def _headroom_table(headroom: list[dict[str, Any]]) -> list[str]:
    lines = ["| method | seeds | evaluations dominated on arrival, median (min-max) | a perfect filter's factor on these proposals (median) |",
             "|---|---|---|---|"]
    for r in headroom:
        lines.append(f"| {r['method']} | {r['n_seeds']} | {100 * r['dominated_share_median']:.1f} % "
                     f"({100 * r['dominated_share_min']:.1f}-{100 * r['dominated_share_max']:.1f} %) "
                     f"| {r['perfect_filter_factor_median']:.2f}× |")
    return lines


def _censored_median(need: Sequence[float | None], fmt: str = "g") -> str:
    """Median over seeds where a seed that never reached counts as infinitely many; ``never``
    when the median seed never reached."""
    vals = sorted(math.inf if n is None else n for n in need)
    k = len(vals)
    med = vals[(k - 1) // 2] if k % 2 else (vals[k // 2 - 1] + vals[k // 2]) / 2
    return "never" if math.isinf(med) else format(med, fmt)


def speedups(curves: dict[str, MethodCurves], base: str, other: str, at: Sequence[int],
             yardstick: str) -> list[dict[str, Any]]:
    """Evaluations `other` needs (on its mean curve) to match the mean ratio `base` reaches after
    each count in `at`, and the factor, under `yardstick`."""
    out = []
    if base not in curves or other not in curves:
        return out
    b = curves[base].by_eval[yardstick].mean(axis=0)
    o = curves[other].by_eval[yardstick].mean(axis=0)
    for k in at:
        level = float(b[k - 1])
        need = evals_to_reach(o, level)
        out.append({"yardstick": yardstick, "base": base, "other": other, "base_evals": k,
                    "base_mean_ratio": level, "other_evals_needed": need, "factor": (k / need) if need else None})
    return out


# ---------------------------------------------------------------------------------- output


def write_curves(curves: dict[str, MethodCurves], path: Path) -> None:
    """Mean and 95 % bootstrap CI of each yardstick's ratio after each number of evaluations, per
    method."""
    cols = [f"{p}_{k}" for p in YARDSTICKS.values() for k in ("mean", "ci95_low", "ci95_high")]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["method", "evaluations", "n_seeds", *cols, "cost_h_mean"])
        for m, c in curves.items():
            stats = [mean_ci(c.by_eval[name]) for name in YARDSTICKS]
            with warnings.catch_warnings():  # evaluation counts no seed reached (runs that stopped short)
                warnings.simplefilter("ignore", RuntimeWarning)
                cost = np.nanmean(c.cost_at_eval, axis=0) / 3600
            for k in range(c.cost_at_eval.shape[1]):
                figures = [f"{s[j][k]:.5f}" for s in stats for j in range(3)]
                w.writerow([m, k + 1, len(c.seeds), *figures, f"{cost[k]:.4f}"])


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """A list of dicts as CSV."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (format(v, ".5g") if isinstance(v, float) else v) for k, v in r.items()})


_YLABEL = {
    "normalised": "normalised HV found / true front's",
    "origin": "HV against the origin, found / true front's",
}
_TITLE = ("TSS on the recorded H200 profile: accuracy ↑ (recorded); throughput ↑, energy ↓ (modelled optimal clock)"
          "\n{what}; mean and 95 % interval over seeds")


def plot(curves: dict[str, MethodCurves], out: Path, budget: int) -> None:
    """``hv_vs_evaluations.png`` and ``hv_vs_cost.png`` (normalised yardstick) and
    ``hv_vs_evaluations_origin.png`` (origin-based), with 95 % bands over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(1, budget + 1)
    for yardstick, name in ((PRIMARY, "hv_vs_evaluations.png"), ("origin", "hv_vs_evaluations_origin.png")):
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        for m, c in curves.items():
            mean, lo, hi = mean_ci(c.by_eval[yardstick])
            ax.plot(x, mean, label=f"{m} (n={len(c.seeds)})")
            ax.fill_between(x, lo, hi, alpha=0.2)
        _finish(ax, yardstick, f"{yardstick} hypervolume yardstick")
        ax.set_xlabel("full evaluations (12-epoch NATS-Bench accuracy, recorded)")
        fig.tight_layout()
        fig.savefig(out / name, dpi=130)
        plt.close(fig)

    top = np.nanmax([np.nanmax(c.cost_at_eval) for c in curves.values()])
    grid = np.linspace(0, top, 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for m, c in curves.items():
        r = ratio_on_cost_grid(c, grid, PRIMARY)
        enough = np.all(~np.isnan(r), axis=0)  # up to the cheapest seed's total: every seed present
        mean, lo, hi = mean_ci(r)
        g = grid / 3600
        ax.plot(g[enough], mean[enough], label=m)
        ax.fill_between(g[enough], lo[enough], hi[enough], alpha=0.2)
    _finish(ax, PRIMARY, f"{PRIMARY} yardstick, curves end at the cheapest seed's cost")
    ax.set_xlabel("simulated search cost, GPU-hours (NATS-Bench training, recorded or estimated, "
                  "+ H200 measurement, recorded)", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "hv_vs_cost.png", dpi=130)
    plt.close(fig)


def _finish(ax: Any, yardstick: str, what: str) -> None:
    for level in LEVELS:
        ax.axhline(level, color="grey", lw=0.7, ls="--")
    ax.set_ylabel(_YLABEL[yardstick])
    ax.set_title(_TITLE.format(what=what), fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")


# ---------------------------------------------------------------------------------- README


def _ratio_table(summary: list[dict[str, Any]], budget: int, yardstick: str, extra: str) -> list[str]:
    """One README table of a yardstick's ratios; `extra` names a last column (a summary key)."""
    p = YARDSTICKS[yardstick]
    head = {"stalled_runs": "stalled runs", f"found_top_class_{yardstick}": "runs evaluating the top contributor's class"}
    lines = [
        f"| method | seeds | {head[extra]} | ratio at {budget} evals, mean [95 % CI] | min-max | evals to 0.95 "
        "(median) | seeds reaching 0.95 | evals to 0.99 (median) | seeds reaching 0.99 | GPU-h to 0.95 / 0.99 "
        "(median) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        n = r["n_seeds"]
        lines.append(
            f"| {r['method']} | {n} | {r[extra]}/{n} | {r[f'{p}_at_{budget}_mean']:.3f} "
            f"[{r[f'{p}_ci95_low']:.3f}, {r[f'{p}_ci95_high']:.3f}] | {r[f'{p}_min']:.3f}-{r[f'{p}_max']:.3f} "
            f"| {r[f'{p}_evals_to_0.95_median']} | {r[f'{p}_seeds_reaching_0.95']}/{n} "
            f"| {r[f'{p}_evals_to_0.99_median']} | {r[f'{p}_seeds_reaching_0.99']}/{n} "
            f"| {r[f'{p}_gpu_h_to_0.95_median']} / {r[f'{p}_gpu_h_to_0.99_median']} |")
    return lines


def _speedup_table(speed: list[dict[str, Any]], budget: int) -> list[str]:
    lines = ["| yardstick | base | ratio the base reaches (mean) | after | other | other needs (mean curve) "
             "| factor |", "|---|---|---|---|---|---|---|"]
    for s in speed:
        need = s["other_evals_needed"]
        lines.append(f"| {s['yardstick']} | {s['base']} | {s['base_mean_ratio']:.3f} | {s['base_evals']} | "
                     f"{s['other']} | {need if need else f'not within {budget}'} | "
                     f"{'%.2f×' % s['factor'] if s['factor'] else '-'} |")
    return lines


def _target_lines(by: dict[str, dict[str, Any]], speed: list[dict[str, Any]], budget: int) -> list[str]:
    """The two targets, judged on the normalised yardstick, with the origin-based figures beside."""
    dom, tpe = by.get("tpe+dominance"), by.get("tpe")
    if not (dom and tpe):
        return ["* Not judged: the summary lacks tpe or tpe+dominance."]
    lines = []
    fac = {y: [s["factor"] for s in speed if s["yardstick"] == y and s["base"] == "tpe"
               and s["other"] == "tpe+dominance"] for y in YARDSTICKS}

    def factors(y: str) -> str:
        best = max((f for f in fac[y] if f), default=None)
        return (f"factors {', '.join('%.2f' % f if f else '-' for f in fac[y])} at the levels above; best "
                + (f"{best:.2f}×" if best else "none"))

    levels = [s["base_evals"] for s in speed if s["yardstick"] == PRIMARY and s["base"] == "tpe"
              and s["other"] == "tpe+dominance"]
    met_at = [k for k, f in zip(levels, fac[PRIMARY]) if f and f >= 2]
    verdict = ("met at every level" if fac[PRIMARY] and len(met_at) == len(levels) else
               f"met only at the levels TPE reaches after {' and '.join(map(str, met_at))} evaluations"
               if met_at else "not met")
    lines.append(f"* ≥ 2× fewer full evaluations than unfiltered TPE for the same hypervolume: "
                 f"**{verdict}** on the normalised yardstick ({factors(PRIMARY)}); "
                 f"origin-based: {factors('origin')}.")
    p, o = YARDSTICKS[PRIMARY], YARDSTICKS["origin"]
    final = dom[f"{p}_at_{budget}_mean"]
    lines.append(
        f"* ≥ 0.99 of the true hypervolume at budget {budget} with the dominance filter: "
        f"**{'met' if final >= 0.99 else 'not met'}** on the normalised yardstick (mean {final:.3f}; "
        f"{dom[f'{p}_seeds_reaching_0.99']} of {dom['n_seeds']} seeds reach 0.99); origin-based: mean "
        f"{dom[f'{o}_at_{budget}_mean']:.3f}, {dom[f'{o}_seeds_reaching_0.99']} of {dom['n_seeds']} seeds.")
    return lines


def _share_sentence(sub: Subspace, yardstick: str) -> str:
    contrib = front_contributions(sub, yardstick)
    top = int(np.argmax(contrib))
    tf = sub.true_front[top]
    second = np.sort(contrib)[-2] if len(contrib) > 1 else 0.0
    return (f"the true-front point with the largest exclusive share (arch index {sub.true_front_arch_index[top]}: "
            f"{tf[0]:.1f} % accuracy, {tf[1]:,.0f} img/s, {1000 * tf[2]:.3f} mJ/img) holds {contrib[top]:.1%} "
            f"of it, the next largest {second:.1%}")


def _default_recall(filter_name: str) -> float:
    from nasenergy.search.config import DEFAULT_TARGET_RECALL

    return DEFAULT_TARGET_RECALL[filter_name]


def _recall_clause(methods: Sequence[str]) -> str:
    variants = [m for m in methods if m in TARGET_RECALL]
    if not variants:
        return ""
    return "; as a sensitivity study, " + ", ".join(
        f"`{m}` is the dominance filter at target recall {TARGET_RECALL[m]:g}" for m in variants)


def _coverage_note(sub: Subspace, n_classes_total: int) -> str:
    """What the true front is taken over: the whole space, or the profiled part of it."""
    if len(sub.classes) == n_classes_total:
        return (f"> **Whole space.** The recorded H200 profile covers all {n_classes_total:,} canonical TSS "
                f"classes ({sub.n_cells:,} cells), so the **true front** is the Pareto front over every "
                "TSS cell.")
    return (f"> **Measured subspace only.** The recorded H200 profile covers {len(sub.classes):,} of the "
            f"{n_classes_total:,} canonical TSS classes ({sub.n_cells:,} of 15,625 cells). Every search "
            "samples the whole TSS space, but a candidate whose class is not in the profile is skipped "
            "without cost and spends no budget. The **true front** is the Pareto front over every cell "
            "of the profiled classes; all ratios below are against it, not against the full space's front.")


def write_readme(out: Path, sub: Subspace, summary: list[dict[str, Any]], speed: list[dict[str, Any]],
                 budget: int, seeds_asked: int, timings: dict[str, list[float]], check: list[str],
                 n_classes_total: int, command: str, patience: list[str],
                 headroom: list[dict[str, Any]]) -> None:
    """The README: set-up, the headline tables, the speed-up, the targets, what fell short."""
    by = {r["method"]: r for r in summary}
    complete = len(sub.classes) == n_classes_total
    lines = [
        "# Search efficiency on the " + ("whole TSS space" if complete else "measured TSS subspace"),
        "",
        f"Produced by `{command}`.",
        "",
        _coverage_note(sub, n_classes_total),
        "",
        f"Objectives: accuracy ↑ (NATS-Bench 12-epoch {sub.dataset} x-valid, the search metric; recorded), "
        "throughput ↑ and energy per image ↓, both at each network's energy-optimal SM clock "
        "(default-clock figures **recorded** on the H200; the optimal clock and the figures there "
        "**modelled** with the H200 DVFS parameters, which are extrapolated from A100 sweeps). "
        f"True front: {len(sub.true_front)} points.",
        "",
        "**Hypervolume yardsticks.** *Normalised* (primary): each objective min-max normalised over "
        "every cell the true front is taken over (accuracy "
        f"{sub.lower[0]:.2f}-{sub.upper[0]:.2f} %, throughput {sub.lower[1]:,.0f}-{sub.upper[1]:,.0f} img/s, "
        f"energy {1000 * sub.lower[2]:.4f}-{1000 * sub.upper[2]:.4f} mJ/img), turned into maximisation, "
        "reference point the subspace's worst corner (0 after normalisation); exact 3-D volume "
        f"(`nasenergy.pareto.hypervolume`); the true front's is {sub.true_hv_norm:.4f} of the unit cube. "
        "*Origin-based* (secondary, the yardstick of earlier versions of this page and of the search's "
        "own report): `nasenergy.pareto.search_hypervolume` (accuracy %, img/s, img/J against the "
        f"origin); the true front's is {sub.true_hv:.4g}.",
        "",
        f"Budget: {budget} full evaluations per run. Methods: random search, TPE and NSGA-II without a "
        "filter, TPE with the threshold filter and with the dominance-aware filter (target recall "
        f"{_default_recall('threshold'):g} and {_default_recall('dominance'):g}, the command's defaults"
        f"{_recall_clause(list(by))}). Stall guard: `--patience` {', '.join(patience) or 'not recorded'} "
        "(a run stops as `stalled` after that many candidates in a row without a new full evaluation; "
        "it counts with the ratio it reached). Seeds 0.."
        f"{seeds_asked - 1} asked; the tables say how many finished.",
        "",
        "## Normalised hypervolume ratio (found / true), primary",
        "",
        *_ratio_table(summary, budget, PRIMARY, "stalled_runs"),
        "",
        "Evaluations to a level: per seed, the first full evaluation after which the ratio is at "
        "least the level (GPU-h: the search cost spent by then); the median over seeds, `never` when the "
        "median seed never reached it within the budget; the 95 % interval is a bootstrap over seeds.",
        "",
        "## Origin-based hypervolume ratio, secondary",
        "",
        *_ratio_table(summary, budget, "origin", "found_top_class_origin"),
        "",
        "## Candidates and cost",
        "",
        "| method | candidates | measured | filtered | duplicates | outside the profile | runs short of budget "
        "| cost, GPU-h | measurement share of cost | exact true-front points found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['method']} | {r['candidates_median']:g} | {r['measured_median']:g} | {r['filtered_median']:g} "
            f"| {r['duplicates_median']:g} | {r['outside_profile_median']:g} "
            f"| {r['runs_short_of_budget']}/{r['n_seeds']} | {r['cost_total_h_median']:.2f} "
            f"| {100 * r['measure_cost_share_median']:.2f} % | {r['front_points_found_median']:g}/{len(sub.true_front)} |")
    lines += [
        "",
        "Medians per run. Measured: new profiled classes measured. Cost: NATS-Bench training+evaluation "
        "time of the full evaluations (recorded for cells with a record, else estimated by the oracle's "
        "rate model) plus the recorded H200 measurement time.",
        "",
        "## Full evaluations saved by the filter",
        "",
        *_speedup_table(speed, budget),
        "",
        "## Targets",
        "",
        *_target_lines(by, speed, budget),
        "",
        "## Headroom for any filter",
        "",
        "A full evaluation helps only if its network is not dominated by one evaluated before it. "
        "The share of evaluations that were dominated on arrival is what a per-candidate filter could "
        "skip; on an unfiltered method's proposals, a perfect filter (one that knew every accuracy) "
        "would reach the same front with the rest, a factor of 1 / (1 - share) fewer evaluations. "
        "(A filter also changes what the sampler proposes next, so this is a yardstick, not a bound "
        "on every possible search.) For the filtered methods, the share is the filter's admitted "
        "candidates that did not matter (`headroom.csv`).",
        "",
        *_headroom_table(headroom),
        "",
        "**How to read the ratios.** Against the origin in raw units, "
        + _share_sentence(sub, "origin")
        + ": a run's origin-based ratio jumps when it evaluates that network's class (any of its cells: "
        "they share throughput and energy), so per-seed ratios are close to all-or-nothing (the last column "
        "of the secondary table says how many runs did). Under the normalised yardstick, which weighs "
        "the three objectives alike, " + _share_sentence(sub, PRIMARY)
        + "; the rest of the front carries the remainder. Exact true-front points are "
        "rarely found: a sibling cell of the same class with slightly lower accuracy gives almost the "
        "same hypervolume.",
        "",
        "## Notes",
        "",
    ]
    lines += [f"* {c}" for c in check]
    lines += [
        f"* Measurement cost per class: the recorded `measure_cost_s` (median {sub.median_measure_cost_s:.2f} s); "
        f"{sub.n_warmup} classes measured first in a measuring run carry its warm-up (over "
        f"{WARMUP_FACTOR:g}× the median) and are charged the median.",
        "* Wall time per run on this shared 2-core machine (median over the logged runs, "
        f"`{TIMINGS_CSV}`, measured): "
        + (", ".join(f"{k} {np.median(v):.0f} s" for k, v in timings.items()) or "not logged") + ".",
        "* Each run is a complete `nasenergy.search.run_search` (duplicates and candidates outside the "
        "profile are told to the sampler as pruned; each evaluation draws its benchmark training run "
        "from the study's seed and the trial number); the run folders are not kept here.",
        "",
        "Files: `runs/*.csv.gz` (one row per candidate of each run: outcome, figures, costs, both ratios "
        "so far, the run's stop reason and patience), `curves.csv` (mean and CI of both ratios per number "
        "of evaluations), `summary.csv`, `speedups.csv`, `headroom.csv`, `true_front.csv` (with each point's normalised "
        "coordinates and exclusive shares), `hv_vs_evaluations.png`, `hv_vs_cost.png` (normalised), "
        "`hv_vs_evaluations_origin.png` (origin-based).",
        "",
    ]
    (out / "README.md").write_text("\n".join(lines))


def _write_front(sub: Subspace, path: Path) -> None:
    unit = to_unit_maximisation(sub.true_front, sub.lower, sub.upper)
    shares = {name: front_contributions(sub, name) for name in YARDSTICKS}
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["arch_index", "accuracy_pct", "throughput_img_per_s", "energy_j_per_img",
                    "accuracy_unit", "throughput_unit", "energy_unit", "share_normalised", "share_origin"])
        for k, (i, row) in enumerate(zip(sub.true_front_arch_index, sub.true_front)):
            w.writerow([i, f"{row[0]:.6g}", f"{row[1]:.7g}", f"{row[2]:.7g}",
                        *(f"{u:.5f}" for u in unit[k]), f"{shares['normalised'][k]:.5f}",
                        f"{shares['origin'][k]:.5f}"])


# ------------------------------------------------------------------------------------ main


def build_parser() -> argparse.ArgumentParser:
    from nasenergy.search.config import DEFAULT_PATIENCE

    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per method")
    p.add_argument("--budget", type=int, default=200, help="full evaluations per run")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help="comma-separated, from: " + ", ".join(METHODS) + " (@R: the dominance filter at target recall R)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes")
    p.add_argument("--dataset", choices=("cifar10", "cifar100", "ImageNet16-120"), default=DATASET,
                   help="NATS-Bench dataset of the accuracy objective (default %(default)s); give each "
                        "dataset its own --out and --work-dir")
    p.add_argument("--patience", type=int, default=DEFAULT_PATIENCE,
                   help="the search's stall guard: stop a run after this many candidates in a row without a new "
                        "full evaluation; 0 turns it off (default %(default)s, the search command's)")
    p.add_argument("--deadline-min", type=float, default=None, help="start no new run after this many minutes")
    p.add_argument("--summarize-only", action="store_true",
                   help="run nothing; summarize the runs already in OUT/runs for --methods and --seeds")
    p.add_argument("--work-dir", type=Path, default=ROOT / "runs" / "search_efficiency",
                   help="where each search's run folder goes (git-ignored by default)")
    p.add_argument("--note", action="append", default=[], help="a line for the README's notes (repeatable)")
    p.add_argument("--out", type=Path, default=OUT)
    return p


def _methods(text: str) -> list[str]:
    methods = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise UsageError(f"--methods: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(METHODS)}")
    return methods


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    methods = _methods(args.methods)
    if args.seeds < 1 or args.budget < 1 or args.jobs < 1:
        raise UsageError("--seeds, --budget and --jobs must be at least 1")
    if args.patience < 0:
        raise UsageError(f"--patience must be 0 (off) or a positive number of candidates, got {args.patience}")
    if args.deadline_min is not None and not args.deadline_min > 0:
        raise UsageError(f"--deadline-min must be positive, got {args.deadline_min}")
    seeds = list(range(args.seeds))
    t0 = time.perf_counter()
    _init_worker(args.budget, args.patience, args.dataset)
    sub = _WORKER["subspace"]
    load_curves(args.out, methods, seeds, args.budget, sub)  # refuse runs of another subspace before adding any
    if not args.summarize_only:
        run_all(methods, seeds, args.budget, args.out, args.work_dir, args.jobs,
                None if args.deadline_min is None else 60 * args.deadline_min, args.patience, args.dataset)
    curves = load_curves(args.out, methods, seeds, args.budget, sub)
    if not curves:
        raise UsageError(f"no finished runs to summarize in {args.out / 'runs'}")
    summary = summarize(curves, args.budget, sub)
    at = [k for k in (50, 100, args.budget) if k <= args.budget]
    speed = [s for y in YARDSTICKS for other in ("tpe+dominance", "tpe+threshold", *TARGET_RECALL)
             for s in speedups(curves, "tpe", other, at, y)]
    write_curves(curves, args.out / "curves.csv")
    write_table(summary, args.out / "summary.csv")
    if speed:
        write_table(speed, args.out / "speedups.csv")
    _write_front(sub, args.out / "true_front.csv")
    headroom = filter_headroom(curves)
    write_table(headroom, args.out / "headroom.csv")
    plot(curves, args.out, args.budget)
    from search_spaces import get_space

    space = get_space("tss")
    n_classes = len(space.canonical_classes())
    cmd = "python experiments/search_efficiency.py " + " ".join(
        a for a in argv if a not in args.note and a != "--note")
    patience = sorted({r[0].get("patience", "") for c in curves.values() for r in c.rows if r} - {""}, key=int)
    write_readme(args.out, sub, summary, speed, args.budget, args.seeds, read_timings(args.out), list(args.note),
                 n_classes, cmd.strip(), patience, headroom)
    p = YARDSTICKS[PRIMARY]
    for r in summary:
        print(f"{r['method']:>14}: normalised ratio at {args.budget} {r[f'{p}_at_{args.budget}_mean']:.3f} "
              f"[{r[f'{p}_ci95_low']:.3f}, {r[f'{p}_ci95_high']:.3f}] n={r['n_seeds']}, stalled "
              f"{r['stalled_runs']}; evals to 0.95 {r[f'{p}_evals_to_0.95_median']}, to 0.99 "
              f"{r[f'{p}_evals_to_0.99_median']}; origin-based ratio {r[f'hv_ratio_at_{args.budget}_mean']:.3f}")
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    return run_main(lambda: _run(args, argv))


if __name__ == "__main__":
    sys.exit(main())
