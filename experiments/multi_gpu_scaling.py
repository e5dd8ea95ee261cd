"""Speed-up of one search shared by N worker processes, one GPU each -> results/multi_gpu_scaling/.

Runs the same live search (same seed, same budget, same settings) with ``--workers N`` for each N
of ``--workers-list`` (default 1, 2, 4, ... and all visible GPUs), once per storage: the journal
file in a run folder on local disk, and PostgreSQL when ``--postgres URL`` is given (each run its
own study). With ``--hardware cuda`` worker k is pinned to GPU k of ``CUDA_VISIBLE_DEVICES``
(`nasenergy.search.workers.runner`), exactly as ``python -m nasenergy.search --workers N --hardware cuda``
does. ``--hardware fake`` runs on any CPU with `nasenergy.testing.FakeMeter` acting as board k in
worker k (synthetic figures; what it measures is the machinery's overhead: spawn, start-up,
database, sampler), for the tests and for a dry run.

Written, per run (``scaling.csv``): wall time end to end (``run_search`` from start to files
written: start-up and database time included), candidates and full evaluations per second, the
speed-up over the run with one worker of the same storage and its efficiency (speed-up / N; the
target is at least 0.85), the exact-budget check (evaluations == budget, no trial left running),
the duplicate counts (networks fully evaluated more than once; networks measured more than once),
and how many boards measured the front. Per worker (``startup.csv``): seconds from the process's
start (its spawn) to the components factory (interpreter and imports), in the factory (torch, the
tables, CUDA and NVML: the meter), and from there to its first candidate (storage, study, claims),
and the sum: spawn to first candidate. With one worker the search runs in this process, and its
"spawn" is the moment ``run_search`` was called.

Fewer visible GPUs than the largest N asked for is refused in one line (exit 2), unless
``--share-gpus`` is given: then worker k runs on GPU k modulo the GPUs visible, as the search
pins them, and the run is a smoke test of the pinning and of the shared study, not a speed-up
(its rows say ``gpus_shared``, and no speed-up is computed for them). With workers on two or more
distinct GPUs, the search first measures the reference networks on each (the cross-board
calibration, `nasenergy.search.loop.board_step`); its seconds are in ``board_calibration_s`` and
inside ``wall_s``.

Usage::

    python experiments/multi_gpu_scaling.py --hardware cuda --budget 200 [--workers-list 1,2,4,8]
        [--postgres postgresql://user@host/db] [--out results/multi_gpu_scaling]
    python experiments/multi_gpu_scaling.py --hardware cuda --workers-list 1,2 --share-gpus   (one GPU: smoke test)
    python experiments/multi_gpu_scaling.py --hardware fake --budget 20 --workers-list 1,2 --out /tmp/x
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.registry import MeterKind, register_meter
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.components import Components, build_components
from nasenergy.search.command.env_info import gpu_info
from nasenergy.testing import FakeMeter

FAKE = "fake-board"
"""The ``--hardware fake`` meter's registered name: `FakeMeter` acting as board k in worker k."""
STARTUP_LOG_ENV = "NASENERGY_SCALING_STARTUP_LOG"
"""A folder each worker's components factory writes its start-up times to (one JSON file per process)."""
TARGET_EFFICIENCY = 0.85
#: The fake boards' power factors (board k uses entry k mod 4): a few per cent apart, as H200 boards are.
FAKE_POWER_FACTORS = (1.0, 0.97, 1.02, 0.95)
SCALING_COLUMNS = (
    "storage", "hardware", "workers", "gpus", "gpus_shared", "budget", "seed", "evaluated", "exact_budget", "trials_running",
    "candidates", "duplicate_evaluations", "networks_measured_twice", "front_size", "front_boards", "wall_s",
    "candidates_per_s", "evaluations_per_s", "speedup", "efficiency", "target_efficiency", "startup_s_median",
    "startup_s_max", "board_calibration_s", "boards_normalised", "stop_reason", "source",
)
STARTUP_COLUMNS = (
    "storage", "workers", "rank", "pid", "spawn_to_factory_s", "factory_s", "factory_to_first_candidate_s",
    "spawn_to_first_candidate_s", "source",
)


def _board_index() -> int:
    """Which fake board this process is: k for the worker process ``nasenergy-worker-k``, else 0."""
    name = multiprocessing.current_process().name
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if name.startswith("nasenergy-worker-") and tail.isdigit() else 0


def fake_board_meter() -> FakeMeter:
    """`FakeMeter` as board k of this process (`_board_index`), with its power factor."""
    k = _board_index()
    return FakeMeter.board(k, power_factor=FAKE_POWER_FACTORS[k % len(FAKE_POWER_FACTORS)], noise_cv=0.02, seed=3)


def _process_start_unix() -> float | None:
    """When this process started (Linux ``/proc``; ``None`` elsewhere), seconds since the epoch."""
    try:
        stat = Path("/proc/self/stat").read_text()
        start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
        btime = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                     if line.startswith("btime "))
        return btime + start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def register_fake_board() -> None:
    """Make ``--hardware fake-board`` a meter choice in this process."""
    register_meter(MeterKind(FAKE, fake_board_meter, takes_options=False, label="the fake board meter"),
                   replace=True)


def scaling_components(config: SearchConfig) -> Components:
    """`build_components`, timed: each process writes its start and the factory's start and end
    to ``$NASENERGY_SCALING_STARTUP_LOG/<pid>.json``. With ``--hardware fake-board`` the fake board
    meter is registered first (here, in each process: spawned workers do not inherit the parent's
    registrations)."""
    started = time.time()
    if config.hardware == FAKE:
        register_fake_board()
    components = build_components(config)
    log = os.environ.get(STARTUP_LOG_ENV)
    if log:
        record = {"pid": os.getpid(), "process_start": _process_start_unix(), "factory_start": started,
                  "factory_end": time.time(), "in_parent": multiprocessing.parent_process() is None}
        Path(log, f"{os.getpid()}.json").write_text(json.dumps(record))
    return components


def visible_gpus() -> list[str]:
    """GPU ids the search pins workers to (``CUDA_VISIBLE_DEVICES``, else NVML's count)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]
    return [str(i) for i in range(len(gpu_info()["gpus"]))]


def default_workers(n_gpus: int) -> list[int]:
    """1, 2, 4, ... below `n_gpus`, and `n_gpus`."""
    out, n = [], 1
    while n < n_gpus:
        out.append(n)
        n *= 2
    return out + [max(1, n_gpus)]


def _parse_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--workers-list wants counts like 1,2,4; got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"--workers-list wants positive counts; got {text!r}")
    return sorted(set(values))


def _first_candidates(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Worker id -> the start (seconds since the epoch) of its first candidate."""
    first: dict[str, float] = {}
    for r in rows:
        w, start = r.get("worker"), r.get("datetime_start")
        if w and start:
            t = dt.datetime.fromisoformat(str(start)).timestamp()
            first[w] = min(first.get(w, t), t)
    return first


def startup_rows(storage: str, workers: int, env: dict[str, Any], rows: list[dict[str, Any]],
                 log_dir: Path, run_start: float) -> list[dict[str, Any]]:
    """One `STARTUP_COLUMNS` row per worker of a run (from the factory logs and the candidates)."""
    logs = {}
    for p in log_dir.glob("*.json"):
        d = json.loads(p.read_text())
        logs[int(d["pid"])] = d
    first = _first_candidates(rows)
    out = []
    for worker_id, info in sorted((env.get("workers") or {}).items(), key=lambda kv: kv[1].get("rank", 0)):
        log = logs.get(int(info.get("pid", -1)))
        t_first = first.get(worker_id)
        if log is None or t_first is None:
            continue
        spawn = run_start if log.get("in_parent") or log.get("process_start") is None else log["process_start"]
        out.append({
            "storage": storage, "workers": workers, "rank": info.get("rank"), "pid": log["pid"],
            "spawn_to_factory_s": log["factory_start"] - spawn, "factory_s": log["factory_end"] - log["factory_start"],
            "factory_to_first_candidate_s": t_first - log["factory_end"], "spawn_to_first_candidate_s": t_first - spawn,
            "source": "measured",
        })
    return out


def run_one(args: argparse.Namespace, storage: str, workers: int, gpus: list[str], work: Path) -> tuple[dict, list]:
    """One search with `workers` workers on `storage` (``journal`` or ``postgresql``)."""
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S%f")
    out = work / f"{storage}-n{workers}-{stamp}"
    log_dir = work / f"startup-{storage}-n{workers}-{stamp}"
    log_dir.mkdir(parents=True)
    config = SearchConfig(
        space=args.space, budget=args.budget, seed=args.seed, workers=workers,
        hardware=FAKE if args.hardware == "fake" else args.hardware, dvfs=args.dvfs, quiet=True, out=str(out),
        storage=args.postgres if storage == "postgresql" else None,
        study_name=f"scaling-{storage}-n{workers}-{stamp}", patience=args.patience,
    )
    os.environ[STARTUP_LOG_ENV] = str(log_dir)
    t0 = time.time()
    summary = run_search(config, components_factory=scaling_components, resume_command="multi_gpu_scaling")
    wall = time.time() - t0
    run = load_run(out)
    rows = run.rows
    outcomes = Counter(str(r.get("outcome")) for r in rows)
    evaluated_nets = Counter(r.get("network") or r.get("canonical") for r in rows if r.get("outcome") == "evaluated")
    measured_nets = Counter(r.get("network") or r.get("canonical") for r in rows
                            if r.get("measure_source") and r.get("outcome") not in ("duplicate", "not_recorded"))
    front_boards = {r.get("measure_gpu_uuid") for r in run.front if r.get("measure_gpu_uuid")}
    starts = startup_rows(storage, workers, run.env, rows, log_dir, t0)
    spawn_s = [s["spawn_to_first_candidate_s"] for s in starts]
    row = {
        "storage": storage, "hardware": args.hardware, "workers": workers,
        "gpus": " ".join(gpus[k % len(gpus)] for k in range(workers)) if gpus else "",
        "gpus_shared": bool(gpus) and workers > len(gpus), "budget": args.budget,
        "seed": args.seed, "evaluated": summary.evaluated,
        "exact_budget": summary.evaluated == args.budget and outcomes["evaluated"] == args.budget
        and outcomes["running"] == 0,
        "trials_running": outcomes["running"], "candidates": len(rows),
        "duplicate_evaluations": sum(n - 1 for n in evaluated_nets.values() if n > 1),
        "networks_measured_twice": sum(1 for n in measured_nets.values() if n > 1),
        "front_size": len(run.front), "front_boards": len(front_boards), "wall_s": wall,
        "candidates_per_s": len(rows) / wall, "evaluations_per_s": summary.evaluated / wall,
        "speedup": None, "efficiency": None, "target_efficiency": TARGET_EFFICIENCY,
        "startup_s_median": statistics.median(spawn_s) if spawn_s else None,
        "startup_s_max": max(spawn_s) if spawn_s else None,
        "board_calibration_s": (run.env.get("boards") or {}).get("cost_s"),
        "boards_normalised": (run.env.get("boards") or {}).get("normalised"),
        "stop_reason": summary.stop_reason, "source": "measured",
    }
    return row, starts


def _same_search(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(str(a[k]) == str(b[k]) for k in ("storage", "hardware", "budget", "seed"))


def _speedups(rows: list[dict[str, Any]]) -> None:
    """Speed-up and efficiency of each row against the one-worker row of the same search (storage,
    hardware, budget, seed); none for rows on shared GPUs (a smoke test is no speed-up)."""
    for r in rows:
        base = next((b for b in rows if _same_search(b, r) and int(b["workers"]) == 1), None)
        shared = str(r["gpus_shared"]) == "True"
        if base is not None and not shared:
            r["speedup"] = float(r["candidates_per_s"]) / float(base["candidates_per_s"])
            r["efficiency"] = r["speedup"] / int(r["workers"])


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows written earlier (empty cells as ``None``), or none."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return [{k: (v if v != "" else None) for k, v in r.items()} for r in csv.DictReader(f)]


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return format(v, ".4g")
    return str(v)


def _write_csv(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([_fmt(r.get(c)) for c in columns])


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hardware", choices=("cuda", "fake"), default="cuda",
                   help="cuda: worker k on GPU k; fake: FakeMeter as board k (CPU, synthetic figures)")
    p.add_argument("--workers-list", type=_parse_list, default=None,
                   help="worker counts, e.g. 1,2,4,8 (default: 1, 2, 4, ... and all visible GPUs)")
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--space", default="tss")
    p.add_argument("--dvfs", default="modelled", help="the search's --dvfs (default modelled)")
    p.add_argument("--patience", type=int, default=500)
    p.add_argument("--share-gpus", action="store_true",
                   help="allow more workers than GPUs (worker k on GPU k mod n): a smoke test, not a speed-up")
    p.add_argument("--postgres", default=None, help="also run every count on this PostgreSQL URL")
    p.add_argument("--no-journal", action="store_true", help="skip the journal-file runs")
    p.add_argument("--append", action="store_true",
                   help="keep the rows already in --out and add these (speed-ups against the one-worker row of "
                        "the same storage, budget and seed, whichever command wrote it)")
    p.add_argument("--work", default=None, help="folder for the run folders (default: a temporary one)")
    p.add_argument("--out", default="results/multi_gpu_scaling")
    args = p.parse_args(argv)
    import optuna  # lazy: quiet the study-created lines of every run

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.budget < 1:
        raise UsageError(f"--budget must be at least 1, got {args.budget}")
    gpus = visible_gpus() if args.hardware == "cuda" else []
    if args.hardware == "fake":
        register_fake_board()
    counts = args.workers_list or (default_workers(len(gpus)) if args.hardware == "cuda" else [1, 2])
    if args.hardware == "cuda" and not gpus:
        raise UsageError("--hardware cuda: no GPU is visible (CUDA_VISIBLE_DEVICES and NVML show none)")
    if args.hardware == "cuda" and max(counts) > len(gpus) and not args.share_gpus:
        raise UsageError(f"{max(counts)} workers need {max(counts)} GPUs, and {len(gpus)} are visible "
                         f"({', '.join(gpus)}); give --workers-list up to {len(gpus)}, or --share-gpus for a "
                         "smoke test of the pinning")
    storages = ([] if args.no_journal else ["journal"]) + (["postgresql"] if args.postgres else [])
    if not storages:
        raise UsageError("--no-journal without --postgres leaves nothing to run")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="nasenergy-scaling-"))
    results, starts = [], []
    for storage in storages:
        for n in counts:
            row, s = run_one(args, storage, n, gpus, work)
            results.append(row)
            starts += s
            print(f"{storage} x{n}: {row['candidates']} candidates in {row['wall_s']:.1f} s "
                  f"({row['candidates_per_s']:.2f}/s), exact budget {row['exact_budget']}, "
                  f"duplicates {row['duplicate_evaluations']}, start-up median {_fmt(row['startup_s_median'])} s",
                  flush=True)
    if args.append:  # rows of earlier commands (e.g. one worker count per command) stay
        results = _read_csv(out / "scaling.csv") + results
        starts = _read_csv(out / "startup.csv") + starts
    _speedups(results)
    _write_csv(out / "scaling.csv", SCALING_COLUMNS, results)
    _write_csv(out / "startup.csv", STARTUP_COLUMNS, starts)
    (out / "machine.json").write_text(json.dumps({
        "host": platform.node(), "platform": platform.platform(), "python": sys.version.split()[0],
        "cpus": os.cpu_count(), "gpus": gpus, "hardware": args.hardware, "argv": sys.argv[1:] if argv is None else argv,
        "append": args.append,
        "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_main(main))
