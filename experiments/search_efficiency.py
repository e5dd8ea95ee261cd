"""Search efficiency: how many full evaluations each search method needs to find the Pareto front.

Compares random search, TPE and NSGA-II without a filter, and TPE with the threshold and the
dominance-aware utilization filters, on three objectives: accuracy (12-epoch CIFAR-10 x-valid, the
NATS-Bench search metric) ↑, throughput at the energy-optimal clock ↑ and energy per image at that
clock ↓. Throughput and energy come from the recorded H200 profile (default clock, **recorded**)
and the DVFS model with the extrapolated H200 parameters (optimal clock, **modelled**); accuracy
and its cost from the NATS-Bench tables in the shared data folder (**recorded**, costs of cells
without a record **estimated** by the oracle's rate model).

**Measured subspace.** The profile covers only some TSS classes. The search runs over the whole
TSS space, but a candidate whose class is not in the profile is skipped without cost (outcome
``not_recorded`` in ``python -m nasenergy.search --hardware recorded``: no measurement, no budget);
the **true front** is the Pareto front over every TSS cell whose class is in the profile. For the few cells whose
12-epoch accuracy has several recorded runs, every run's value enters the true front, so no search
can exceed it.

Each run is a complete search through `nasenergy.search.run_search` (the command's own pipeline:
journal storage, claims, filter, modelled DVFS, run files), with the recorded H200 meter and the
table oracle over the shared data. Its run folder goes to ``--work-dir`` (git-ignored ``runs/``);
its candidates are reduced to one CSV per run here.

Search cost of a run = Σ recorded NATS-Bench training+evaluation time of its full evaluations +
Σ recorded H200 measurement time of the classes it measured (a measurement above 3× the profile's
median cost is a measuring run's warm-up and is charged the median). The two are on different GPUs
(NATS-Bench's and the H200); both are GPU wall-clock seconds.

Writes one gzipped CSV per (method, seed) to ``OUT/runs/`` (runs already there are kept: the script
resumes), then ``curves.csv``, ``summary.csv``, ``hv_vs_evaluations.png``, ``hv_vs_cost.png`` and
``README.md``::

    python experiments/search_efficiency.py [--seeds 20] [--budget 200] [--jobs 2]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import NasEnergyError, UsageError

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "search_efficiency"
OBJECTIVES: tuple[str, ...] = ("accuracy", "throughput", "energy")
DATASET = "cifar10"
METHODS: dict[str, tuple[str, str]] = {
    "random": ("random", "none"),
    "tpe": ("tpe", "none"),
    "nsga2": ("nsga2", "none"),
    "tpe+threshold": ("tpe", "threshold"),
    "tpe+dominance": ("tpe", "dominance"),
}
"""method -> (sampler, filter)."""
LEVELS: tuple[float, ...] = (0.95, 0.99)
WARMUP_FACTOR = 3.0
RUN_COLUMNS: tuple[str, ...] = (
    "method", "seed", "candidate", "outcome", "canonical", "arch_index", "evaluation_number",
    "accuracy_pct", "throughput_img_per_s", "energy_j_per_img", "utilization", "filter_reason",
    "measure_cost_s", "eval_cost_s", "eval_cost_source", "cum_cost_s", "hv", "hv_ratio",
)


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
        true_hv: its hypervolume (`nasenergy.search.objectives.hv_hypervolume`).
        true_front_arch_index: official index of the cell behind each true-front row.
        median_measure_cost_s: the profile's median measurement cost.
        n_warmup: classes whose cost was a warm-up (charged the median).
    """

    classes: dict[str, ClassFigures]
    n_cells: int
    true_front: np.ndarray
    true_hv: float
    true_front_arch_index: list[int]
    median_measure_cost_s: float
    n_warmup: int


def search_config(method: str, seed: int, budget: int, out: str | None = None) -> Any:
    """The `SearchConfig` of one run (recorded H200 profile, modelled DVFS, shared tables)."""
    from nasenergy.paths import shared_data_dir
    from nasenergy.search.config import SearchConfig

    sampler, filt = METHODS[method]
    return SearchConfig(
        budget=budget, space="tss", dataset=DATASET, objectives=OBJECTIVES,
        benchmark=str(shared_data_dir()), hardware="recorded", filter=filt, dvfs="modelled",
        sampler=sampler, seed=seed, out=out, quiet=True,
    )


def build_subspace(config: Any) -> Subspace:
    """Score every profiled class with the search's own parts (`build_components`: the recorded
    meter and the modelled DVFS step) and find the true front over every cell of those classes."""
    from nasenergy.hardware.recorded import RecordedMeter
    from nasenergy.search.components import build_components
    from nasenergy.search.objectives import front_mask, hv_hypervolume, objectives_for

    parts = build_components(config)
    space, oracle, measure, optimal_clock = parts.space, parts.oracle, parts.measure, parts.optimal_clock
    rows = list(RecordedMeter(space=space).rows())
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
        for acc in sorted(_possible_accuracies(oracle, arch)):
            points.append([acc, fig.throughput_img_per_s, fig.energy_j_per_img])
            index.append(i)
    pts = np.array(points)
    objectives = objectives_for(OBJECTIVES)
    mask = front_mask(pts, objectives)
    front = pts[mask]
    return Subspace(classes, n_cells, front, hv_hypervolume(front, objectives),
                    [index[k] for k in np.flatnonzero(mask)], median, n_warmup)


def _possible_accuracies(oracle: Any, arch: Any, n_draws: int = 30) -> set[float]:
    """Every search-metric value the oracle can return for `arch` (all recorded runs)."""
    first = oracle.evaluate(arch, DATASET, seed=0)
    values = {float(first.accuracy_pct)}
    if first.trial != "mean":  # one run drawn at random: collect the others
        values |= {float(oracle.evaluate(arch, DATASET, seed=s).accuracy_pct) for s in range(1, n_draws)}
    return values


# -------------------------------------------------------------------------------- one search

MEASURED_OUTCOMES: tuple[str, ...] = ("evaluated", "filtered", "over_budget")
"""Outcomes of candidates that were measured (each new profiled class is measured once)."""


def run_pipeline(method: str, seed: int, budget: int, sub: Subspace, work_dir: Path) -> tuple[list[dict[str, Any]], str]:
    """One complete search with `nasenergy.search.run_search`; its candidates as `RUN_COLUMNS` rows
    (in trial order, with the cumulative cost and hypervolume ratio) and its stop reason."""
    import shutil

    from nasenergy.search import run_search
    from nasenergy.search.objectives import front_mask, hv_hypervolume, objectives_for

    folder = work_dir / f"{method.replace('+', '_')}_seed{seed:02d}"
    if folder.exists():
        shutil.rmtree(folder)  # a run cut short earlier: start afresh rather than resume
    summary = run_search(search_config(method, seed, budget, out=str(folder)),
                         resume_command="python experiments/search_efficiency.py")
    with (folder / "candidates.csv").open(newline="") as fh:
        cands = sorted(csv.DictReader(fh), key=lambda r: int(r["trial_number"]))
    objectives = objectives_for(OBJECTIVES)
    front = np.empty((0, len(objectives)))
    rows, cum_cost, hv, n_eval = [], 0.0, 0.0, 0
    for c in cands:
        row: dict[str, Any] = {"method": method, "seed": seed, "candidate": int(c["trial_number"]),
                               "outcome": c["outcome"], "canonical": c["canonical"], "arch_index": c["arch_index"],
                               "filter_reason": c["filter_reason"] or None}
        fig = sub.classes.get(c["canonical"])
        if c["outcome"] in MEASURED_OUTCOMES and fig is not None:
            cum_cost += fig.cost_s
            row.update(measure_cost_s=fig.cost_s, utilization=float(c["utilization"]))
        if c["outcome"] == "evaluated":
            values = [float(c["accuracy_pct"]), float(c["throughput_img_per_s"]), float(c["energy_j_per_img"])]
            pts = np.vstack([front, np.asarray(values)[None, :]])
            mask = front_mask(pts, objectives)
            if mask[-1]:
                front = pts[mask]
                hv = hv_hypervolume(front, objectives)
            n_eval += 1
            cum_cost += float(c["eval_cost_s"])
            row.update(evaluation_number=n_eval, accuracy_pct=values[0], throughput_img_per_s=values[1],
                       energy_j_per_img=values[2], eval_cost_s=float(c["eval_cost_s"]),
                       eval_cost_source=c["eval_cost_source"])
        row.update(cum_cost_s=cum_cost, hv=hv, hv_ratio=hv / sub.true_hv)
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
    with gzip.open(path, "rt", newline="") as fh:
        return list(csv.DictReader(fh))


_WORKER: dict[str, Any] = {}


def _init_worker(budget: int) -> None:
    """Per process: the measured subspace (built once)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    _WORKER.update(subspace=build_subspace(search_config("tpe", 0, budget)), budget=budget)


def _do_run(job: tuple[str, int, str, str]) -> tuple[str, int, float, str, int]:
    method, seed, out, work_dir = job
    t0 = time.perf_counter()
    rows, reason = run_pipeline(method, seed, _WORKER["budget"], _WORKER["subspace"], Path(work_dir))
    write_run(run_path(Path(out), method, seed), rows)
    return method, seed, time.perf_counter() - t0, reason, len(rows)


def run_all(methods: Sequence[str], seeds: Sequence[int], budget: int, out: Path, work_dir: Path, jobs: int,
            deadline_s: float | None) -> list[tuple[str, int, float, str, int]]:
    """Every (method, seed) whose CSV is missing, seed-major (so a cut-off run set stays balanced
    across methods); stops starting new runs after ``deadline_s`` seconds."""
    todo = [(m, s, str(out), str(work_dir)) for s in seeds for m in methods if not run_path(out, m, s).is_file()]
    print(f"{len(todo)} runs to do ({len(methods) * len(seeds) - len(todo)} already done)", flush=True)
    done: list[tuple[str, int, float, str, int]] = []
    if not todo:
        return done
    t0 = time.perf_counter()
    if jobs <= 1:
        _init_worker(budget)
        for job in todo:
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                print("deadline reached; rerun to continue", flush=True)
                break
            done.append(_do_run(job))
            _log_timing(out, done[-1])
        return done
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs, initializer=_init_worker, initargs=(budget,)) as pool:
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
    """Hypervolume-ratio curves of one method over its seeds.

    Attributes:
        seeds: the seeds, in order.
        by_eval: ``(n_seeds, budget)``: ratio after k+1 full evaluations.
        cost_at_eval: ``(n_seeds, budget)``: cumulative search cost (s) at the k+1-th evaluation.
        rows: each seed's rows.
    """

    seeds: list[int]
    by_eval: np.ndarray
    cost_at_eval: np.ndarray
    rows: list[list[dict[str, str]]]


def load_curves(out: Path, methods: Sequence[str], seeds: Sequence[int], budget: int) -> dict[str, MethodCurves]:
    """Curves of every finished run (a run that stopped short keeps its last value)."""
    curves = {}
    for m in methods:
        ok = [(s, read_run(run_path(out, m, s))) for s in seeds if run_path(out, m, s).is_file()]
        if not ok:
            continue
        by_eval = np.zeros((len(ok), budget))
        cost = np.full((len(ok), budget), np.nan)
        for i, (_, rows) in enumerate(ok):
            ev = [r for r in rows if r["outcome"] == "evaluated"]
            vals = np.array([float(r["hv_ratio"]) for r in ev])
            costs = np.array([float(r["cum_cost_s"]) for r in ev])
            by_eval[i, : len(vals)] = vals
            by_eval[i, len(vals):] = vals[-1] if len(vals) else 0.0
            cost[i, : len(costs)] = costs
        curves[m] = MethodCurves([s for s, _ in ok], by_eval, cost, [r for _, r in ok])
    return curves


def mean_ci(x: np.ndarray, n_boot: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over seeds (axis 0) and a 95 % percentile-bootstrap interval of that mean (NaN cells,
    e.g. a seed that has not spent that much yet, are left out)."""
    import warnings

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


def ratio_on_cost_grid(c: MethodCurves, grid: np.ndarray) -> np.ndarray:
    """``(n_seeds, len(grid))``: each seed's ratio once it has spent each cost of `grid` (NaN
    beyond what the seed spent)."""
    out = np.full((len(c.seeds), len(grid)), np.nan)
    for i, rows in enumerate(c.rows):
        cost = np.array([float(r["cum_cost_s"]) for r in rows])
        ratio = np.array([float(r["hv_ratio"]) for r in rows])
        pos = np.searchsorted(cost, grid, side="right") - 1
        vals = np.where(pos >= 0, ratio[np.clip(pos, 0, None)], 0.0)
        out[i] = np.where(grid <= cost[-1], vals, np.nan)
    return out


def front_contributions(sub: Subspace) -> np.ndarray:
    """Each true-front point's exclusive share of the true hypervolume."""
    from nasenergy.search.objectives import hv_hypervolume, objectives_for

    objectives = objectives_for(OBJECTIVES)
    return np.array([1.0 - hv_hypervolume(np.delete(sub.true_front, i, axis=0), objectives) / sub.true_hv
                     for i in range(len(sub.true_front))])


def front_points_found(rows: list[dict[str, str]], sub: Subspace) -> np.ndarray:
    """Which true-front points a run evaluated (same objective values)."""
    ev = np.array([[float(r["accuracy_pct"]), float(r["throughput_img_per_s"]), float(r["energy_j_per_img"])]
                   for r in rows if r["outcome"] == "evaluated"]).reshape(-1, 3)
    return np.array([bool(len(ev)) and bool(np.any(np.all(np.isclose(ev, p, rtol=1e-6), axis=1)))
                     for p in sub.true_front])


def summarize(curves: dict[str, MethodCurves], budget: int, sub: Subspace) -> list[dict[str, Any]]:
    """One summary row per method."""
    out = []
    top = int(np.argmax(front_contributions(sub)))
    for m, c in curves.items():
        found = np.array([front_points_found(r, sub) for r in c.rows]).reshape(len(c.rows), -1)
        final = c.by_eval[:, -1]
        mean, lo, hi = mean_ci(final[:, None])
        top_class = sub.true_front[top, 1:]
        found_top = [any(r["outcome"] == "evaluated" and np.allclose(
            [float(r["throughput_img_per_s"]), float(r["energy_j_per_img"])], top_class, rtol=1e-6) for r in rows)
            for rows in c.rows]
        row: dict[str, Any] = {
            "method": m, "sampler": METHODS[m][0], "filter": METHODS[m][1], "n_seeds": len(c.seeds),
            f"hv_ratio_at_{budget}_mean": float(mean[0]), "ci95_low": float(lo[0]), "ci95_high": float(hi[0]),
            "hv_ratio_min": float(final.min()), "hv_ratio_max": float(final.max()),
        }
        for level in LEVELS:
            need = [evals_to_reach(c.by_eval[i], level) for i in range(len(c.seeds))]
            reached = [n for n in need if n is not None]
            row[f"seeds_reaching_{level:g}"] = len(reached)
            row[f"evals_to_{level:g}_median"] = _censored_median(need)
            cost = [next((float(x["cum_cost_s"]) / 3600 for x in rows if float(x["hv_ratio"]) >= level - 1e-12), None)
                    for rows in c.rows]
            row[f"gpu_h_to_{level:g}_median"] = _censored_median(cost, ".2f")
        n_cand = [len(r) for r in c.rows]
        outcomes = {k: [sum(1 for x in r if x["outcome"] == k) for r in c.rows]
                    for k in ("filtered", "duplicate", "failed")}
        row.update(
            candidates_median=float(np.median(n_cand)),
            measured_median=float(np.median([sum(1 for x in r if x["measure_cost_s"]) for r in c.rows])),
            filtered_median=float(np.median(outcomes["filtered"])),
            duplicates_median=float(np.median(outcomes["duplicate"])),
            outside_profile_median=float(np.median(outcomes["failed"])),
            cost_total_h_median=float(np.median([float(r[-1]["cum_cost_s"]) for r in c.rows])) / 3600,
            measure_cost_share_median=float(np.median([
                sum(float(x["measure_cost_s"] or 0) for x in r) / float(r[-1]["cum_cost_s"]) for r in c.rows])),
            front_points_found_median=float(np.median(found.sum(axis=1))),
            found_top_class=int(sum(found_top)),
            runs_short_of_budget=int(sum(1 for r in c.rows
                                         if sum(1 for x in r if x["outcome"] == "evaluated") < budget)),
        )
        out.append(row)
    return out


def _censored_median(need: Sequence[float | None], fmt: str = "g") -> str:
    """Median over seeds where a seed that never reached counts as infinitely many; ``never``
    when the median seed never reached."""
    vals = sorted(math.inf if n is None else n for n in need)
    k = len(vals)
    med = vals[(k - 1) // 2] if k % 2 else (vals[k // 2 - 1] + vals[k // 2]) / 2
    return "never" if math.isinf(med) else format(med, fmt)


def speedups(curves: dict[str, MethodCurves], base: str, other: str, at: Sequence[int]) -> list[dict[str, Any]]:
    """Evaluations `other` needs (on its mean curve) to match the mean ratio `base` reaches after
    each count in `at`, and the factor."""
    out = []
    if base not in curves or other not in curves:
        return out
    b = curves[base].by_eval.mean(axis=0)
    o = curves[other].by_eval.mean(axis=0)
    for k in at:
        level = float(b[k - 1])
        need = evals_to_reach(o, level)
        out.append({"base": base, "other": other, "base_evals": k, "base_mean_ratio": level,
                    "other_evals_needed": need, "factor": (k / need) if need else None})
    return out


# ---------------------------------------------------------------------------------- output


def write_curves(curves: dict[str, MethodCurves], path: Path) -> None:
    """Mean and 95 % bootstrap CI of the ratio after each number of evaluations, per method."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["method", "evaluations", "n_seeds", "hv_ratio_mean", "ci95_low", "ci95_high",
                    "cost_h_mean"])
        for m, c in curves.items():
            mean, lo, hi = mean_ci(c.by_eval)
            cost = np.nanmean(c.cost_at_eval, axis=0) / 3600
            for k in range(c.by_eval.shape[1]):
                w.writerow([m, k + 1, len(c.seeds), f"{mean[k]:.5f}", f"{lo[k]:.5f}", f"{hi[k]:.5f}",
                            f"{cost[k]:.4f}"])


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """A list of dicts as CSV."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (format(v, ".5g") if isinstance(v, float) else v) for k, v in r.items()})


def plot(curves: dict[str, MethodCurves], out: Path, budget: int) -> None:
    """``hv_vs_evaluations.png`` and ``hv_vs_cost.png`` with 95 % bands over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(1, budget + 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for m, c in curves.items():
        mean, lo, hi = mean_ci(c.by_eval)
        ax.plot(x, mean, label=f"{m} (n={len(c.seeds)})")
        ax.fill_between(x, lo, hi, alpha=0.2)
    for level in LEVELS:
        ax.axhline(level, color="grey", lw=0.7, ls="--")
    ax.set_xlabel("full evaluations (12-epoch NATS-Bench accuracy, recorded)")
    ax.set_ylabel("hypervolume / true-front hypervolume")
    ax.set_title("TSS, measured H200 subspace: accuracy ↑, throughput ↑, energy ↓ at the modelled "
                 "optimal clock\nmean and 95 % interval over seeds", fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "hv_vs_evaluations.png", dpi=130)
    plt.close(fig)

    top = np.nanmax([np.nanmax(c.cost_at_eval) for c in curves.values()])
    grid = np.linspace(0, top, 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for m, c in curves.items():
        r = ratio_on_cost_grid(c, grid)
        enough = np.all(~np.isnan(r), axis=0)  # up to the cheapest seed's total: every seed present
        mean, lo, hi = mean_ci(r)
        g = grid / 3600
        ax.plot(g[enough], mean[enough], label=m)
        ax.fill_between(g[enough], lo[enough], hi[enough], alpha=0.2)
    for level in LEVELS:
        ax.axhline(level, color="grey", lw=0.7, ls="--")
    ax.set_xlabel("simulated search cost, GPU-hours (NATS-Bench training, recorded or estimated, "
                  "+ H200 measurement, recorded)", fontsize=8)
    ax.set_ylabel("hypervolume / true-front hypervolume")
    ax.set_title("Same runs against search cost (each curve ends at its cheapest seed's total cost)",
                 fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "hv_vs_cost.png", dpi=130)
    plt.close(fig)


def write_readme(out: Path, sub: Subspace, summary: list[dict[str, Any]], speed: list[dict[str, Any]],
                 budget: int, seeds_asked: int, timings: dict[str, list[float]], check: list[str],
                 n_classes_total: int, command: str) -> None:
    """The README: set-up, the headline table, the speed-up, what fell short."""
    by = {r["method"]: r for r in summary}
    lines = [
        "# Search efficiency on the measured TSS subspace",
        "",
        f"Produced by `{command}`.",
        "",
        f"> **Measured subspace only.** The recorded H200 profile covers {len(sub.classes):,} of the "
        f"{n_classes_total:,} canonical TSS classes ({sub.n_cells:,} of 15,625 cells). Every search "
        "samples the whole TSS space, but a candidate whose class is not in the profile is skipped "
        "without cost and spends no budget. The **true front** is the Pareto front over every cell "
        "of the profiled classes; all ratios below are against it, not against the full space's front.",
        "",
        "Objectives: accuracy ↑ (NATS-Bench 12-epoch CIFAR-10 x-valid, the search metric; recorded), "
        "throughput ↑ and energy per image ↓, both at each network's energy-optimal SM clock "
        "(default-clock figures **recorded** on the H200; the optimal clock and the figures there "
        "**modelled** with the H200 DVFS parameters, which are extrapolated from A100 sweeps). "
        "Hypervolume: `nasenergy.search.objectives.hv_hypervolume` (accuracy %, img/s, img/J against "
        f"the origin). True front: {len(sub.true_front)} points, hypervolume {sub.true_hv:.4g}.",
        "",
        f"Budget: {budget} full evaluations per run. Methods: random search, TPE and NSGA-II without a "
        "filter, TPE with the threshold filter and with the dominance-aware filter (target recall "
        "0.95, the command's default). Seeds 0.."
        f"{seeds_asked - 1} asked; the table says how many finished.",
        "",
        "## Hypervolume ratio (found / true)",
        "",
        f"| method | seeds | ratio at {budget} evals, mean [95 % CI] | min-max | evals to 0.95 (median) "
        "| seeds reaching 0.95 | evals to 0.99 (median) | seeds reaching 0.99 | GPU-h to 0.95 / 0.99 "
        "(median) | candidates | measured "
        "| filtered | cost, GPU-h (median) | measurement share of cost | exact true-front points found "
        "(median) | runs evaluating the top contributor's class |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['method']} | {r['n_seeds']} | {r[f'hv_ratio_at_{budget}_mean']:.3f} "
            f"[{r['ci95_low']:.3f}, {r['ci95_high']:.3f}] | {r['hv_ratio_min']:.3f}-{r['hv_ratio_max']:.3f} "
            f"| {r['evals_to_0.95_median']} | {r['seeds_reaching_0.95']}/{r['n_seeds']} "
            f"| {r['evals_to_0.99_median']} | {r['seeds_reaching_0.99']}/{r['n_seeds']} "
            f"| {r['gpu_h_to_0.95_median']} / {r['gpu_h_to_0.99_median']} "
            f"| {r['candidates_median']:g} | {r['measured_median']:g} | {r['filtered_median']:g} "
            f"| {r['cost_total_h_median']:.2f} | {100 * r['measure_cost_share_median']:.2f} % "
            f"| {r['front_points_found_median']:g}/{len(sub.true_front)} "
            f"| {r['found_top_class']}/{r['n_seeds']} |")
    lines += [
        "",
        "Evaluations to a level: per seed, the first full evaluation after which the ratio is at "
        "least the level (GPU-h: the search cost spent by then); the median over seeds, `never` when the "
        "median seed never reached it within the budget; the 95 % interval is a bootstrap over seeds. Candidates, measured (new profiled classes measured), filtered: medians per run. "
        "Cost: NATS-Bench training+evaluation time of the full evaluations (recorded for cells with a "
        "record, else estimated by the oracle's rate model) plus the recorded H200 measurement time.",
        "",
        "## Full evaluations saved by the filter",
        "",
        "| base | ratio the base reaches (mean) | after | other | other needs (mean curve) | factor |",
        "|---|---|---|---|---|---|",
    ]
    for s in speed:
        need = s["other_evals_needed"]
        lines.append(f"| {s['base']} | {s['base_mean_ratio']:.3f} | {s['base_evals']} | {s['other']} | "
                     f"{need if need else f'not within {budget}'} | "
                     f"{'%.2f×' % s['factor'] if s['factor'] else '-'} |")
    dom, tpe = by.get("tpe+dominance"), by.get("tpe")
    lines += ["", "## Targets", ""]
    if dom and tpe:
        fac = [s["factor"] for s in speed if s["base"] == "tpe" and s["other"] == "tpe+dominance"]
        best = max((f for f in fac if f), default=None)
        lines.append(
            f"* ≥ 2× fewer full evaluations than unfiltered TPE for the same hypervolume: "
            + ("**met**" if fac and all(f and f >= 2 for f in fac) else "**not met**")
            + f" (factors {', '.join('%.2f' % f if f else '-' for f in fac)} at the levels above; best "
            + (f"{best:.2f}×" if best else "none") + ").")
        lines.append(
            f"* ≥ 0.99 of the true hypervolume at budget {budget} with the dominance filter: "
            + ("**met**" if dom[f"hv_ratio_at_{budget}_mean"] >= 0.99 else "**not met**")
            + f" (mean {dom[f'hv_ratio_at_{budget}_mean']:.3f}; {dom['seeds_reaching_0.99']} of "
            f"{dom['n_seeds']} seeds reach 0.99).")
    contrib = front_contributions(sub)
    top = int(np.argmax(contrib))
    tf = sub.true_front[top]
    lines += [
        "",
        "**How to read the ratio.** The hypervolume against the origin is dominated by a few extreme "
        f"networks: the true-front point with the largest exclusive share (arch index "
        f"{sub.true_front_arch_index[top]}: {tf[0]:.1f} % accuracy, {tf[1]:,.0f} img/s, "
        f"{1000 * tf[2]:.3f} mJ/img) alone accounts for {contrib[top]:.0%} of the true hypervolume, "
        f"the next largest for {np.sort(contrib)[-2]:.0%}. A run's ratio therefore jumps when it "
        "evaluates that network's class (any of its cells: they share throughput and energy), and the "
        "per-seed ratios are close to bimodal; the last column says how many runs did. Exact "
        "true-front points are rarely found: a sibling cell of the same class with slightly lower "
        "accuracy gives almost the same hypervolume.",
    ]
    lines += ["", "## Notes", ""]
    lines += [f"* {c}" for c in check]
    lines += [
        f"* Measurement cost per class: the recorded `measure_cost_s` (median {sub.median_measure_cost_s:.2f} s); "
        f"{sub.n_warmup} classes measured first in a measuring run carry its warm-up (over "
        f"{WARMUP_FACTOR:g}× the median) and are charged the median.",
        "* Wall time per run on this shared 2-core machine (median over the logged runs, "
        f"`{TIMINGS_CSV}`): " + (", ".join(f"{k} {np.median(v):.0f} s" for k, v in timings.items()) or "not logged")
        + ".",
        "* Each run is a complete `nasenergy.search.run_search` (duplicates and candidates outside the "
        "profile are told to the sampler as pruned; each evaluation draws its benchmark training run "
        "from the study's seed and the trial number); the run folders are not kept here.",
        "",
        "Files: `runs/*.csv.gz` (one row per candidate of each run: outcome, figures, costs, ratio so "
        "far), `curves.csv` (mean and CI per number of evaluations), `summary.csv`, `speedups.csv`, "
        "`true_front.csv`, `hv_vs_evaluations.png`, `hv_vs_cost.png`.",
        "",
    ]
    (out / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per method")
    p.add_argument("--budget", type=int, default=200, help="full evaluations per run")
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated, from: " + ", ".join(METHODS))
    p.add_argument("--jobs", type=int, default=1, help="parallel processes")
    p.add_argument("--deadline-min", type=float, default=None, help="start no new run after this many minutes")
    p.add_argument("--summarize-only", action="store_true",
                   help="run nothing; summarize the runs already in OUT/runs for --methods and --seeds")
    p.add_argument("--work-dir", type=Path, default=ROOT / "runs" / "search_efficiency",
                   help="where each search's run folder goes (git-ignored by default)")
    p.add_argument("--note", action="append", default=[], help="a line for the README's notes (repeatable)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    try:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        bad = [m for m in methods if m not in METHODS]
        if bad or not methods:
            raise UsageError(f"--methods: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(METHODS)}")
        if args.seeds < 1 or args.budget < 1 or args.jobs < 1:
            raise UsageError("--seeds, --budget and --jobs must be at least 1")
        seeds = list(range(args.seeds))
        t0 = time.perf_counter()
        done = [] if args.summarize_only else run_all(
            methods, seeds, args.budget, args.out, args.work_dir, args.jobs,
            None if args.deadline_min is None else 60 * args.deadline_min)
        timings = read_timings(args.out)
        _init_worker(args.budget)
        sub = _WORKER["subspace"]
        check: list[str] = list(args.note)
        curves = load_curves(args.out, methods, seeds, args.budget)
        if not curves:
            raise UsageError("no finished runs to summarize")
        summary = summarize(curves, args.budget, sub)
        at = [k for k in (50, 100, args.budget) if k <= args.budget]
        speed = [s for other in ("tpe+dominance", "tpe+threshold")
                 for s in speedups(curves, "tpe", other, at)]
        write_curves(curves, args.out / "curves.csv")
        write_table(summary, args.out / "summary.csv")
        if speed:
            write_table(speed, args.out / "speedups.csv")
        _write_front(sub, args.out / "true_front.csv")
        plot(curves, args.out, args.budget)
        from search_spaces import get_space

        space = get_space("tss")
        n_classes = len({str(space.canonical(space.arch_at(i))) for i in range(space.size)})
        cmd = "python experiments/search_efficiency.py " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]) if a not in args.note and a != "--note")
        write_readme(args.out, sub, summary, speed, args.budget, args.seeds, timings, check, n_classes, cmd.strip())
        for r in summary:
            print(f"{r['method']:>14}: ratio at {args.budget} {r[f'hv_ratio_at_{args.budget}_mean']:.3f} "
                  f"[{r['ci95_low']:.3f}, {r['ci95_high']:.3f}] n={r['n_seeds']}; evals to 0.95 "
                  f"{r['evals_to_0.95_median']}, to 0.99 {r['evals_to_0.99_median']}")
        print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")
    except NasEnergyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


def _write_front(sub: Subspace, path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["arch_index", "accuracy_pct", "throughput_img_per_s", "energy_j_per_img"])
        for i, row in zip(sub.true_front_arch_index, sub.true_front):
            w.writerow([i, f"{row[0]:.6g}", f"{row[1]:.7g}", f"{row[2]:.7g}"])


if __name__ == "__main__":
    sys.exit(main())
