"""Rank correlation of each zero-cost proxy with NATS-Bench SSS accuracy, next to utilization, FLOPs and params.

The size space's counterpart of ``proxies_correlation.py``. Reads the recorded SSS proxy table
(default ``nasenergy/data/sss_proxies.csv.gz``, or chunk CSVs of ``experiments/proxies_table.py``:
the script works on whatever rows they hold), the embedded NATS-Bench SSS accuracies
(``nasenergy/data/benchmarks/sss_accuracy.csv.gz``: 90-epoch validation and test accuracy per
configuration) and the H200 utilization of each configuration (``h200_sss_deployed_profile.csv.gz``,
fp16 batch 1024, at the dataset's own input: 3x32x32 for CIFAR, 3x16x16 for ImageNet16-120, only
where the profile has that row). In SSS every configuration is its own deployed network, so there
is one level: one point per configuration.

For each dataset and accuracy (90-epoch validation, 90-epoch test), Spearman's rho of each
predictor with accuracy over ``all`` configurations of the table and over the ``top_half`` (accuracy
at or above the median), with a 95 % bootstrap interval (configurations resampled). Each predictor is
correlated over the configurations that have it (``n_networks``). Writes ``correlations.csv`` and
``README.md`` to ``--out`` (default ``results/proxies_correlation_sss``)::

    python experiments/proxies_correlation_sss.py [--table PATH ...] [--out DIR] [--note TEXT]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the same options, statistics and files as for TSS
from proxies_correlation import build_parser as correlation_parser  # noqa: E402
from proxies_correlation import correlate, load_tables, write_correlations  # noqa: E402

from nasenergy._cli import run_main  # noqa: E402
from nasenergy.proxies.table import TABLE_PROXIES  # noqa: E402
from search_spaces import DATASETS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = ROOT / "nasenergy" / "data" / "benchmarks" / "sss_accuracy.csv.gz"
PROFILE = ROOT / "nasenergy" / "data" / "h200_sss_deployed_profile.csv.gz"
DEFAULT_OUT = ROOT / "results" / "proxies_correlation_sss"
ACCURACY_COLUMNS = {
    ("cifar10", "valid"): "cifar10valid_valid_acc_90ep", ("cifar10", "test"): "cifar10_test_acc_90ep",
    ("cifar100", "valid"): "cifar100_valid_acc_90ep", ("cifar100", "test"): "cifar100_test_acc_90ep",
    ("ImageNet16-120", "valid"): "imagenet16_valid_acc_90ep", ("ImageNet16-120", "test"): "imagenet16_test_acc_90ep",
}
INPUT_SHAPE = {"cifar10": "3x32x32", "cifar100": "3x32x32", "ImageNet16-120": "3x16x16"}
PREDICTORS = (*TABLE_PROXIES, "utilization_fp16")
FIELDS = ("dataset", "accuracy", "subset", "predictor", "n_networks", "spearman_rho", "ci95_low", "ci95_high")


def read_accuracy(path: Path = ACCURACY) -> dict[int, dict[str, float]]:
    """``{arch_index: {column: accuracy}}`` of the embedded SSS table."""
    with gzip.open(path, "rt", newline="") as f:
        return {int(r["arch_index"]): {c: float(r[c]) if r[c] != "" else math.nan for c in ACCURACY_COLUMNS.values()}
                for r in csv.DictReader(f)}


def read_utilization(path: Path = PROFILE) -> dict[str, dict[int, float]]:
    """``{input shape: {arch_index: utilization}}`` of the profile's fp16 batch-1024 rows."""
    out: dict[str, dict[int, float]] = {}
    with gzip.open(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if r["precision"] == "fp16" and r["batch_size"] == "1024":
                out.setdefault(r["input_shape"], {})[int(r["arch_index"])] = float(r["utilization"])
    return out


def correlations(table: dict[tuple[str, int], dict[str, float]], accuracy: dict[int, dict[str, float]],
                 utilization: dict[str, dict[int, float]], *, draws: int = 200,
                 seed: int = 0) -> list[dict[str, object]]:
    """Every (dataset, accuracy, subset, predictor) correlation (see the module docstring)."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, object]] = []
    for dataset in DATASETS:
        nets = np.array(sorted(i for d, i in table if d == dataset))
        if len(nets) == 0:
            continue
        util = utilization.get(INPUT_SHAPE[dataset], {})
        values = {p: np.array([table[(dataset, int(i))][p] for i in nets]) for p in TABLE_PROXIES}
        values["utilization_fp16"] = np.array([util.get(int(i), math.nan) for i in nets])
        for kind in ("valid", "test"):
            acc = np.array([accuracy[int(i)][ACCURACY_COLUMNS[(dataset, kind)]] for i in nets])
            for subset in ("all", "top_half"):
                keep = np.ones(len(nets), bool) if subset == "all" else acc >= np.nanmedian(acc)
                for predictor in PREDICTORS:
                    x = values[predictor][keep]
                    rho, lo, hi = correlate(x, acc[keep], nets[keep], rng, draws)
                    out.append({"dataset": dataset, "accuracy": f"{kind}_90ep", "subset": subset,
                                "predictor": predictor, "n_networks": int((~np.isnan(x)).sum()),
                                "spearman_rho": round(rho, 4), "ci95_low": round(lo, 4), "ci95_high": round(hi, 4)})
    return out


def _cell(r: dict[str, object]) -> str:
    rho = float(str(r["spearman_rho"]))
    return f"{rho:.3f} [{float(str(r['ci95_low'])):.2f}, {float(str(r['ci95_high'])):.2f}]" if math.isfinite(rho) else "n/a"


def _shown(path: Path) -> str:
    """`path` relative to the repository where it lies inside it (the command as a user types it)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def write_readme(out: Path, rows: list[dict[str, object]], tables: Sequence[Path], note: str, draws: int) -> None:
    lines = ["# Zero-cost proxies against NATS-Bench accuracy (SSS)", ""]
    if note:
        lines += [f"**{note}**", ""]
    lines += [
        "Command: `python experiments/proxies_correlation_sss.py "
        + " ".join(f"--table {_shown(p)}" for p in tables) + (f" --note '{note}'" if note else "") + "`",
        "",
        "Spearman's rho of each predictor with the 90-epoch accuracy of NATS-Bench's size space (validation, "
        "test), one point per configuration, in brackets the 95 % bootstrap interval "
        f"({draws} draws resampling configurations). `top half`: configurations at or above the median accuracy "
        "of those included. Proxies are computed on each configuration at the dataset's input and class count "
        "(`nasenergy/data/README.md` says how); utilization is the H200 profile's fp16 batch-1024 figure at the "
        "dataset's own input, over the configurations the profile holds at that input (`n` column).",
        "",
    ]
    for dataset in DATASETS:
        sel = [r for r in rows if r["dataset"] == dataset]
        if not sel:
            continue
        lines += [f"## {dataset}", "",
                  "| predictor | n | valid, all | valid, top half | test, all | test, top half |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for predictor in PREDICTORS:
            mine = [r for r in sel if r["predictor"] == predictor]
            cells = [_cell(next(r for r in mine if r["accuracy"] == f"{kind}_90ep" and r["subset"] == subset))
                     for kind in ("valid", "test") for subset in ("all", "top_half")]
            n = max(int(str(r["n_networks"])) for r in mine if r["subset"] == "all")
            lines.append(f"| {predictor} | {n} | " + " | ".join(cells) + " |")
        lines.append("")
    (out / "README.md").write_text("\n".join(lines))


def run(args: argparse.Namespace) -> int:
    tables, table = load_tables(args.table, "sss")
    rows = correlations(table, read_accuracy(), read_utilization(), draws=args.draws, seed=args.seed)
    write_correlations(Path(args.out), rows, FIELDS)
    write_readme(Path(args.out), rows, tables, args.note, args.draws)
    print(f"{len(rows)} correlations -> {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    return correlation_parser("experiments/proxies_correlation_sss.py", __doc__.split("\n\n")[0], DEFAULT_OUT)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
