"""Compute every zero-cost proxy of every deployed network, resumably, into a recorded table.

Subcommands:

``measure``
    Computes `nasenergy.proxies.table.TABLE_PROXIES` for each network and dataset: for ``--space
    tss`` the 6,040 deployed TSS networks (one per `SearchSpace.deployed_key`, named by the class's
    member of smallest official index), for ``--space sss`` the configurations of the shipped SSS
    profile (``nasenergy/data/h200_sss_deployed_profile.csv.gz``), on each dataset's input shape
    and class count (CIFAR-10 3x32x32/10, CIFAR-100 3x32x32/100, ImageNet16-120 3x16x16/120).
    Networks come in official index order (``--sample N`` takes a seeded random N of them instead,
    in random order, so that a run stopped early holds a random sample).
    Work already in any CSV of ``--chunk-dir`` is skipped; each row is appended and flushed to a new
    chunk CSV there as soon as it is computed, and the run stops cleanly before ``--time-limit-s``,
    so running the same command again resumes (``--skip-dir`` names further folders of finished
    chunks, e.g. those of an earlier machine carried back). ``--shard K/N`` takes every N-th network from K (one
    process per GPU). Imports neither optuna nor nats_bench.

``merge``
    Merges chunk CSVs into one gzip CSV (default ``nasenergy/data/<space>_proxies.csv.gz``): a
    network computed twice keeps its earliest row; sorted by dataset then index; prints the
    provenance (devices, torch versions, time span, settings) for ``nasenergy/data/README.md``.

Usage (on a GPU machine, from the repository root)::

    PYTHONPATH=. python3 experiments/proxies_table.py measure --space tss --device cuda \\
        --chunk-dir $OUT/tss --time-limit-s 540
    python experiments/proxies_table.py merge --space tss chunks/tss/*.csv
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import io
import os
import random
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.proxies.compute import compute_arch_proxies, resolve_device
from nasenergy.proxies.cli import warm_up
from nasenergy.proxies.data import DATA_CHOICES, DEFAULT_BATCH_SIZE, DEFAULT_DATA
from nasenergy.proxies.table import TABLE_COLUMNS, TABLE_PROXIES, default_table_path, read_rows, report_row
from search_spaces import DATASETS, get_space

SSS_PROFILE = Path(__file__).resolve().parents[1] / "nasenergy" / "data" / "h200_sss_deployed_profile.csv.gz"


def networks(space: Any, sss_profile: Path = SSS_PROFILE) -> list[tuple[int, str]]:
    """``(official index, arch string)`` of every network of the table, in index order."""
    if space.name == "sss":
        with gzip.open(sss_profile, "rt", newline="") as f:
            indices = sorted({int(r["arch_index"]) for r in csv.DictReader(f)})
        return [(i, str(space.arch_at(i))) for i in indices]
    return [(space.index(a), str(a)) for a in space.deployed_classes()]


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``0 <= K < N``."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shard must look like K/N, e.g. 0/2; got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"shard {text!r}: need 0 <= K < N")
    return k, n


def done_keys(chunk_dir: Path) -> set[tuple[str, int]]:
    """``(dataset, arch_index)`` of every complete row in the CSVs of `chunk_dir`."""
    keys: set[tuple[str, int]] = set()
    for path in sorted(chunk_dir.glob("*.csv")):
        keys.update((r["dataset"], int(r["arch_index"])) for r in read_rows(path))
    return keys


def todo(nets: Sequence[tuple[int, str]], datasets: Sequence[str], done: set[tuple[str, int]], *,
         shard: tuple[int, int] = (0, 1), sample: int | None = None, sample_seed: int = 0,
         limit: int | None = None) -> list[tuple[str, int, str]]:
    """The ``(dataset, index, arch)`` still to compute, network by network (all datasets of one
    network together)."""
    chosen = list(nets)
    if sample is not None:  # in the sample's own (random) order, so that any prefix is a random sample
        chosen = random.Random(sample_seed).sample(chosen, min(sample, len(chosen)))
    chosen = chosen[shard[0]::shard[1]]
    work = [(d, i, a) for i, a in chosen for d in datasets if (d, i) not in done]
    return work if limit is None else work[:limit]


def _utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def cmd_measure(args: argparse.Namespace) -> int:
    import torch  # lazy: torch is needed only to compute

    device = resolve_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    space = get_space(args.space)
    chunk_dir = Path(args.chunk_dir)
    chunk_dir.mkdir(parents=True, exist_ok=True)
    done = done_keys(chunk_dir)
    for extra in args.skip_dir or ():
        done |= done_keys(Path(extra))
    work = todo(networks(space), args.dataset or DATASETS, done, shard=args.shard,
                sample=args.sample, sample_seed=args.sample_seed, limit=args.limit)
    print(f"{len(work)} rows to compute on {device} (shard {args.shard[0]}/{args.shard[1]})", flush=True)
    if not work:
        return 0
    warm_up(device)  # the first rows' costs then leave out torch's first-use costs
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    path = chunk_dir / f"{args.space}_{stamp}_{os.getpid()}_shard{args.shard[0]}of{args.shard[1]}.csv"
    start, n, longest = time.monotonic(), 0, 0.0
    with open(path, "x", newline="", encoding="utf-8") as f:  # never over an earlier chunk
        writer = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        writer.writeheader()
        f.flush()
        for dataset, index, arch in work:
            if time.monotonic() - start + 2 * longest > args.time_limit_s:
                print(f"time limit: stopping after {n} rows; run again to resume", flush=True)
                break
            t0 = time.monotonic()
            report = compute_arch_proxies(space, arch, dataset, seed=args.seed, init_seed=args.init_seed,
                                          device=device, batch_size=args.batch_size, data=args.data)
            writer.writerow(report_row(report, index, torch_version=torch.__version__, measured_at=_utc_now()))
            f.flush()
            n += 1
            longest = max(longest, time.monotonic() - t0)
            if args.verbose:
                print(f"{dataset} {index} {time.monotonic() - t0:.3f}s", flush=True)
    elapsed = time.monotonic() - start
    print(f"{n} rows in {elapsed:.1f} s ({elapsed / max(n, 1):.3f} s per row) -> {path}", flush=True)
    return 0


def merged_rows(rows: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """Rows with one per ``(dataset, arch_index)`` (the earliest ``measured_at``), sorted by dataset
    (NATS-Bench's order) then index."""
    best: dict[tuple[str, int], dict[str, str]] = {}
    for r in sorted(rows, key=lambda r: r["measured_at"]):
        best.setdefault((r["dataset"], int(r["arch_index"])), r)
    order = {d: k for k, d in enumerate(DATASETS)}
    return [best[k] for k in sorted(best, key=lambda k: (order.get(k[0], len(order)), k[1]))]


def provenance(rows: Sequence[dict[str, str]]) -> str:
    """A Markdown summary of how `rows` were computed."""
    def values(col: str) -> str:
        return ", ".join(sorted({r[col] for r in rows}))

    times = sorted(r["measured_at"] for r in rows)
    per_dataset = {d: sum(r["dataset"] == d for r in rows) for d in DATASETS}
    cost = {}
    for p in TABLE_PROXIES:
        xs = sorted(float(r[f"{p}_cost_s"]) for r in rows)
        cost[p] = xs[len(xs) // 2] if xs else float("nan")
    return "\n".join([
        f"| rows | {len(rows)} ({', '.join(f'{d}: {n}' for d, n in per_dataset.items())}) |",
        f"| device | {values('device')} |",
        f"| torch | {values('torch_version')} |",
        f"| computed | {times[0] if times else ''} to {times[-1] if times else ''} |",
        f"| batch | {values('data')}, batch size {values('batch_size')}, seed {values('seed')}; "
        f"weights: the builder's seeded default init, seed {values('init_seed')} |",
        "| median cost s | " + ", ".join(f"{p} {c:.3g}" for p, c in cost.items()) + " |",
    ])


def cmd_merge(args: argparse.Namespace) -> int:
    rows: list[dict[str, str]] = []
    for path in args.chunks:
        rows.extend(read_rows(Path(path)))
    if not rows:
        raise UsageError("no rows in the chunks given")
    rows = merged_rows(rows)
    out = Path(args.out) if args.out else default_table_path(args.space)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(buf.getvalue().encode("utf-8"))
    print(f"{len(rows)} rows -> {out}")
    print(provenance(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="experiments/proxies_table.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="compute proxies into chunk CSVs (resumable)")
    m.add_argument("--space", default="tss", choices=("tss", "sss"))
    m.add_argument("--dataset", action="append", choices=DATASETS, help="repeatable (default: all three)")
    m.add_argument("--chunk-dir", required=True, help="folder of the chunk CSVs (e.g. $OUT/tss)")
    m.add_argument("--skip-dir", action="append", help="repeatable: folders of earlier chunk CSVs whose rows count "
                   "as done (read only; e.g. chunks of earlier device calls carried in the working tree)")
    m.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    m.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    m.add_argument("--data", default=DEFAULT_DATA, choices=DATA_CHOICES)
    m.add_argument("--seed", type=int, default=0, help="seed of the input batch and labels")
    m.add_argument("--init-seed", type=int, default=0, help="seed of the networks' weights")
    m.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="K/N")
    m.add_argument("--sample", type=int, default=None, help="a seeded random sample of N networks")
    m.add_argument("--sample-seed", type=int, default=0)
    m.add_argument("--limit", type=int, default=None, help="compute at most this many rows")
    m.add_argument("--time-limit-s", type=float, default=float("inf"))
    m.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    m.add_argument("--verbose", action="store_true")
    m.set_defaults(func=cmd_measure)
    g = sub.add_parser("merge", help="merge chunk CSVs into the gzip table")
    g.add_argument("chunks", nargs="+")
    g.add_argument("--space", default="tss", choices=("tss", "sss"))
    g.add_argument("--out", default=None, help="default nasenergy/data/<space>_proxies.csv.gz")
    g.set_defaults(func=cmd_merge)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
