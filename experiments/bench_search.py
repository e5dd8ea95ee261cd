"""Wall time of ``python -m nasenergy.search --budget 200`` on this machine -> results/search_benchmark/.

Each configuration runs the whole search once in a fresh run folder, in this process, exactly as
the command does (journal storage in the run folder, claims, filter, DVFS, run files and plots):

* accuracy: the table oracle over the shared NATS-Bench tables (``$NASENERGY_SHARED_DATA``);
* cheap measurement: ``--hardware recorded`` (default) replays the recorded H200 profile shipped
  in ``nasenergy/data``. A partial profile is searched as the command searches it: candidates
  outside it are ``not_recorded`` (not measured, no budget), and the profile's coverage is
  written beside the timings. ``--hardware fake`` uses `nasenergy.testing.FakeMeter` instead
  (synthetic figures, labelled so in every output);
* DVFS: modelled (the shipped H200 parameter set), with the dominance filter's matching energy
  bound;
* filters: ``--filters`` (default ``dominance,none``).

Writes ``timings.csv`` (one row per configuration; times ``measured`` on this machine, with the
load average at the start, since the machine may be shared) and ``README.md``. Targets: at most 60
seconds per 200-evaluation run on a 2-core machine, and a filtered run within 3x the wall time of
the same run without a filter (``--filter none``), so that the filter costs less than it saves.
With ``--repeats N`` each configuration runs N times, alternating, and the row is the run of median
wall time.

Usage::

    python experiments/bench_search.py [--budget 200] [--hardware recorded|fake] [--repeats 3]
        [--note TEXT ...] [--out results/search_benchmark]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import platform
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from nasenergy._cli import OneLineParser, run_main
from nasenergy.hardware.recorded import RecordedMeter
from nasenergy.oracles import load_oracle
from nasenergy.paths import shared_data_dir
from nasenergy.run.files import load_run
from nasenergy.run.network_key import measured_form, network_key_fn
from nasenergy.run.objectives import hv_hypervolume, points_of
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.components import Components, arch_measurer, build_components, make_dvfs, make_filter
from nasenergy.search.command.coverage import profile_coverage
from nasenergy.testing import FakeMeter
from search_spaces import get_space

TARGET_S = 60.0
TARGET_RATIO_TO_UNFILTERED = 3.0
"""A filtered run may take at most this many times the wall time of the run without a filter."""
COLUMNS = (
    "hardware", "measurement_source", "profile_classes", "filter", "sampler", "budget", "evaluated", "candidates",
    "measured", "filtered", "duplicates", "not_recorded", "hypervolume", "wall_s", "s_per_candidate", "cpu_s",
    "load_avg_1min", "cpus", "repeats", "wall_s_all", "ratio_to_unfiltered", "target_ratio", "target_s",
    "meets_target", "timing_source",
)


def fake_h200_components(config):
    """Parts with `FakeMeter` (synthetic, H200-like device name so the H200 DVFS set applies)."""
    space = get_space(config.space)
    meter = FakeMeter(noise_cv=0.05, seed=config.seed, device_name="fake H200 (synthetic)")
    oracle = load_oracle(config.benchmark, space, seed=config.seed)
    step = make_dvfs(config, meter, space)
    return Components(
        space=space,
        measure=arch_measurer(meter, space, config),
        oracle=oracle,
        filter=make_filter(config, energy_bound=step.energy_bound if step else None),
        optimal_clock=step.optimal_clock if step else None,
        describe={"meter": "FakeMeter (synthetic)", "oracle": oracle.describe(), "dvfs": config.dvfs},
    )


def run_one(budget: int, hardware: str, filter_mode: str, benchmark: Path, sampler: str) -> dict:
    """One timed search; returns its `COLUMNS` row."""
    factory = fake_h200_components if hardware == "fake" else build_components
    with tempfile.TemporaryDirectory(prefix="nasenergy-bench-") as tmp:
        config = SearchConfig(
            budget=budget, hardware="recorded", benchmark=str(benchmark), filter=filter_mode, dvfs="modelled",
            sampler=sampler, out=str(Path(tmp) / "run"), quiet=True,
        )
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        summary = run_search(config, components_factory=factory, resume_command="(benchmark)")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        run = load_run(config.out_dir)
    outcomes = Counter(r["outcome"] for r in run.rows)
    sources = sorted({r["measure_source"] for r in run.rows if r.get("measure_source")})
    hv = hv_hypervolume(points_of(run.evaluated, run.objectives), run.objectives)
    coverage = next(iter(run.env.get("workers", {}).values()), {}).get("coverage")
    return {
        "hardware": "fake (synthetic FakeMeter)" if hardware == "fake" else "recorded H200 profile",
        "measurement_source": "/".join(sources),
        "profile_classes": f"{coverage['covered_classes']}/{coverage['total_classes']}" if coverage else "",
        "filter": filter_mode,
        "sampler": sampler,
        "budget": budget,
        "evaluated": summary.evaluated,
        "candidates": summary.candidates,
        "measured": outcomes["evaluated"] + outcomes["filtered"],
        "filtered": outcomes["filtered"],
        "duplicates": outcomes["duplicate"],
        "not_recorded": outcomes["not_recorded"],
        "hypervolume": f"{hv:.6g}",
        "wall_s": f"{wall:.2f}",
        "s_per_candidate": f"{wall / max(1, summary.candidates):.4f}",
        "cpu_s": f"{cpu:.2f}",
        "load_avg_1min": f"{load:.2f}",
        "cpus": os.cpu_count(),
        "target_s": TARGET_S,
        "meets_target": wall <= TARGET_S,
        "timing_source": "measured",
    }


def write_readme(out: Path, rows: list[dict], args: argparse.Namespace, coverage: Any | None) -> None:
    synthetic = args.hardware == "fake"
    lines = [
        "# Search benchmark: wall time of a 200-evaluation search",
        "",
        f"`python experiments/bench_search.py --budget {args.budget} --hardware {args.hardware} "
        f"--repeats {getattr(args, 'repeats', 1)}` (and the notes below) on "
        f"{platform.node()} ({os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}), {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC.",
        "",
        "Each row is one complete search as `python -m nasenergy.search` runs it (journal storage, claims, "
        "filter, modelled DVFS, run files and plots); each configuration ran `--repeats` times, alternating "
        "with the others, and the row is its run of median wall time. Accuracy comes from the table oracle "
        "over the shared NATS-Bench tables.",
        "",
    ]
    if coverage is not None and coverage.complete:
        lines += [f"**Profile:** {coverage.summary()}.", ""]
    elif coverage is not None:
        lines += [
            f"**Partial profile:** {coverage.summary()}. The search effectively ran over those classes: a candidate "
            "outside them is recorded `not_recorded` (not measured, no budget spent, told to the sampler as "
            "pruned). The timings will change as the profile grows.",
            "",
        ]
    if synthetic:
        lines += [
            "**The cheap measurements here are synthetic** (`nasenergy.testing.FakeMeter`, `measure_source` "
            "`modelled`): the recorded H200 profile was not installed when this ran. The timings measure "
            "the search machinery, not any hardware; rerun with `--hardware recorded` once the profile exists.",
            "",
        ]
    lines += [
        "| hardware | filter | evaluated | candidates | measured | filtered (skipped) | duplicates | "
        f"not recorded | wall s (median of runs) | s/candidate | CPU s | load avg | × unfiltered | ≤ {TARGET_S:.0f} s "
        f"and ≤ {TARGET_RATIO_TO_UNFILTERED:g}× |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['hardware']} | {r['filter']} | {r['evaluated']} | {r['candidates']} | {r['measured']} | "
            f"{r['filtered']} | {r['duplicates']} | {r['not_recorded']} | {r['wall_s']} ({r['wall_s_all']}) | "
            f"{r['s_per_candidate']} | {r['cpu_s']} | {r['load_avg_1min']} | {r['ratio_to_unfiltered'] or '–'} | "
            f"{'yes' if r['meets_target'] else 'no'} |"
        )
    lines += [
        "",
        "Times are wall-clock seconds measured on this machine (`timing_source` = measured); the load "
        "average at the start of each run shows whether other work shared the CPUs. Duplicates are "
        "candidates whose canonical network was already seen: they are answered from the earlier "
        "result and cost no budget. `measured` counts the distinct networks given a cheap measurement; the "
        "dominance filter skipped `filtered` of them, comparing each candidate's optimistic figures (its "
        "conformal accuracy bound, and the DVFS model's lowest energy curve) with the current front. "
        "`timings.csv` holds every column.",
        "",
    ]
    notes = list(getattr(args, "note", None) or [])
    if notes:
        lines += ["## Notes", "", *(f"* {n}" for n in notes), ""]
    (out / "README.md").write_text("\n".join(lines))


def recorded_profile_coverage() -> Any | None:
    """How much of the TSS space the recorded profile covers (a `Coverage`; ``None``: none reported).

    Raises:
        NasEnergyError: the profile is not installed or unreadable.
    """
    space = get_space("tss")
    meter = RecordedMeter(space=space)  # fails clearly if absent
    found = profile_coverage(meter, space, SearchConfig(), network_key_fn(space, measured_form(meter)))
    return found or None


def median_row(runs: list[dict]) -> dict:
    """The run of median wall time (the lower middle one for an even count), with every run's
    wall time in ``wall_s_all``."""
    ordered = sorted(runs, key=lambda r: float(r["wall_s"]))
    row = dict(ordered[(len(ordered) - 1) // 2])
    row["repeats"] = len(runs)
    row["wall_s_all"] = " ".join(r["wall_s"] for r in runs)
    return row


def add_ratio_to_unfiltered(rows: list[dict]) -> None:
    """Set each filtered row's wall time as a multiple of the unfiltered row's (when there is one),
    and whether it meets both targets."""
    base = next((r for r in rows if r["filter"] == "none"), None)
    for r in rows:
        r.setdefault("repeats", 1)
        r.setdefault("wall_s_all", r["wall_s"])
        r["target_ratio"] = TARGET_RATIO_TO_UNFILTERED
        ratio = None if base is None or r is base else float(r["wall_s"]) / float(base["wall_s"])
        r["ratio_to_unfiltered"] = "" if ratio is None else f"{ratio:.2f}"
        r["meets_target"] = float(r["wall_s"]) <= TARGET_S and (ratio is None or ratio <= TARGET_RATIO_TO_UNFILTERED)


def run_all(args: argparse.Namespace) -> int:
    """Every configured search, then ``timings.csv`` and ``README.md``; 1 when a run misses the target."""
    benchmark = args.benchmark or shared_data_dir()
    coverage = None
    if args.hardware == "recorded":
        coverage = recorded_profile_coverage()
        if coverage is not None:
            print(coverage.summary())
    filters = [f.strip() for f in args.filters.split(",") if f.strip()]
    runs: dict[str, list[dict]] = {f: [] for f in filters}
    for _ in range(args.repeats):  # alternating, so that a burst of load hits every configuration alike
        for filter_mode in filters:
            row = run_one(args.budget, args.hardware, filter_mode, benchmark, args.sampler)
            print(", ".join(f"{k}={row[k]}" for k in ("hardware", "filter", "evaluated", "candidates", "wall_s")))
            runs[filter_mode].append(row)
    rows = [median_row(runs[f]) for f in filters]
    add_ratio_to_unfiltered(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "timings.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    write_readme(args.out, rows, args, coverage)
    print(f"wrote {args.out / 'timings.csv'} and {args.out / 'README.md'}")
    return 0 if all(r["meets_target"] for r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--hardware", choices=("recorded", "fake"), default="recorded")
    p.add_argument("--filters", default="dominance,none")
    p.add_argument("--sampler", default="tpe")
    p.add_argument("--benchmark", type=Path, default=None, help="default: $NASENERGY_SHARED_DATA (the tables)")
    p.add_argument("--repeats", type=int, default=1, help="runs per configuration; the median is reported")
    p.add_argument("--note", action="append", default=[], help="a line for the README's notes (repeatable)")
    p.add_argument("--out", type=Path, default=Path("results/search_benchmark"))
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1, got {args.repeats}")

    import optuna


    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return run_main(lambda: run_all(args))


if __name__ == "__main__":
    raise SystemExit(main())
