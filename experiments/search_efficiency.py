"""Search efficiency: how many full evaluations each search method needs to find the Pareto front.

Compares random search, TPE and NSGA-II without a filter, TPE with the threshold and the
dominance-aware utilization filters, and TPE with the dominance filter and screening
(``tpe+dominance+screen``: ``--screen 4`` of ``python -m nasenergy.search``, see
`nasenergy.search.loop.screening`), on three objectives: accuracy (12-epoch x-valid of CIFAR-10, or of ``--dataset``, the
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
import sys
import time
from pathlib import Path

from lib.efficiency_front import (
    DATASET,
    DEFAULT_METHODS,
    METHODS,
    OBJECTIVES,
    PRIMARY,
    RECALL_ACCURACY_PP,
    RECALL_HARDWARE_REL,
    SCREEN,
    TARGET_RECALL,
    YARDSTICKS,
    ClassFigures,
    Subspace,
    build_subspace,
    front_contributions,
    matched_front_points,
    normalised_hv,
    ratio_curves,
    search_config,
    to_unit_maximisation,
)
from lib.efficiency_plots import plot, write_curves, write_front, write_table
from lib.efficiency_readme import _coverage_note, _target_lines, write_readme
from lib.efficiency_runs import _WORKER, _init_worker, read_timings, run_all, run_path, write_run
from lib.efficiency_stats import (
    MethodCurves,
    check_run_matches,
    dominated_on_arrival,
    filter_headroom,
    load_curves,
    speedups,
    summarize,
)

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.search.command.config import DEFAULT_PATIENCE

__all__ = [  # the experiment's names, from its helper modules (tests use them through this script)
    "DATASET", "DEFAULT_METHODS", "METHODS", "OBJECTIVES", "PRIMARY", "RECALL_ACCURACY_PP", "RECALL_HARDWARE_REL",
    "TARGET_RECALL", "YARDSTICKS",
    "ClassFigures", "MethodCurves", "Subspace", "build_subspace", "check_run_matches", "dominated_on_arrival",
    "filter_headroom", "front_contributions", "load_curves", "matched_front_points", "main", "normalised_hv",
    "ratio_curves",
    "run_path", "search_config", "speedups", "summarize", "to_unit_maximisation", "write_run",
    "_coverage_note", "_target_lines",
]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "search_efficiency"


# ------------------------------------------------------------------------------------ main


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 per method")
    p.add_argument("--budget", type=int, default=200, help="full evaluations per run")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                   help="comma-separated, from: " + ", ".join(METHODS) + " (@R: the dominance filter at target recall R; +screen: with screening, --screen 4)")
    p.add_argument("--jobs", type=int, default=1, help="parallel processes")
    p.add_argument("--dataset", choices=("cifar10", "cifar100", "ImageNet16-120"), default=DATASET,
                   help="NATS-Bench dataset of the accuracy objective (default %(default)s); give each "
                        "dataset its own --out and --work-dir")
    p.add_argument("--patience", type=int, default=DEFAULT_PATIENCE,
                   help="the search's stall guard: stop a run after this many candidates in a row without a new "
                        "full evaluation; 0 turns it off (default %(default)s, the search command's)")
    p.add_argument("--profile", default=None, metavar="PATH",
                   help="the recorded profile to replay (default: the shipped one), e.g. "
                        "nasenergy/data/h200_tss_deployed_profile.csv.gz; give each profile its own --out")
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
    _init_worker(args.budget, args.patience, args.dataset, args.profile)
    sub = _WORKER["subspace"]
    load_curves(args.out, methods, seeds, args.budget, sub)  # refuse runs of another subspace before adding any
    if not args.summarize_only:
        run_all(methods, seeds, args.budget, args.out, args.work_dir, args.jobs,
                None if args.deadline_min is None else 60 * args.deadline_min, args.patience, args.dataset,
                args.profile)
    curves = load_curves(args.out, methods, seeds, args.budget, sub)
    if not curves:
        raise UsageError(f"no finished runs to summarize in {args.out / 'runs'}")
    summary = summarize(curves, args.budget, sub)
    at = [k for k in (50, 100, args.budget) if k <= args.budget]
    speed = [s for y in YARDSTICKS for other in ("tpe+dominance", "tpe+threshold", *TARGET_RECALL, *SCREEN)
             for s in speedups(curves, "tpe", other, at, y)]
    write_curves(curves, args.out / "curves.csv")
    write_table(summary, args.out / "summary.csv")
    if speed:
        write_table(speed, args.out / "speedups.csv")
    write_front(sub, args.out / "true_front.csv")
    headroom = filter_headroom(curves)
    write_table(headroom, args.out / "headroom.csv")
    plot(curves, args.out, args.budget)
    cmd = "python experiments/search_efficiency.py " + " ".join(
        a for a in argv if a not in args.note and a != "--note")
    patience = sorted({r[0].get("patience", "") for c in curves.values() for r in c.rows if r} - {""}, key=int)
    write_readme(args.out, sub, summary, speed, args.budget, args.seeds, read_timings(args.out), list(args.note),
                 cmd.strip(), patience, headroom)
    p = YARDSTICKS[PRIMARY]
    for r in summary:
        print(f"{r['method']:>14}: normalised ratio at {args.budget} {r[f'{p}_at_{args.budget}_mean']:.3f} "
              f"[{r[f'{p}_ci95_low']:.3f}, {r[f'{p}_ci95_high']:.3f}] n={r['n_seeds']}, stalled "
              f"{r['stalled_runs']}; evals to 0.95 {r[f'{p}_evals_to_0.95_median']}, to 0.99 "
              f"{r[f'{p}_evals_to_0.99_median']}; origin-based ratio {r[f'hv_ratio_at_{args.budget}_mean']:.3f}; "
              f"front recall {r[f'front_recall_at_{args.budget}_mean']:.3f}")
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    return run_main(lambda: _run(args, argv))


if __name__ == "__main__":
    sys.exit(main())
