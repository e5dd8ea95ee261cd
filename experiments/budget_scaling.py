"""Wall time and candidates per full evaluation of the default search at growing budgets
-> results/budget_scaling/.

Each budget runs ``python -m nasenergy.search --budget B`` once, as a user runs it (default
settings: recorded profile on a machine without a GPU, tss, cifar10, the dominance filter, TPE), in
a fresh run folder, as a child process. A row records the exit status, the full evaluations, the
candidates and their outcomes, candidates per evaluation, evaluations the filter yielded on
(`nasenergy.search.loop.filter_yield`), and the wall time
(``measured`` on this machine, with the load average at the start: the machine may be shared).

The quality measure is fixed before looking: the run must end with exactly ``B`` evaluations
(exit 0); candidates per evaluation is the figure watched as the budget grows.

Usage::

    python experiments/budget_scaling.py [--budgets 200,400,1000,3000] [--seed 0]
        [--workers 3 --storage postgresql://user@host/db] [--out results/budget_scaling]
        [-- extra search options]

With ``--storage``, each run gets a study name of its own (``budget-scaling-B-seedS-<time>``), so
runs at different budgets never resume one another's study; ``--workers N`` starts N worker
processes in the one command, all on that study.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from nasenergy.run.files import load_run

COLUMNS = (
    "budget", "seed", "workers", "storage", "exit_code", "evaluated", "candidates", "candidates_per_evaluation", "duplicate", "filtered",
    "infeasible", "not_recorded", "filter_yielded", "wall_s", "load_avg_1min", "cpus", "source",
    "date", "extra_args",
)


def run_one(budget: int, seed: int, extra: list[str], workers: int = 1,
            storage: str | None = None) -> dict[str, object]:
    """One search at ``budget``; its row of `COLUMNS`."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "nasenergy.search", "--budget", str(budget), "--seed", str(seed),
               "--out", str(out), "--quiet", "--workers", str(workers), *extra]
        if storage:
            stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
            cmd += ["--storage", storage, "--study-name", f"budget-scaling-{budget}-seed{seed}-{stamp}"]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall_s = time.perf_counter() - start
        if proc.stderr.strip():
            print(proc.stderr.strip().splitlines()[-1], file=sys.stderr)
        run = load_run(out)
        outcomes = Counter(r["outcome"] for r in run.rows)
        yielded = sum(1 for r in run.evaluated if "the filter yields" in str(r.get("filter_reason") or ""))
    evaluated = outcomes.get("evaluated", 0)
    return {
        "budget": budget, "seed": seed, "workers": workers,
        "storage": "postgresql" if storage and storage.startswith("postgresql") else ("other" if storage else "journal"),
        "exit_code": proc.returncode, "evaluated": evaluated,
        "candidates": len(run.rows),
        "candidates_per_evaluation": round(len(run.rows) / evaluated, 3) if evaluated else "",
        "duplicate": outcomes.get("duplicate", 0), "filtered": outcomes.get("filtered", 0),
        "infeasible": outcomes.get("infeasible", 0), "not_recorded": outcomes.get("not_recorded", 0),
        "filter_yielded": yielded, "wall_s": round(wall_s, 1),
        "load_avg_1min": round(load, 2), "cpus": os.cpu_count(), "source": "measured",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "extra_args": " ".join(extra),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="200,400,1000,3000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="worker processes of each search")
    parser.add_argument("--storage", default=None, help="e.g. postgresql://user@host/db (default: the run's journal)")
    parser.add_argument("--out", default="results/budget_scaling")
    parser.add_argument("extra", nargs="*", help="options passed to the search (after --)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "runs.csv"
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        for budget in (int(b) for b in args.budgets.split(",")):
            row = run_one(budget, args.seed, list(args.extra), args.workers, args.storage)
            writer.writerow(row)
            f.flush()
            print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
