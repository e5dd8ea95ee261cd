"""Search quality on held-out seeds: every rival, in one script, on the deploy quality measure.

**The measure, declared before any run** (`nasenergy.quality`): the deploy hypervolume of the
networks a run fully evaluated, as a share of the best possible over the searched (sub)space:
accuracy points above the space's median deployed accuracy (`quality_floors.json`) x decades of
throughput above the subspace's slowest network x decades of energy per image below its most
energy-hungry one. Every figure is the one the search itself scores: the NATS-Bench 12-epoch x-valid
accuracy of the deployed network (mean over its cells, **recorded**), throughput and energy per image
from the recorded H200 profile (fp16, batch 1024, default clock, **recorded**) moved to the modelled
energy-optimal clock (**modelled**), exactly as ``python -m nasenergy.search --hardware recorded``.
The second measure, declared with it: the mean regret in accuracy points under 10 energy budgets and
10 throughput floors log-spaced over the subspace's region front (`nasenergy.quality.regret_profile`):
the best accuracy possible under each minus the best the run reached (the full gap to the floor
where it has nothing), averaged.

**Seeds.** Settings may only be chosen on `TUNING_SEEDS` (0-9); every table here is computed on the
`HELD_OUT_SEEDS` (100-119), declared in this file before the first run. No method's setting was
changed for this comparison: each runs as shipped.

**Rivals** (`METHODS`), each a complete `nasenergy.search.run_search` (journal storage, claims,
network keys, stall guard): random search, plain TPE and NSGA-II without a filter; TPE with the
Kosaian-style utilization threshold (``--filter threshold``); TPE with the dominance filter given
only FLOPs and params (``--filter-features size``: free, nothing measured beyond what the hardware
objectives need); given the recorded zero-cost proxies (``--filter-features size,proxies``); given
the measured utilization, throughput and energy beside the free features (``measured``:
``--filter-features measured,size,structure``, the default until the tuning seeds chose the free
features); and the default pipeline (the command's defaults: ``--filter-features size,structure``).
``measured-norescue`` (``--budget-rescue off``) is ``measured`` stopped at its stall on a partial
profile: identical to it up to the stall, so it shows what the rescue adds. ``free+structure``
(the free features given explicitly) is the default's configuration; it ran on the tuning seeds
before the choice.

**Studies** (`STUDIES`): a space, a dataset and the subspace searched. ``cifar10``, ``cifar100`` and
``ImageNet16-120`` search the topology space (the default ``--studies``); ``sss-cifar10``,
``sss-cifar100`` and ``sss-ImageNet16-120`` the size space (``--space sss``: the 4,096 configurations
profiled at 32x32, or those recorded at 16x16), with every rival of the topology studies
(`results/search_quality_sss`). There the search scores the 90-epoch x-valid accuracy (the size
space records no 12-epoch values) and the dominance filter defaults to target recall 0.65
(`results/search_quality_sss_tuning/DECISION.md`, seeds 0-9; ``recall0.8`` is the default before
it); the rivals that name their features keep 0.95, so that each means the same in both spaces.
`SSS_CANDIDATES` are the settings scored against the default on those tuning seeds; ``ordinal`` and
``tpe-ordinal`` offer the widths to the sampler as ordered integers and are scored against each
other (`BASELINE_OF`).

The subspace: ``profile``: every deployed network the
recorded profile holds at the dataset's input (CIFAR: all 6,040; ImageNet16-120: the classes
recorded at 16x16 so far); ``proxies``: only the networks whose proxies the shipped table holds for
that dataset (a profile restricted to them is written under ``--work-dir``). A candidate outside the
subspace costs no budget (outcome ``not_recorded``). The proxies rival runs where the shipped table
holds the proxies of every network searched (all three datasets); a ``proxies`` study serves a
dataset whose table is partial, so that every method runs on the same networks.

**Tables.** For each checkpoint k of `CHECKPOINTS`: the mean quality ratio of each method after k
evaluations (bootstrap 95 % interval over seeds), and the evaluations each method needs to reach
plain TPE's mean quality at k (``never`` when it does not within the budget) as a factor k / needed,
with a bootstrap interval (seeds of both methods resampled; ``never`` counts as factor 0). The
front recall: the share of the subspace's region-front networks (above the floor) a run evaluated.

Writes ``OUT/runs/<study>/<method>_s<seed>.csv.gz`` (evaluations in order) and ``.json`` (the run's
counts and wall time; the script resumes from them), then ``OUT/quality.csv``, ``OUT/factors.csv``,
``OUT/truth_<study>.json`` and ``OUT/README.md``::

    python experiments/search_quality.py [--studies cifar10,cifar100] [--methods tpe,default] [--jobs 2]
    python experiments/search_quality.py --studies sss-cifar10 --out results/search_quality_sss
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import multiprocessing
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from lib.search_curves import (  # noqa: F401  (re-exported)
    BUDGET,
    N_BOOT,
    N_LIMITS,
    OBJECTIVES,
    Truth,
    evals_to_reach,
    factor_with_interval,
    mean_interval,
    quality_curve,
    regret_curve,
    regret_limits,
)
from lib.search_report import ACCURACY_TEXT, plot_curves, write_csv, write_readme, write_truth

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.recorded import NotRecordedError, RecordedMeter
from nasenergy.pareto import non_dominated_mask
from nasenergy.proxies.table import default_table_path
from nasenergy.proxies.table import read_rows as read_proxy_rows
from nasenergy.quality import default_floor_pct, region_from_points
from nasenergy.search import run_search
from nasenergy.search.command.components import build_components
from nasenergy.search.command.config import SearchConfig
from search_spaces import SSSSpace, get_space

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "search_quality"
WORK = ROOT / "runs" / "search_quality"

TUNING_SEEDS: tuple[int, ...] = tuple(range(10))
"""The only seeds on which any setting may be chosen."""
HELD_OUT_SEEDS: tuple[int, ...] = tuple(range(100, 120))
"""The seeds every reported figure comes from (declared before the first run)."""
CHECKPOINTS: tuple[int, ...] = (50, 100, 200)

ORDINAL = "ordinal_widths"
"""A method setting, not a `SearchConfig` one: the size space's widths offered to the sampler as
integers (ordered) instead of categoricals (`search_spaces.SSSSpace.ordinal_widths`)."""

METHODS: dict[str, dict[str, Any]] = {
    "random": {"sampler": "random", "filter": "none"},
    "tpe": {"sampler": "tpe", "filter": "none"},
    "nsga2": {"sampler": "nsga2", "filter": "none"},
    "threshold": {"sampler": "tpe", "filter": "threshold"},
    "free": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size",), "target_recall": 0.95},
    "free+structure": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size", "structure"), "target_recall": 0.95},
    "proxies": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size", "proxies"), "target_recall": 0.95},
    "measured": {"filter_features": ("measured", "size", "structure"), "target_recall": 0.95},
    "measured-norescue": {"filter_features": ("measured", "size", "structure"), "budget_rescue": False, "target_recall": 0.95},
    "default": {},
    "screen4": {"filter_features": ("size", "structure"), "screen": 4, "target_recall": 0.95},
    "recall0.8": {"filter_features": ("size", "structure"), "target_recall": 0.8},
    "structure+proxies": {"filter_features": ("size", "structure", "proxies"), "target_recall": 0.95},
    "structure+proxies+screen4": {"filter_features": ("size", "structure", "proxies"), "screen": 4, "target_recall": 0.95},
    "structure+proxies+screen8": {"filter_features": ("size", "structure", "proxies"), "screen": 8, "target_recall": 0.95},
    "structure+proxies+screen16": {"filter_features": ("size", "structure", "proxies"), "screen": 16, "target_recall": 0.95},
    "recall0.8+screen4": {"filter_features": ("size", "structure"), "target_recall": 0.8, "screen": 4},
    "recall0.8+screen16": {"filter_features": ("size", "structure"), "target_recall": 0.8, "screen": 16},
    "recall0.65": {"filter_features": ("size", "structure"), "target_recall": 0.65},
    "tpe-ordinal": {"sampler": "tpe", "filter": "none", ORDINAL: True},
    "ordinal": {"filter_features": ("size", "structure"), "target_recall": 0.8, ORDINAL: True},
    "recall0.5": {"filter_features": ("size", "structure"), "target_recall": 0.5},
    "ordinal+recall0.65": {"filter_features": ("size", "structure"), "target_recall": 0.65, ORDINAL: True},
}
"""Method -> its `SearchConfig` settings beyond the shared ones ({}: the command's defaults)."""
BASELINE = "tpe"
BASELINE_OF: dict[str, str] = {"ordinal": "tpe-ordinal", "ordinal+recall0.65": "tpe-ordinal"}
"""A method scored against a plain TPE other than `BASELINE`: the one given the same parameters."""


@dataclass(frozen=True)
class Study:
    """A dataset and the subspace searched (``profile`` or ``proxies``)."""

    name: str
    dataset: str
    subspace: str
    methods: tuple[str, ...]
    space: str = "tss"


_MAIN = ("random", "tpe", "nsga2", "threshold", "free", "free+structure", "measured", "default")
_SSS = (*_MAIN, "proxies")
SSS_CANDIDATES: tuple[str, ...] = ("screen4", "recall0.8", "structure+proxies", "structure+proxies+screen4",
                                   "structure+proxies+screen8", "structure+proxies+screen16",
                                   "recall0.8+screen4", "recall0.8+screen16", "recall0.65", "tpe-ordinal",
                                   "ordinal", "recall0.5", "ordinal+recall0.65")
"""Settings scored against the default on the tuning seeds of the size space
(`results/search_quality_sss_tuning/DECISION.md`, the rule declared before their runs)."""
STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("cifar10", "cifar10", "profile", (*_MAIN, "proxies")),
    Study("cifar100", "cifar100", "profile", (*_MAIN, "proxies")),
    Study("ImageNet16-120", "ImageNet16-120", "profile", (*_MAIN, "proxies", "measured-norescue")),
    Study("sss-cifar10", "cifar10", "profile", (*_SSS, *SSS_CANDIDATES), space="sss"),
    Study("sss-cifar100", "cifar100", "profile", (*_SSS, *SSS_CANDIDATES), space="sss"),
    Study("sss-ImageNet16-120", "ImageNet16-120", "profile", (*_SSS, *SSS_CANDIDATES), space="sss"),
)}
TSS_STUDIES: tuple[str, ...] = ("cifar10", "cifar100", "ImageNet16-120")
"""The studies run when ``--studies`` is not given (``sss-*``: the size space, `results/search_quality_sss`)."""


# ----------------------------------------------------------------------------- set-up


def proxies_profile(dataset: str, work_dir: Path, space_name: str = "tss") -> Path:
    """The shipped profile restricted to the deployed networks whose proxies the shipped table
    holds for ``dataset`` (written once under ``work_dir``)."""

    path = work_dir / f"profile_proxies_{space_name}_{dataset}.csv.gz"
    if path.exists():
        return path
    space = get_space(space_name)
    keys = {space.deployed_key(space.arch_at(int(r["arch_index"])))
            for r in read_proxy_rows(default_table_path(space_name)) if r["dataset"] == dataset}
    if not keys:
        raise UsageError(f"the shipped proxy table holds no {dataset} rows")
    source = RecordedMeter(space=space).path
    work_dir.mkdir(parents=True, exist_ok=True)
    with gzip.open(source, "rt", newline="") as fin, gzip.open(path, "wt", newline="") as fout:
        reader = csv.DictReader(fin)
        writer = csv.DictWriter(fout, fieldnames=reader.fieldnames or [])
        writer.writeheader()
        writer.writerows(r for r in reader if space.deployed_key(r["canonical_arch"]) in keys)
    return path


def config_for(study: Study, method: str, seed: int, out: Path | None, profile: str | None) -> Any:
    """The `SearchConfig` of one run: the shared settings plus the method's."""

    settings = {k: v for k, v in METHODS[method].items() if k != ORDINAL}
    return SearchConfig(budget=BUDGET, space=study.space, dataset=study.dataset, hardware="recorded",
                        profile=profile, seed=seed, out=None if out is None else str(out), quiet=True,
                        **settings)


def study_profile(study: Study, work_dir: Path) -> str | None:
    return str(proxies_profile(study.dataset, work_dir, study.space)) if study.subspace == "proxies" else None


# ----------------------------------------------------------------------------- truth


def build_truth(study: Study, work_dir: Path) -> Truth:
    """Every learnable deployed network of the subspace with the figures the search would score."""

    components = build_components(config_for(study, "default", 0, None, study_profile(study, work_dir)))
    space = components.space
    keys, points = [], []
    for key, members in space.deployed_members_by_key().items():
        arch = members[0]
        if not space.output_depends_on_input(arch):
            continue
        try:
            m = components.measure(arch)
        except NotRecordedError:
            continue
        if components.optimal_clock is not None:
            best = components.optimal_clock(arch, m).best
            thr, energy = float(best.throughput_img_per_s), float(best.energy_j_per_img)
        else:
            thr, energy = float(m.throughput_img_per_s), float(m.energy_j_per_img)
        acc = float(components.oracle.evaluate(arch, study.dataset, seed=0).accuracy_pct)
        keys.append(components.key_of(arch))
        points.append([acc, thr, energy])
    pts = np.asarray(points, dtype=float)
    floor = default_floor_pct(study.space, study.dataset)
    if floor is None:
        raise UsageError(f"no shipped accuracy floor for {study.space} {study.dataset}")
    region = region_from_points(pts, OBJECTIVES, floor, floor_from="median of the space's deployed networks",
                                refs_from="the slowest and most energy-hungry network of the subspace")
    feasible = region.feasible_mask(pts, OBJECTIVES)
    front = np.zeros(len(pts), dtype=bool)
    front[feasible] = non_dominated_mask(pts[feasible], OBJECTIVES)
    return Truth(study.name, region, keys, pts, region.volume(pts, OBJECTIVES),
                 {k for k, f in zip(keys, front) if f})


# ----------------------------------------------------------------------------- runs

RUN_COLUMNS = ("evaluation_number", "trial_number", "network", "accuracy_pct", "throughput_img_per_s",
               "energy_j_per_img")


def run_files(out: Path, study: str, method: str, seed: int) -> tuple[Path, Path]:
    base = out / "runs" / study / f"{method}_s{seed:03d}"
    return base.parent / f"{base.name}.csv.gz", base.parent / f"{base.name}.json"  # a name may hold a dot


def run_one(job: tuple[str, str, int, str, str]) -> str:
    """One complete search; writes its evaluations and counts. Returns a one-line summary."""

    study_name, method, seed, out_s, work_s = job
    study, out, work = STUDIES[study_name], Path(out_s), Path(work_s)
    csv_path, json_path = run_files(out, study_name, method, seed)
    folder = work / study_name / f"{method}_s{seed:03d}"
    if folder.exists():
        shutil.rmtree(folder)  # a run cut short earlier starts afresh
    SSSSpace.ordinal_widths = bool(METHODS[method].get(ORDINAL, False))
    t0 = time.perf_counter()
    summary = run_search(config_for(study, method, seed, folder, study_profile(study, work)),
                         resume_command="python experiments/search_quality.py")
    wall_s = time.perf_counter() - t0
    if summary.stop_reason == "interrupted":  # a run cut short is not a result: run it again
        shutil.rmtree(folder, ignore_errors=True)
        raise KeyboardInterrupt
    n_cands, n_evaluated, outcomes = keep_evaluations(folder, csv_path)
    meta = {"study": study_name, "method": method, "seed": seed, "wall_s": round(wall_s, 2),
            "candidates": n_cands, "evaluations": n_evaluated, "outcomes": outcomes,
            "stop_reason": summary.stop_reason, "settings": {k: list(v) if isinstance(v, tuple) else v
                                                             for k, v in METHODS[method].items()}}
    json_path.write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    return f"{study_name} {method} seed {seed}: {n_evaluated} evaluations, {n_cands} candidates, {wall_s:.0f} s"


def keep_evaluations(folder: Path, csv_path: Path) -> tuple[int, int, dict[str, int]]:
    """Write the full evaluations of the run in ``folder`` (its ``candidates.csv``), in order, to
    ``csv_path`` (`RUN_COLUMNS`); return the candidates, the evaluations and the count of each
    outcome."""
    with (folder / "candidates.csv").open(newline="") as fh:
        cands = sorted(csv.DictReader(fh), key=lambda r: int(r["trial_number"]))
    evaluated = sorted((c for c in cands if c["outcome"] == "evaluated"), key=lambda c: int(c["evaluation_number"]))
    outcomes: dict[str, int] = {}
    for c in cands:
        outcomes[c["outcome"]] = outcomes.get(c["outcome"], 0) + 1
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(csv_path, "wt", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(RUN_COLUMNS)
        for c in evaluated:
            writer.writerow([c["evaluation_number"], c["trial_number"], c["network"], c["accuracy_pct"],
                             c["throughput_img_per_s"], c["energy_j_per_img"]])
    return len(cands), len(evaluated), outcomes


def read_rows(out: Path, study: str, method: str, seed: int) -> tuple[list[dict[str, str]], dict[str, Any]] | None:
    """A kept run's evaluations (`RUN_COLUMNS`, in order) and its counts, or ``None`` when it was
    not run (`run_files`)."""
    csv_path, json_path = run_files(out, study, method, seed)
    if not json_path.exists() or not csv_path.exists():
        return None
    with gzip.open(csv_path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return rows, json.loads(json_path.read_text())


def run_points(rows: Sequence[dict[str, str]]) -> np.ndarray:
    """The (accuracy, throughput, energy) of a run's evaluations, one row each."""
    return np.array([[float(r["accuracy_pct"]), float(r["throughput_img_per_s"]), float(r["energy_j_per_img"])]
                     for r in rows], dtype=float).reshape(-1, 3)


def read_run(out: Path, study: str, method: str, seed: int) -> tuple[list[str], np.ndarray, dict[str, Any]] | None:
    got = read_rows(out, study, method, seed)
    if got is None:
        return None
    rows, meta = got
    return [r["network"] for r in rows], run_points(rows), meta


def run_all(jobs: Sequence[tuple[str, str, int, str, str]], n_procs: int, deadline_s: float | None) -> None:
    t0 = time.perf_counter()
    if n_procs == 1:
        for job in jobs:
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                print("deadline: stopping; run again to resume", flush=True)
                return
            print(run_one(job), flush=True)
        return
    with multiprocessing.get_context("spawn").Pool(n_procs, maxtasksperchild=20) as pool:
        pending = [pool.apply_async(run_one, (job,)) for job in jobs]
        for res in pending:
            if deadline_s is not None and time.perf_counter() - t0 > deadline_s:
                pool.terminate()
                print("deadline: stopping; run again to resume", flush=True)
                return
            print(res.get(), flush=True)


# ----------------------------------------------------------------------------- statistics


def summarize(out: Path, studies: Sequence[Study], seeds: Sequence[int], work_dir: Path,
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Truth], dict[str, dict[str, np.ndarray]]]:
    quality_rows, factor_rows, truths = [], [], {}
    all_curves: dict[str, dict[str, np.ndarray]] = {}
    for study in studies:
        truth = build_truth(study, work_dir)
        truths[study.name] = truth
        curves: dict[str, np.ndarray] = {}
        regrets: dict[str, np.ndarray] = {}
        limits = regret_limits(truth)
        metas: dict[str, list[dict[str, Any]]] = {}
        recalls: dict[str, np.ndarray] = {}
        for method in study.methods:
            runs = [read_run(out, study.name, method, s) for s in seeds]
            runs = [r for r in runs if r is not None]
            if not runs:
                continue
            curves[method] = np.array([quality_curve(truth, pts) for _, pts, _ in runs])
            regrets[method] = np.array([regret_curve(truth, pts, limits) for _, pts, _ in runs])
            metas[method] = [m for _, _, m in runs]
            recalls[method] = np.array([len(set(keys) & truth.front_keys) / max(1, len(truth.front_keys))
                                        for keys, _, _ in runs])
        all_curves[study.name] = curves
        rng = np.random.default_rng(0)
        for method, c in curves.items():
            meta = metas[method]
            row: dict[str, Any] = {"study": study.name, "method": method, "n_seeds": len(c),
                                   "stalled_runs": sum(m["evaluations"] < BUDGET for m in meta),
                                   "candidates_per_eval_median": float(np.median(
                                       [m["candidates"] / max(1, m["evaluations"]) for m in meta])),
                                   "wall_s_median": float(np.median([m["wall_s"] for m in meta]))}
            for k in CHECKPOINTS:
                mean, lo, hi = mean_interval(c[:, k - 1], rng)
                row.update({f"quality_at_{k}": mean, f"quality_at_{k}_lo": lo, f"quality_at_{k}_hi": hi})
            for k in CHECKPOINTS:
                mean, lo, hi = mean_interval(regrets[method][:, k - 1], rng)
                row.update({f"regret_pt_at_{k}": mean, f"regret_pt_at_{k}_lo": lo, f"regret_pt_at_{k}_hi": hi})
            mean, lo, hi = mean_interval(recalls[method], rng)
            row.update(front_recall_at_200=mean, front_recall_lo=lo, front_recall_hi=hi)
            quality_rows.append(row)
            base_name = BASELINE_OF.get(method, BASELINE)
            if base_name not in curves:
                continue
            for measure, mine, base in (("quality", c, curves[base_name]),
                                        ("regret", -regrets[method], -regrets[base_name])):
                for k in CHECKPOINTS:
                    needed, factor, lo, hi, p_never = factor_with_interval(mine, base, k, rng)
                    factor_rows.append({"study": study.name, "method": method, "measure": measure, "k": k,
                                        "tpe_at_k": float(abs(base[:, k - 1].mean())),
                                        "evals_needed": "never" if needed is None else needed,
                                        "factor": factor, "factor_lo": lo, "factor_hi": hi,
                                        "share_of_resamples_never": p_never})
    return quality_rows, factor_rows, truths, all_curves


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="experiments/search_quality.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--studies", default=",".join(TSS_STUDIES), help="comma-separated, from: " + ", ".join(STUDIES))
    p.add_argument("--methods", default=None, help="comma-separated subset of each study's methods")
    p.add_argument("--seeds", default=None, help="e.g. 100-119 (default: the declared held-out seeds)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes")
    p.add_argument("--deadline-min", type=float, default=None, help="start no new run after this many minutes")
    p.add_argument("--summarize-only", action="store_true")
    p.add_argument("--note", action="append", default=[], help="a line for the README's notes (repeatable)")
    p.add_argument("--work-dir", type=Path, default=WORK)
    p.add_argument("--out", type=Path, default=OUT)
    return p


def _seeds(text: str | None) -> list[int]:
    if text is None:
        return list(HELD_OUT_SEEDS)
    try:
        lo, _, hi = text.partition("-")
        seeds = list(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise UsageError(f"--seeds must look like 100-119, got {text!r}") from None
    if not seeds:
        raise UsageError(f"--seeds {text!r} names no seed")
    return seeds


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    names = [s.strip() for s in args.studies.split(",") if s.strip()]
    bad = [s for s in names if s not in STUDIES]
    if bad or not names:
        raise UsageError(f"--studies: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(STUDIES)}")
    wanted = None if args.methods is None else {m.strip() for m in args.methods.split(",") if m.strip()}
    if wanted is not None and (not wanted or wanted - set(METHODS)):
        raise UsageError(f"--methods: unknown {', '.join(sorted(wanted - set(METHODS))) or '(none)'}; "
                         f"choose from {', '.join(METHODS)}")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    seeds = _seeds(args.seeds)
    studies = [STUDIES[n] for n in names]
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.summarize_only:
        jobs = [(s.name, m, seed, str(args.out), str(args.work_dir)) for seed in seeds for s in studies
                for m in s.methods if (wanted is None or m in wanted) and not run_files(args.out, s.name, m, seed)[1].exists()]
        for s in studies:
            study_profile(s, args.work_dir)  # write the restricted profile once, before the workers start
        print(f"{len(jobs)} runs to do", flush=True)
        run_all(jobs, args.jobs, None if args.deadline_min is None else 60 * args.deadline_min)
    quality_rows, factor_rows, truths, all_curves = summarize(args.out, studies, seeds, args.work_dir)
    plot_curves(args.out, all_curves, list(METHODS), {s.name: f"{s.space.upper()} {s.dataset}" for s in studies})
    write_csv(quality_rows, args.out / "quality.csv")
    write_csv(factor_rows, args.out / "factors.csv")
    for t in truths.values():
        write_truth(args.out, t)
    command = "python experiments/search_quality.py " + " ".join(
        a for a in argv if a not in args.note and a != "--note")
    write_readme(args.out, quality_rows, factor_rows, truths, seeds, command.strip(), args.note,
                 methods=list(METHODS), baseline=BASELINE, checkpoints=CHECKPOINTS, tuning_seeds=TUNING_SEEDS,
                 accuracy_text="; ".join(dict.fromkeys(ACCURACY_TEXT[s.space] for s in studies)))
    for r in quality_rows:
        print(f"{r['study']:>16} {r['method']:>9}: quality at 100 {r['quality_at_100']:.3f}, at 200 "
              f"{r['quality_at_200']:.3f} (n={r['n_seeds']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    return run_main(lambda: _run(args, argv))


if __name__ == "__main__":
    sys.exit(main())
