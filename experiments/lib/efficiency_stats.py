"""Search efficiency, part 3: the runs' ratio curves, bootstrap statistics, summaries, speed-ups
and the filter's headroom (see ``experiments/search_efficiency.py``)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import UsageError

from lib.efficiency_front import (
    HV_YARDSTICKS,
    LEVELS,
    METHODS,
    OBJECTIVES,
    YARDSTICKS,
    Subspace,
    front_contributions,
    ratio_curves,
)
from lib.efficiency_runs import TIMINGS_CSV, read_run, run_path

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
    """One summary row per method: every yardstick (the primary first), then candidates and cost."""
    out = []
    top = {name: int(np.argmax(front_contributions(sub, name))) for name in HV_YARDSTICKS}
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
               for name in HV_YARDSTICKS},
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
