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

**Studies** (`STUDIES`): a dataset and the subspace searched. ``profile``: every deployed network the
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.recorded import NotRecordedError, RecordedMeter
from nasenergy.proxies.table import default_table_path, read_rows
from nasenergy.search import run_search
from nasenergy.search.components import build_components
from nasenergy.search.config import SearchConfig
from nasenergy.objectives import objectives_for
from nasenergy.quality import DeployRegion, default_floor_pct, region_from_points, regret_profile
from nasenergy.pareto import non_dominated_mask
from search_spaces import get_space

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "search_quality"
WORK = ROOT / "runs" / "search_quality"

TUNING_SEEDS: tuple[int, ...] = tuple(range(10))
"""The only seeds on which any setting may be chosen."""
HELD_OUT_SEEDS: tuple[int, ...] = tuple(range(100, 120))
"""The seeds every reported figure comes from (declared before the first run)."""
CHECKPOINTS: tuple[int, ...] = (50, 100, 200)
BUDGET = 200
N_BOOT = 2000
N_LIMITS = 10
"""Energy budgets and throughput floors of the regret measure (each)."""
OBJECTIVES = objectives_for(("accuracy", "throughput", "energy"))

METHODS: dict[str, dict[str, Any]] = {
    "random": {"sampler": "random", "filter": "none"},
    "tpe": {"sampler": "tpe", "filter": "none"},
    "nsga2": {"sampler": "nsga2", "filter": "none"},
    "threshold": {"sampler": "tpe", "filter": "threshold"},
    "free": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size",)},
    "free+structure": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size", "structure")},
    "proxies": {"sampler": "tpe", "filter": "dominance", "filter_features": ("size", "proxies")},
    "measured": {"filter_features": ("measured", "size", "structure")},
    "measured-norescue": {"filter_features": ("measured", "size", "structure"), "budget_rescue": False},
    "default": {},
}
"""Method -> its `SearchConfig` settings beyond the shared ones ({}: the command's defaults)."""
BASELINE = "tpe"


@dataclass(frozen=True)
class Study:
    """A dataset and the subspace searched (``profile`` or ``proxies``)."""

    name: str
    dataset: str
    subspace: str
    methods: tuple[str, ...]


_MAIN = ("random", "tpe", "nsga2", "threshold", "free", "free+structure", "measured", "default")
STUDIES: dict[str, Study] = {s.name: s for s in (
    Study("cifar10", "cifar10", "profile", (*_MAIN, "proxies")),
    Study("cifar100", "cifar100", "profile", (*_MAIN, "proxies")),
    Study("ImageNet16-120", "ImageNet16-120", "profile", (*_MAIN, "proxies", "measured-norescue")),
)}


# ----------------------------------------------------------------------------- set-up


def proxies_profile(dataset: str, work_dir: Path) -> Path:
    """The shipped profile restricted to the deployed networks whose proxies the shipped table
    holds for ``dataset`` (written once under ``work_dir``)."""

    path = work_dir / f"profile_proxies_{dataset}.csv.gz"
    if path.exists():
        return path
    space = get_space("tss")
    keys = {space.deployed_key(space.arch_at(int(r["arch_index"])))
            for r in read_rows(default_table_path("tss")) if r["dataset"] == dataset}
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

    return SearchConfig(budget=BUDGET, space="tss", dataset=study.dataset, hardware="recorded",
                        profile=profile, seed=seed, out=None if out is None else str(out), quiet=True,
                        **METHODS[method])


def study_profile(study: Study, work_dir: Path) -> str | None:
    return str(proxies_profile(study.dataset, work_dir)) if study.subspace == "proxies" else None


# ----------------------------------------------------------------------------- truth


@dataclass
class Truth:
    """The searched subspace scored as the search scores it."""

    study: str
    region: DeployRegion
    keys: list[str]
    points: np.ndarray
    volume: float
    front_keys: set[str] = field(default_factory=set)


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
    floor = default_floor_pct("tss", study.dataset)
    if floor is None:
        raise UsageError(f"no shipped accuracy floor for tss {study.dataset}")
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
    return base.with_suffix(".csv.gz"), base.with_suffix(".json")


def run_one(job: tuple[str, str, int, str, str]) -> str:
    """One complete search; writes its evaluations and counts. Returns a one-line summary."""

    study_name, method, seed, out_s, work_s = job
    study, out, work = STUDIES[study_name], Path(out_s), Path(work_s)
    csv_path, json_path = run_files(out, study_name, method, seed)
    folder = work / study_name / f"{method}_s{seed:03d}"
    if folder.exists():
        shutil.rmtree(folder)  # a run cut short earlier starts afresh
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
            if BASELINE not in curves:
                continue
            for measure, mine, base in (("quality", c, curves[BASELINE]),
                                        ("regret", -regrets[method], -regrets[BASELINE])):
                for k in CHECKPOINTS:
                    needed, factor, lo, hi, p_never = factor_with_interval(mine, base, k, rng)
                    factor_rows.append({"study": study.name, "method": method, "measure": measure, "k": k,
                                        "tpe_at_k": float(abs(base[:, k - 1].mean())),
                                        "evals_needed": "never" if needed is None else needed,
                                        "factor": factor, "factor_lo": lo, "factor_hi": hi,
                                        "share_of_resamples_never": p_never})
    return quality_rows, factor_rows, truths, all_curves


def plot_curves(out: Path, all_curves: dict[str, dict[str, np.ndarray]]) -> list[Path]:
    """``quality_curves.png``/``.pdf``: per study, each method's median quality ratio after each
    evaluation with its interquartile band over the seeds."""
    import matplotlib  # lazy: plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: plotting only

    names = [n for n, c in all_curves.items() if c]
    if not names:
        return []
    colours = {m: plt.get_cmap("tab10")(i) for i, m in enumerate(METHODS)}
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.0), squeeze=False)
    for ax, name in zip(axes[0], names):
        for method, c in all_curves[name].items():
            x = np.arange(1, c.shape[1] + 1)
            q25, q50, q75 = np.percentile(c, [25, 50, 75], axis=0)
            ax.plot(x, q50, color=colours[method], label=f"{method} (n={len(c)})", lw=1.6)
            ax.fill_between(x, q25, q75, color=colours[method], alpha=0.18, lw=0)
        ax.set_title(f"TSS {name}")
        ax.set_xlabel("full evaluations")
        ax.set_ylim(0.6, 1.005)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("deploy hypervolume / best possible")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("Search quality on held-out seeds: median and interquartile band", fontsize=11)
    fig.tight_layout()
    paths = [out / "quality_curves.png", out / "quality_curves.pdf"]
    for path in paths:
        fig.savefig(path, dpi=130)
    plt.close(fig)
    return paths


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    if not rows:
        return
    names: list[str] = []
    for r in rows:
        names.extend(k for k in r if k not in names)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})


def _fmt_factor(r: dict[str, Any]) -> str:
    if r["evals_needed"] == "never":
        return f"never [{r['factor_lo']:.2f}, {r['factor_hi']:.2f}]"
    return f"{r['factor']:.2f}x ({r['evals_needed']}) [{r['factor_lo']:.2f}, {r['factor_hi']:.2f}]"


def write_readme(out: Path, quality_rows: Sequence[dict[str, Any]], factor_rows: Sequence[dict[str, Any]],
                 truths: dict[str, Truth], seeds: Sequence[int], command: str, notes: Sequence[str]) -> None:
    tuning = set(seeds) <= set(TUNING_SEEDS)
    lines = [f"# Search quality on {'the tuning seeds' if tuning else 'held-out seeds'}", "",
             "Produced by `" + command + "` (`experiments/search_quality.py`; its docstring declares the "
             "measure, the seeds and the rivals). Seeds reported: "
             f"{seeds[0]}-{seeds[-1]} ({len(seeds)}); settings may be chosen on seeds 0-9 only"
             + (" (these)" if tuning else ", and none was changed on these") + ". Budget 200 full evaluations per run; recorded H200 profile, modelled "
             "optimal clocks, NATS-Bench 12-epoch x-valid accuracy (mean over a deployed network's cells).", ""]
    lines += ["## The searched subspaces and their best possible quality", "",
              "| study | networks (learnable) | floor % | throughput ref img/s | energy ref J/img | region-front networks | best volume |",
              "|---|---|---|---|---|---|---|"]
    for name, t in truths.items():
        lines.append(f"| {name} | {len(t.keys)} | {t.region.accuracy_floor_pct:.2f} | {t.region.throughput_ref_img_per_s:,.0f} "
                     f"| {t.region.energy_ref_j_per_img:.3g} | {len(t.front_keys)} | {t.volume:.2f} |")
    lines += ["", "## Quality ratio (mean over seeds, bootstrap 95 % interval)", "",
              "| study | method | seeds | after 50 | after 100 | after 200 | front recall at 200 | stalled | candidates / eval | wall s |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in quality_rows:
        q = " | ".join(f"{r[f'quality_at_{k}']:.3f} [{r[f'quality_at_{k}_lo']:.3f}, {r[f'quality_at_{k}_hi']:.3f}]"
                       for k in CHECKPOINTS)
        lines.append(f"| {r['study']} | {r['method']} | {r['n_seeds']} | {q} | {r['front_recall_at_200']:.3f} "
                     f"[{r['front_recall_lo']:.3f}, {r['front_recall_hi']:.3f}] | {r['stalled_runs']} "
                     f"| {r['candidates_per_eval_median']:.1f} | {r['wall_s_median']:.0f} |")
    lines += ["", "## Mean regret in accuracy points under 10 energy budgets and 10 throughput floors (lower is better)", "",
              "| study | method | after 50 | after 100 | after 200 |", "|---|---|---|---|---|"]
    for r in quality_rows:
        lines.append(f"| {r['study']} | {r['method']} | " + " | ".join(
            f"{r[f'regret_pt_at_{k}']:.2f} [{r[f'regret_pt_at_{k}_lo']:.2f}, {r[f'regret_pt_at_{k}_hi']:.2f}]"
            for k in CHECKPOINTS) + " |")
    by = {(r["study"], r["method"], r["measure"], r["k"]): r for r in factor_rows}
    for measure, title in (("quality", "quality ratio"), ("regret", "mean regret")):
        lines += ["", f"## Evaluations to reach plain TPE's {title} (factor k / needed, bootstrap 95 % interval)", "",
                  f"`never`: the method's mean curve does not reach TPE's {title} at k within 200 evaluations; "
                  "in the interval, a resample that never reaches it counts as factor 0. In brackets after the "
                  "factor: the evaluations needed.", "",
                  "| study | method | TPE at 50 | TPE at 100 | TPE at 200 |", "|---|---|---|---|---|"]
        for name in truths:
            for method in METHODS:
                if (name, method, measure, CHECKPOINTS[0]) not in by or method == BASELINE:
                    continue
                lines.append(f"| {name} | {method} | " + " | ".join(
                    _fmt_factor(by[(name, method, measure, k)]) for k in CHECKPOINTS) + " |")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    lines += ["", "![quality curves](quality_curves.png)", "",
              "Files: `quality_curves.png`/`.pdf` (median and interquartile band per method), "
              "`quality.csv`, `factors.csv`, `truth_<study>.json` (the region and its front), "
              "`runs/<study>/<method>_s<seed>.csv.gz` (each run's evaluations in order) and `.json` (its counts).", ""]
    (out / "README.md").write_text("\n".join(lines))


def write_truth(out: Path, truth: Truth) -> None:
    front = [{"network": k, "accuracy_pct": p[0], "throughput_img_per_s": p[1], "energy_j_per_img": p[2]}
             for k, p in zip(truth.keys, truth.points) if k in truth.front_keys]
    shares = truth.region.shares(np.array([[f["accuracy_pct"], f["throughput_img_per_s"], f["energy_j_per_img"]]
                                           for f in front]), OBJECTIVES) if front else []
    for f, s in zip(front, shares):
        f["exclusive_share"] = float(s)
    (out / f"truth_{truth.study}.json").write_text(json.dumps(
        {"region": truth.region.to_dict(), "networks": len(truth.keys), "best_volume": truth.volume,
         "front": front}, indent=1) + "\n")


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="experiments/search_quality.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--studies", default=",".join(STUDIES), help="comma-separated, from: " + ", ".join(STUDIES))
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
    plot_curves(args.out, all_curves)
    write_csv(quality_rows, args.out / "quality.csv")
    write_csv(factor_rows, args.out / "factors.csv")
    for t in truths.values():
        write_truth(args.out, t)
    command = "python experiments/search_quality.py " + " ".join(
        a for a in argv if a not in args.note and a != "--note")
    write_readme(args.out, quality_rows, factor_rows, truths, seeds, command.strip(), args.note)
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
