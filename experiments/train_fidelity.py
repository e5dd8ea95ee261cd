"""Fidelity of the trainer's cost: its measured time per epoch of TSS networks of cells 0-999
(``experiments/train_benchmark.py --stages fidelity``) against NATS-Bench's recorded time per
epoch of the same cells (CIFAR-10, the 200-epoch schedule; ``nats_tss_first1000_train_time``
in the shared data): Spearman's rank correlation with a bootstrap 95 % interval over the
networks, and the median ratio.

    python experiments/train_fidelity.py results/train_benchmark/cpu/fidelity.csv
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nasenergy.paths import shared_data_dir  # noqa: E402

RECORDED = "nats_tss_first1000_train_time__nats_bench_extractor.csv.gz"


def recorded_epoch_s(dataset: str = "cifar10", hp: str = "200") -> dict[int, float]:
    """NATS-Bench's recorded seconds per training epoch, by cell index."""
    with gzip.open(shared_data_dir() / RECORDED, "rt", newline="") as fh:
        return {int(r["arch_index"]): float(r["train_time_per_epoch_s"]) for r in csv.DictReader(fh)
                if r["dataset"] == dataset and r["hp"] == hp}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fidelity_csv", type=Path)
    parser.add_argument("--loop", default="trainer")
    parser.add_argument("--out", type=Path, default=None, help="summary JSON (default: beside the CSV)")
    args = parser.parse_args(argv)
    recorded = recorded_epoch_s()
    with open(args.fidelity_csv, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["loop"] == args.loop and int(r["arch_index"]) in recorded]
    ours = np.array([float(r["epoch_s"]) for r in rows])
    theirs = np.array([recorded[int(r["arch_index"])] for r in rows])
    rho = float(spearmanr(ours, theirs).statistic)
    rng = np.random.default_rng(0)
    boots = []
    for _ in range(5000):
        k = rng.integers(0, len(rows), len(rows))
        boots.append(float(spearmanr(ours[k], theirs[k]).statistic))
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    summary = {"networks": len(rows), "loop": args.loop, "spearman": rho, "spearman_95": [float(lo), float(hi)],
               "median_ratio_ours_over_recorded": float(np.median(ours / theirs)),
               "device": rows[0]["device_name"] if rows else None,
               "recorded": f"{RECORDED}: cifar10, hp 200, train_time_per_epoch_s (NATS-Bench's GPUs)"}
    out = args.out or args.fidelity_csv.with_name("fidelity_summary.json")
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
