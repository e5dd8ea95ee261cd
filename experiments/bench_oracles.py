"""Loading and querying times of the accuracy oracles -> results/oracle_benchmark/.

Measures, on this machine:

* opening the official NATS-Bench fixture with `nats_bench` and the first query of a cell;
* reading the shared benchmark tables (a folder of CSVs) into a `TableOracle`;
* building the local benchmark file (``python -m nasenergy.benchmark import``) from the tables
  and from the official fixture;
* loading the local benchmark file, and answering all 15,625 topology cells from it, vectorised
  and one call at a time;
* a fresh Python process that loads the file and answers all cells (imports included).

Writes ``timings.csv`` (one row per step; every figure ``measured``) and ``README.md`` with the
machine it ran on. Needs the shared data (``$NASENERGY_SHARED_DATA``).

Usage::

    python experiments/bench_oracles.py [--repeats 5] [--out results/oracle_benchmark]
"""

from __future__ import annotations

import csv
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.oracles import CachedOracle, NatsBenchOracle, TableOracle, install, nats_import
from nasenergy.oracles.tables import table_files
from nasenergy.paths import shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
N_TSS = 15_625


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of one step over repeats (all ``measured``)."""

    step: str
    detail: str
    repeats: int
    median_s: float
    min_s: float
    max_s: float
    target_s: float | None


def _time(fn: Callable[[], Any], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _timing(step: str, detail: str, times: list[float], target_s: float | None = None) -> Timing:
    return Timing(step, detail, len(times), statistics.median(times), min(times), max(times), target_s)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, str]:
    """The machine and software the timings were measured with."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "load_average_1_5_15": " ".join(f"{x:.2f}" for x in load),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "nats_bench": __import__("nats_bench").version(),
    }


def run(repeats: int, work: Path) -> tuple[list[Timing], dict[str, Any]]:
    """Measure every step; return the timings and facts for the README."""
    shared = shared_data_dir()
    fixture = shared / "nats_bench_fixture" / "fake_torch_dir"
    facts: dict[str, Any] = {}
    timings: list[Timing] = []

    def open_fixture() -> None:
        oracle = NatsBenchOracle(fixture, "tss")
        oracle.evaluate(0, "cifar10", seed=0)

    timings.append(_timing("nats_fixture_open_and_first_query",
                           "nats_bench.create on the official fixture + first query (reads one cell)",
                           _time(open_fixture, repeats)))
    live = NatsBenchOracle(fixture, "tss")
    live.evaluate(0, "cifar10", seed=0)
    timings.append(_timing("nats_fixture_cached_query", "one more query of an already read cell",
                           _time(lambda: live.evaluate(0, "cifar10", seed=1), repeats * 20)))

    cell = str(fixture / "NATS-tss-v1_0-3ffb9-simple" / "000011.pickle.pbz2")
    timings.append(_timing("nats_cell_read", "read one official fast-mode cell file (import step)",
                           _time(lambda: nats_import.read_cell(cell), repeats * 4)))

    table_oracle: list[TableOracle] = []
    n_tables = len(table_files(shared))
    timings.append(_timing("tables_load", f"TableOracle on the shared data folder ({n_tables} CSV tables, joined)",
                           _time(lambda: table_oracle.append(TableOracle(shared)), repeats)))

    tables_file = work / "tables"
    fixture_file = work / "fixture"
    results: list[Any] = []
    timings.append(_timing("cache_build_from_tables", "python -m nasenergy.benchmark import <shared data>",
                           _time(lambda: results.append(install(shared, directory=tables_file)), repeats)))
    facts["cache_file_bytes"] = results[-1].size_bytes
    facts["cost_model"] = results[-1].data.provenance.get("cost_model")
    timings.append(_timing("cache_build_from_nats_fixture", "import of the official fast-mode fixture folder",
                           _time(lambda: install(fixture, directory=fixture_file), repeats)))

    path = results[-1].path
    timings.append(_timing("cache_load", f"CachedOracle on {path.name}",
                           _time(lambda: CachedOracle(path), repeats), target_s=1.0))
    cached = CachedOracle(path)
    everything = np.arange(N_TSS)
    cached.evaluate_many(everything, "cifar10", seed=0)
    timings.append(_timing("query_all_vectorised", "evaluate_many over all 15,625 TSS cells (cifar10)",
                           _time(lambda: cached.evaluate_many(everything, "cifar10", seed=0), repeats),
                           target_s=1.0))
    timings.append(_timing("query_all_one_by_one", "15,625 evaluate() calls (cifar10)",
                           _time(lambda: [cached.evaluate(i, "cifar10") for i in range(N_TSS)], repeats)))

    script = ("import numpy as np; from nasenergy.oracles import CachedOracle; "
              f"o = CachedOracle({str(path)!r}); b = o.evaluate_many(np.arange({N_TSS}), 'cifar10'); "
              "assert len(b) == 15625")
    timings.append(_timing("fresh_process_load_and_query_all",
                           "new Python process: import, load the file, answer all cells",
                           _time(lambda: subprocess.run([sys.executable, "-c", script], check=True), repeats)))
    return timings, facts


def write(timings: list[Timing], facts: dict[str, Any], machine: dict[str, str], out: Path) -> None:
    """``timings.csv`` and ``README.md`` in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "timings.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["step", "detail", "repeats", "median_s", "min_s", "max_s", "target_s", "provenance"])
        for t in timings:
            writer.writerow([t.step, t.detail, t.repeats, f"{t.median_s:.6f}", f"{t.min_s:.6f}",
                             f"{t.max_s:.6f}", "" if t.target_s is None else t.target_s, "measured"])
    lines = [
        "# Oracle loading and querying times",
        "",
        "Produced by `python experiments/bench_oracles.py`; every time below is **measured** wall-clock",
        "time on the machine listed (median over the repeats; min and max in `timings.csv`).",
        "",
        "| step | what | median (s) | target (s) |",
        "| --- | --- | ---: | ---: |",
    ]
    for t in timings:
        target = "" if t.target_s is None else f"< {t.target_s:g}"
        lines.append(f"| `{t.step}` | {t.detail} | {t.median_s:.3g} | {target} |")
    lines += ["", f"Benchmark file built from the shared tables: {facts['cache_file_bytes'] / 2**20:.2f} MiB."]
    cell = next(t for t in timings if t.step == "nats_cell_read")
    cores = os.cpu_count() or 1
    lines += [
        "",
        "Importing the full official fast-mode folder reads 15,625 such cell files once; at the "
        f"measured {cell.median_s:.3f} s per file that is about {N_TSS * cell.median_s / cores / 60:.1f} "
        f"min on {cores} cores (**estimated**: the full benchmark is not on this machine).",
    ]
    model = facts.get("cost_model")
    if model:
        lines += [
            "",
            "Unrecorded costs (cells 1000..15624 of the tables) are **estimated** by the rate model "
            f"fitted on the {model['n_fit_archs']} cells with recorded NATS-Bench times; its 5-fold "
            f"cross-validated median relative error is {100 * model['cv_median_rel_err_train']:.2f}% "
            f"(training rate) and {100 * model['cv_median_rel_err_eval']:.2f}% (evaluation rate).",
        ]
    lines += ["", "## Machine", ""] + [f"- {k}: {v}" for k, v in machine.items()]
    lines += ["", "A busy machine (see the load average) makes every figure slower; the targets are "
              "for the load and the 15,625-cell query.", ""]
    (out / "README.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write its results; return the exit status."""
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="repeats per step")
    parser.add_argument("--out", default=str(ROOT / "results" / "oracle_benchmark"), help="output folder")
    args = parser.parse_args(argv)

    def body() -> None:
        if args.repeats < 1:
            raise UsageError("--repeats must be at least 1")
        machine = machine_info()
        with tempfile.TemporaryDirectory() as work:
            timings, facts = run(args.repeats, Path(work))
        write(timings, facts, machine, Path(args.out))
        for t in timings:
            print(f"{t.step:36s} {t.median_s:9.4f} s")

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
