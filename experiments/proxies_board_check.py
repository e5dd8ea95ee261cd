"""Does the board that computed a recorded proxy row change its scores? Recompute rows on this
machine's CPU and compare.

The recorded tables were computed on GPUs of more than one model (their chunks name no board; the
device calls' logs in ``results/proxies_table/calls/`` do). For each ``LABEL=GLOB`` of chunk CSVs,
the first ``--per-board`` rows (files in name order, rows in file order, a degenerate row and a
dataset outside ``--datasets`` skipped) are computed again with the table's settings (batch,
data, seeds from the row) on the CPU, and the relative difference of every proxy is written.

Usage::

    python experiments/proxies_board_check.py --space sss \\
        H200='results/proxies_table/chunks/sss/sss_20261204*.csv' \\
        H100='results/proxies_table/chunks/sss/sss_20261205*.csv' \\
        --out results/proxies_table/board_check.csv
"""

from __future__ import annotations

import argparse
import csv
import glob
import sys
from pathlib import Path

from nasenergy.proxies.compute import compute_arch_proxies
from nasenergy.proxies.table import TABLE_PROXIES
from search_spaces import get_space


def pick_rows(pattern: str, n: int, datasets: set[str]) -> list[dict[str, str]]:
    """The first `n` usable rows of the chunks matching `pattern`."""
    rows: list[dict[str, str]] = []
    for path in sorted(glob.glob(pattern)):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if len(rows) < n and row["dataset"] in datasets and not row["reason"]:
                    rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("boards", nargs="+", help="LABEL=GLOB of the chunk CSVs one board computed")
    p.add_argument("--space", choices=("tss", "sss"), default="sss")
    p.add_argument("--per-board", type=int, default=4)
    p.add_argument("--datasets", default="cifar10,ImageNet16-120")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    space = get_space(args.space)
    out: list[dict[str, object]] = []
    for spec in args.boards:
        label, _, pattern = spec.partition("=")
        rows = pick_rows(pattern, args.per_board, set(args.datasets.split(",")))
        if not rows:
            print(f"error: no usable rows match {pattern!r}", file=sys.stderr)
            return 2
        for row in rows:
            report = compute_arch_proxies(space, row["arch"], row["dataset"], seed=int(row["seed"]),
                                          init_seed=int(row["init_seed"]), device="cpu",
                                          batch_size=int(row["batch_size"]), data=row["data"])
            for name in TABLE_PROXIES:
                recorded, cpu = float(row[name]), report[name].score
                out.append({"board": label, "dataset": row["dataset"], "arch": row["arch"], "proxy": name,
                            "recorded": recorded, "cpu": cpu,
                            "rel_diff": abs(cpu - recorded) / max(abs(recorded), 1e-300)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print("| board | proxy | networks | worst relative difference (recorded GPU vs CPU) |")
    print("|---|---|---|---|")
    for label in dict.fromkeys(r["board"] for r in out):
        for name in TABLE_PROXIES:
            mine = [float(r["rel_diff"]) for r in out if r["board"] == label and r["proxy"] == name]  # type: ignore[arg-type]
            print(f"| {label} | {name} | {len(mine)} | {max(mine):.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
