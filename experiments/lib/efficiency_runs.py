"""Search efficiency, part 2: one search per (method, seed), the pool that runs them, and the
gzipped run files and timings they leave (see ``experiments/search_efficiency.py``)."""

from __future__ import annotations

import csv
import gzip
import multiprocessing
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lib.efficiency_front import DATASET, OBJECTIVES, YARDSTICKS, Subspace, build_subspace, ratio_curves, search_config
from nasenergy.errors import UsageError
from nasenergy.search import run_search

RUN_COLUMNS: tuple[str, ...] = (
    "method", "seed", "candidate", "outcome", "canonical", "network", "arch_index", "evaluation_number",
    "accuracy_pct", "throughput_img_per_s", "energy_j_per_img", "utilization", "filter_reason",
    "measure_cost_s", "eval_cost_s", "eval_cost_source", "cum_cost_s", "hv", "hv_ratio",
    "hv_norm", "hv_norm_ratio", "stop_reason", "patience",
)
"""Columns of a run CSV; ``stop_reason`` and ``patience`` are the run's, repeated on every row;
``network`` is the study's network key (`nasenergy.run.network_key`; empty in runs written
before it existed, whose key is ``canonical``)."""


# -------------------------------------------------------------------------------- one search

UNFINISHED: tuple[str, ...] = ("interrupted", "worker_failed")
"""Stop reasons of searches that did not run their course (no run CSV is written)."""
MEASURED_OUTCOMES: tuple[str, ...] = ("evaluated", "filtered", "over_budget")
"""Outcomes of candidates that were measured (each new profiled class is measured once)."""


def run_pipeline(method: str, seed: int, budget: int, sub: Subspace, work_dir: Path,
                 patience: int | None = None) -> tuple[list[dict[str, Any]], str]:
    """One complete search with `nasenergy.search.run_search`; its candidates as `RUN_COLUMNS` rows
    (in trial order, with the cumulative cost and both hypervolume ratios) and its stop reason."""
    folder = work_dir / f"{method.replace('+', '_')}_seed{seed:02d}"
    if folder.exists():
        shutil.rmtree(folder)  # a run cut short earlier: start afresh rather than resume
    config = search_config(method, seed, budget, out=str(folder), patience=patience, dataset=sub.dataset,
                           profile=sub.profile)
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
                               "outcome": c["outcome"], "canonical": c["canonical"],
                               "network": network_of(c), "arch_index": c["arch_index"],
                               "filter_reason": c["filter_reason"] or None, "stop_reason": summary.stop_reason,
                               "patience": config.patience}
        fig = sub.classes.get(row["network"])
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
    """The rows of a run CSV (gzipped), each with every `RUN_COLUMNS` key (empty where an older
    file lacks the column)."""
    try:
        with gzip.open(path, "rt", newline="") as fh:
            return [{k: r.get(k) or "" for k in RUN_COLUMNS} for r in csv.DictReader(fh)]
    except (OSError, EOFError, csv.Error) as exc:
        raise UsageError(f"{path}: not a readable run file ({exc}); move it away and rerun") from None


_WORKER: dict[str, Any] = {}


def _init_worker(budget: int, patience: int | None = None, dataset: str = DATASET,
                 profile: str | None = None) -> None:
    """Per process: the measured subspace (built once)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    subspace = build_subspace(search_config("tpe", 0, budget, dataset=dataset, profile=profile))
    _WORKER.update(subspace=subspace, budget=budget, patience=patience)


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
            dataset: str = DATASET, profile: str | None = None) -> list[tuple[str, int, float, str, int]]:
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
            _init_worker(budget, patience, dataset, profile)
        _WORKER.update(budget=budget, patience=patience)
        for job in todo:
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                print("deadline reached; rerun to continue", flush=True)
                break
            done.append(_do_run(job))
            _log_timing(out, done[-1])
        return done
    with multiprocessing.get_context("spawn").Pool(jobs, initializer=_init_worker,
                                                initargs=(budget, patience, dataset, profile)) as pool:
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


def network_of(row: dict[str, str]) -> str:
    """A run row's network key (its canonical class in runs written before the key existed)."""
    return row.get("network") or row["canonical"]
