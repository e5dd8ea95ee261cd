"""Quality at large budgets: the default search against plain TPE at the same budget.

For each budget B of ``--budgets`` (default 400 and 1,000), the default search and plain TPE
(`experiments/search_quality.py`'s ``default`` and ``tpe`` rivals, recorded H200 profile, modelled
optimal clocks) run once per held-out seed with ``--budget B``. The quality measure is
`search_quality`'s deploy quality ratio (the deploy hypervolume of the evaluated networks over
that of the whole searched subspace, the region fixed before any run), read after B evaluations
and after 200. Reported: the mean over seeds with a bootstrap 95 % interval, and the paired
difference default - TPE with its interval. No setting is chosen here.

The seeds (`HELD_OUT_SEEDS`, 100-104) are declared before the first run; they were not used to
choose any setting. Five seeds, not twenty: a default run at B = 1,000 takes several minutes on the
2-core machine.

Usage::

    python experiments/budget_quality.py --budgets 400,1000 --jobs 2

Writes ``OUT/runs/b<B>/<method>_s<seed>.csv.gz`` (each run's evaluations in order) and ``.json``,
``OUT/quality.csv`` and ``OUT/README.md`` (default ``results/budget_quality``). A run whose files
exist is not run again, so the command resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_quality as sq  # noqa: E402  (the rivals, the truth and the quality measure)

from nasenergy._cli import OneLineParser  # noqa: E402
from nasenergy.errors import UsageError  # noqa: E402
from nasenergy.search import run_search  # noqa: E402

HELD_OUT_SEEDS = (100, 101, 102, 103, 104)
METHODS = ("tpe", "default")
N_BOOT = 2000
BOOT_SEED = 20261203


def run_files(out: Path, budget: int, method: str, seed: int) -> tuple[Path, Path]:
    """The files of one run: `search_quality.run_files` with ``b<budget>`` as the study folder."""
    return sq.run_files(out, f"b{budget}", method, seed)


def run_one(job: tuple[str, int, str, int, str, str]) -> str:
    """One complete search at ``budget``; writes its evaluations and counts."""
    study_name, budget, method, seed, out_s, work_s = job
    study, out = sq.STUDIES[study_name], Path(out_s)
    csv_path, json_path = run_files(out, budget, method, seed)
    folder = Path(work_s) / f"b{budget}" / f"{method}_s{seed:03d}"
    if folder.exists():
        shutil.rmtree(folder)
    config = dataclasses.replace(sq.config_for(study, method, seed, folder, None), budget=budget)
    t0 = time.perf_counter()
    summary = run_search(config, resume_command="python experiments/budget_quality.py")
    wall_s = time.perf_counter() - t0
    if summary.stop_reason == "interrupted":  # a run cut short is not a result: run it again
        shutil.rmtree(folder, ignore_errors=True)
        raise KeyboardInterrupt
    n_cands, n_evaluated, outcomes = sq.keep_evaluations(folder, csv_path)
    meta = {"study": study_name, "budget": budget, "method": method, "seed": seed, "wall_s": round(wall_s, 2),
            "candidates": n_cands, "evaluations": n_evaluated, "outcomes": outcomes,
            "stop_reason": summary.stop_reason, "source": "measured wall time; recorded figures"}
    json_path.write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    return f"b{budget} {method} seed {seed}: {n_evaluated} evaluations, {n_cands} candidates, {wall_s:.0f} s"


def read_points(out: Path, budget: int, method: str, seed: int) -> tuple[np.ndarray, dict[str, Any]] | None:
    """A kept run's points and counts (`search_quality.read_rows`), with the trial numbers of its
    evaluations under ``trials``."""
    got = sq.read_rows(out, f"b{budget}", method, seed)
    if got is None:
        return None
    rows, meta = got
    meta["trials"] = sorted(int(r["trial_number"]) for r in rows)
    return sq.run_points(rows), meta


WINDOW_EVALUATIONS = 50
"""The evaluations of the sliding window in which the worst candidates per evaluation are read."""


def candidate_bounds(trials: list[int], window: int = WINDOW_EVALUATIONS) -> tuple[int, float]:
    """From the trial numbers of a run's full evaluations (each candidate is one trial, numbered
    from 0): the most candidates one evaluation took (since the one before it), and the most
    candidates per evaluation over any ``window`` consecutive evaluations (0 when fewer)."""
    if not trials:
        return 0, 0.0
    t = np.asarray(sorted(trials), dtype=float)
    gaps = np.diff(np.concatenate([[-1.0], t]))
    if len(t) < window:
        return int(gaps.max()), 0.0
    ends = np.concatenate([[-1.0], t])
    worst = float(np.max((ends[window:] - ends[:-window]) / window))
    return int(gaps.max()), worst


def summarize(out: Path, study_name: str, budgets: list[int], seeds: list[int], work: Path) -> list[dict[str, Any]]:
    truth = sq.build_truth(sq.STUDIES[study_name], work)
    rng = np.random.default_rng(BOOT_SEED)
    rows: list[dict[str, Any]] = []
    for budget in budgets:
        at: dict[str, dict[int, np.ndarray]] = {}
        meta: dict[str, list[dict[str, Any]]] = {}
        for method in METHODS:
            for seed in seeds:
                got = read_points(out, budget, method, seed)
                if got is None:
                    continue
                curve = sq.quality_curve(truth, got[0], budget)
                at.setdefault(method, {})[seed] = curve[[min(200, budget) - 1, budget - 1]]
                meta.setdefault(method, []).append(got[1])
        paired = sorted(set(at.get("tpe", {})) & set(at.get("default", {})))
        for method in METHODS:
            if not at.get(method):
                continue
            vals = np.array([at[method][s] for s in sorted(at[method])])
            q200, q200_lo, q200_hi = sq.mean_interval(vals[:, 0], rng, N_BOOT)
            qb, qb_lo, qb_hi = sq.mean_interval(vals[:, 1], rng, N_BOOT)
            row = {"study": study_name, "budget": budget, "method": method, "n_seeds": len(vals),
                   "seeds": " ".join(str(s) for s in sorted(at[method])),
                   "quality_at_200": round(q200, 4), "quality_at_200_lo": round(q200_lo, 4),
                   "quality_at_200_hi": round(q200_hi, 4), "quality_at_budget": round(qb, 4),
                   "quality_at_budget_lo": round(qb_lo, 4), "quality_at_budget_hi": round(qb_hi, 4),
                   "full_budget_runs": sum(m["evaluations"] == budget for m in meta[method]),
                   "candidates_per_eval_median": round(float(np.median(
                       [m["candidates"] / max(1, m["evaluations"]) for m in meta[method]])), 2),
                   "wall_s_median": round(float(np.median([m["wall_s"] for m in meta[method]])), 1),
                   "max_candidates_per_evaluation": max(candidate_bounds(m["trials"])[0] for m in meta[method]),
                   "worst_window_candidates_per_evaluation": round(max(
                       candidate_bounds(m["trials"])[1] for m in meta[method]), 1),
                   "diff_vs_tpe": "", "diff_vs_tpe_lo": "", "diff_vs_tpe_hi": ""}
            if method != "tpe" and paired:
                diff = np.array([at[method][s][1] - at["tpe"][s][1] for s in paired])
                d, d_lo, d_hi = sq.mean_interval(diff, rng, N_BOOT)
                row.update(diff_vs_tpe=round(d, 4), diff_vs_tpe_lo=round(d_lo, 4), diff_vs_tpe_hi=round(d_hi, 4))
            rows.append(row)
    return rows


def write_outputs(out: Path, rows: list[dict[str, Any]], argv: list[str]) -> None:
    sq.write_csv(rows, out / "quality.csv")
    lines = ["# Quality at large budgets: the default against plain TPE at the same budget", "",
             f"Command: `python experiments/budget_quality.py {' '.join(argv)}`".rstrip() + " (see the script's docstring "
             "for the measure; recorded H200 profile, modelled optimal clocks, TSS).", "",
             "Deploy quality ratio (1 = the whole subspace's deploy hypervolume), mean over the held-out seeds "
             "with its bootstrap 95 % interval; `default - TPE`: the paired difference at the budget.", "",
             "| dataset | budget | method | seeds | quality after 200 | quality at the budget | default - TPE "
             "| runs that spent the budget | candidates per evaluation (median) | most candidates for one evaluation "
             f"| worst {WINDOW_EVALUATIONS} evaluations in a row (candidates each) | wall s (median) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        diff = (f"{r['diff_vs_tpe']:+.4f} [{r['diff_vs_tpe_lo']:+.4f}, {r['diff_vs_tpe_hi']:+.4f}]"
                if r["diff_vs_tpe"] != "" else "-")
        lines.append(f"| {r['study']} | {r['budget']} | {r['method']} | {r['seeds']} | {r['quality_at_200']:.4f} "
                     f"[{r['quality_at_200_lo']:.4f}, {r['quality_at_200_hi']:.4f}] | {r['quality_at_budget']:.4f} "
                     f"[{r['quality_at_budget_lo']:.4f}, {r['quality_at_budget_hi']:.4f}] | {diff} | "
                     f"{r['full_budget_runs']} of {r['n_seeds']} | {r['candidates_per_eval_median']} | "
                     f"{r['max_candidates_per_evaluation']} | {r['worst_window_candidates_per_evaluation']} | "
                     f"{r['wall_s_median']} |")
    (out / "README.md").write_text("\n".join(lines) + "\n")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--budgets", default="400,1000", help="comma-separated budgets")
    p.add_argument("--dataset", default="cifar10", choices=("cifar10", "cifar100"))
    p.add_argument("--seeds", default=None, help="e.g. 100-104 (default: the declared held-out seeds)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--summarize-only", action="store_true")
    p.add_argument("--out", default="results/budget_quality")
    p.add_argument("--work-dir", default=None)
    return p


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",") if b.strip()})
    except ValueError:
        raise UsageError(f"--budgets must be comma-separated integers, got {args.budgets!r}") from None
    if not budgets or min(budgets) < 1:
        raise UsageError(f"--budgets must be positive integers, got {args.budgets!r}")
    seeds = sq._seeds(args.seeds) if args.seeds else list(HELD_OUT_SEEDS)
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    out = Path(args.out)
    work = Path(args.work_dir) if args.work_dir else out / "_work"
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(args.dataset, b, m, s, str(out), str(work)) for b in budgets for s in seeds for m in METHODS
            if read_points(out, b, m, s) is None]
    if not args.summarize_only and jobs:
        print(f"{len(jobs)} runs to do", flush=True)
        if args.jobs == 1:
            for job in jobs:
                print(run_one(job), flush=True)
        else:
            with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=4) as pool:
                for line in pool.imap_unordered(run_one, jobs):
                    print(line, flush=True)
    rows = summarize(out, args.dataset, budgets, seeds, work)
    write_outputs(out, rows, argv)
    shutil.rmtree(work, ignore_errors=True)
    for r in rows:
        print(f"b{r['budget']} {r['method']}: quality at the budget {r['quality_at_budget']:.4f} (n={r['n_seeds']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        return _run(args, argv)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the finished runs are kept; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
