"""How much of the size space's accuracy differences at the top is training noise.

The size space records one training per network (90-epoch), so its search accuracy (CIFAR-10
x-valid: trained on half the training set) carries the noise of that one training. NATS-Bench also
trained every network once more on the full training set (the 90-epoch test accuracy): the two
trainings are independent, so their disagreement bounds what any predictor of the search accuracy
from a network's widths can reach. Over the networks of the recorded H200 profile at 32x32 (the
searched subspace of ``experiments/search_quality.py``), for the networks at or above each accuracy
cut: their number, the Spearman correlation of the two trainings' accuracies, the standard
deviation of their difference and of the search accuracy itself.

Writes ``OUT/accuracy_noise.csv``::

    python experiments/sss_accuracy_noise.py [--out results/search_quality_sss]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from nasenergy.hardware.recorded import default_profile
from nasenergy.quality import default_floor_pct

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "nasenergy" / "data" / "benchmarks" / "sss_accuracy.csv.gz"
SEARCH, OTHER = "cifar10valid_valid_acc_90ep", "cifar10_test_acc_90ep"


def profiled_indices(input_shape: str = "3x32x32") -> set[int]:
    with gzip.open(default_profile("sss"), "rt", newline="") as fh:
        return {int(r["arch_index"]) for r in csv.DictReader(fh) if r["input_shape"] == input_shape}


def noise_rows(cuts_pct: list[float]) -> list[dict[str, float]]:
    keep = profiled_indices()
    with gzip.open(TABLE, "rt", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if int(r["arch_index"]) in keep]
    search = np.array([float(r[SEARCH]) for r in rows])
    other = np.array([float(r[OTHER]) for r in rows])
    out = []
    for cut in cuts_pct:
        m = search >= cut
        out.append({"accuracy_at_least_pct": cut, "networks": int(m.sum()),
                    "spearman_two_trainings": float(spearmanr(search[m], other[m])[0]),
                    "sd_difference_pt": float(np.std(search[m] - other[m])),
                    "sd_search_accuracy_pt": float(np.std(search[m]))})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "results" / "search_quality_sss")
    args = p.parse_args(argv)
    floor = default_floor_pct("sss", "cifar10")
    assert floor is not None
    rows = noise_rows([0.0, floor, 89.0, 89.5, 90.0])
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "accuracy_noise.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
    for r in rows:
        print(", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
