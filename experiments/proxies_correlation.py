"""Rank correlation of each zero-cost proxy with NATS-Bench accuracy, next to utilization, FLOPs and params.

Reads a recorded proxy table (default ``nasenergy/data/tss_proxies.csv.gz``; or any chunk CSVs of
``experiments/proxies_table.py``: the script works on whatever rows they hold), the embedded
NATS-Bench accuracies (``nasenergy/data/benchmarks/tss_accuracy.csv.gz``: 12-epoch validation
accuracy, 200-epoch test accuracy, per cell) and the H200 utilization of each deployed network
(``nasenergy/data/h200_tss_deployed_profile.csv.gz``, fp16 batch 1024 and fp32 batch 256, measured
at the CIFAR input 3x32x32 only: the ImageNet16-120 rows use those figures too). Every TSS cell is
mapped to its deployed network's row (`SearchSpace.deployed_representative`), so a cell is scored
by the proxies of the network it deploys to.

For each dataset of the table and schedule (12, 200 epochs), Spearman's rho of each predictor with
accuracy, over

* ``all``: every cell whose deployed network has a row;
* ``top_half``: those of them with accuracy at or above their median (the better half),

at two levels: ``cell`` (every cell a point, as the published figures over NAS-Bench-201's 15,625
cells) and ``network`` (one point per deployed network, accuracy averaged over its cells), each
with a 95 % bootstrap interval (networks resampled, 200 draws). Degenerate scores (``-inf``) rank
last. Writes ``correlations.csv`` and ``README.md`` to ``--out`` (default
``results/proxies_correlation``)::

    python experiments/proxies_correlation.py [--table PATH ...] [--out DIR] [--note TEXT]
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

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.proxies.table import TABLE_PROXIES, default_table_path, read_rows
from search_spaces import DATASETS, get_space

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = ROOT / "nasenergy" / "data" / "benchmarks" / "tss_accuracy.csv.gz"
PROFILE = ROOT / "nasenergy" / "data" / "h200_tss_deployed_profile.csv.gz"
DEFAULT_OUT = ROOT / "results" / "proxies_correlation"
ACCURACY_COLUMNS = {
    ("cifar10", 12): "cifar10valid_valid_acc_12ep", ("cifar10", 200): "cifar10_test_acc_200ep",
    ("cifar100", 12): "cifar100_valid_acc_12ep", ("cifar100", 200): "cifar100_test_acc_200ep",
    ("ImageNet16-120", 12): "imagenet16_valid_acc_12ep", ("ImageNet16-120", 200): "imagenet16_test_acc_200ep",
}
UTILIZATION = (("utilization_fp16", "fp16", "1024", "3x32x32"), ("utilization_fp32", "fp32", "256", "3x32x32"),
               ("utilization_fp16_16x16", "fp16", "1024", "3x16x16"), ("utilization_fp32_16x16", "fp32", "256", "3x16x16"))
"""Utilization predictors: (name, precision, batch size, input shape of the profile rows). The
16x16 ones are ImageNet16-120's own input and count only for that dataset."""
OWN_INPUT_ONLY = {"utilization_fp16_16x16": "ImageNet16-120", "utilization_fp32_16x16": "ImageNet16-120"}
PREDICTORS = (*TABLE_PROXIES, *(u[0] for u in UTILIZATION))
FIELDS = ("dataset", "epochs", "subset", "level", "predictor", "n_cells", "n_networks", "spearman_rho",
          "ci95_low", "ci95_high")


def read_table(paths: Sequence[Path]) -> dict[tuple[str, int], dict[str, float]]:
    """``(dataset, arch_index) -> {proxy: score}`` from tables or chunk CSVs (first row wins)."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    for path in paths:
        for r in read_rows(path):
            out.setdefault((r["dataset"], int(r["arch_index"])), {p: float(r[p]) for p in TABLE_PROXIES})
    return out


def read_accuracy(path: Path = ACCURACY) -> dict[str, np.ndarray]:
    """Each accuracy column as an array over official cell indices."""
    with gzip.open(path, "rt", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["arch_index"]))
    return {c: np.array([float(r[c]) if r[c] != "" else math.nan for r in rows]) for c in ACCURACY_COLUMNS.values()}


def read_utilization(path: Path = PROFILE) -> dict[str, dict[int, float]]:
    """``{predictor: {representative index: utilization}}`` from the deployed profile."""
    out: dict[str, dict[int, float]] = {u[0]: {} for u in UTILIZATION}
    with gzip.open(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            for name, precision, batch, shape in UTILIZATION:
                if r["precision"] == precision and r["batch_size"] == batch and r["input_shape"] == shape:
                    out[name][int(r["arch_index"])] = float(r["utilization"])
    return out


def _rank(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata  # lazy: scipy only for the statistics

    return rankdata(x)


def _rho(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(_rank(x)) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(np.corrcoef(_rank(x), _rank(y))[0, 1])


def correlate(x: np.ndarray, y: np.ndarray, groups: np.ndarray, rng: np.random.Generator,
              draws: int) -> tuple[float, float, float]:
    """Spearman's rho of `x` and `y` and a bootstrap interval resampling the `groups` (networks)."""
    ok = ~np.isnan(x) & ~np.isnan(y)
    x, y, groups = x[ok], y[ok], groups[ok]
    point = _rho(x, y)
    if len(x) == 0:
        return point, math.nan, math.nan
    ids, inverse = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inverse == k) for k in range(len(ids))]
    boots = []
    for _ in range(draws):
        pick = np.concatenate([members[k] for k in rng.integers(len(ids), size=len(ids))])
        b = _rho(x[pick], y[pick])
        if math.isfinite(b):
            boots.append(b)
    lo, hi = np.percentile(boots, [2.5, 97.5]) if boots else (math.nan, math.nan)
    return point, float(lo), float(hi)


def correlations(table: dict[tuple[str, int], dict[str, float]], accuracy: dict[str, np.ndarray],
                 utilization: dict[str, dict[int, float]], rep_index: np.ndarray, *, draws: int = 200,
                 seed: int = 0) -> list[dict[str, object]]:
    """Every (dataset, epochs, subset, level, predictor) correlation (see the module docstring)."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, object]] = []
    for dataset in DATASETS:
        cells = np.array([i for i in range(len(rep_index)) if (dataset, int(rep_index[i])) in table])
        if len(cells) == 0:
            continue
        groups = rep_index[cells]
        values = {p: np.array([table[(dataset, int(g))][p] for g in groups]) for p in TABLE_PROXIES}
        for name, by_rep in utilization.items():
            own = OWN_INPUT_ONLY.get(name, dataset) == dataset
            values[name] = np.array([by_rep.get(int(g), math.nan) if own else math.nan for g in groups])
        for epochs in (12, 200):
            acc = accuracy[ACCURACY_COLUMNS[(dataset, epochs)]][cells]
            for subset in ("all", "top_half"):
                keep = np.ones(len(cells), bool) if subset == "all" else acc >= np.nanmedian(acc)
                for level in ("cell", "network"):
                    g = groups[keep]
                    if level == "cell":
                        y, cols, gg = acc[keep], {p: v[keep] for p, v in values.items()}, g
                    else:
                        nets, inv = np.unique(g, return_inverse=True)
                        y = np.bincount(inv, weights=acc[keep]) / np.bincount(inv)
                        first = np.array([np.flatnonzero(inv == k)[0] for k in range(len(nets))])
                        cols, gg = {p: v[keep][first] for p, v in values.items()}, nets
                    for predictor in PREDICTORS:
                        rho, lo, hi = correlate(cols[predictor], y, gg, rng, draws)
                        out.append({"dataset": dataset, "epochs": epochs, "subset": subset, "level": level,
                                    "predictor": predictor, "n_cells": int((~np.isnan(values[predictor][keep])).sum()),
                                    "n_networks": len(np.unique(g[~np.isnan(values[predictor][keep])])),
                                    "spearman_rho": round(rho, 4),
                                    "ci95_low": round(lo, 4), "ci95_high": round(hi, 4)})
    return out


def write_readme(out: Path, rows: list[dict[str, object]], tables: Sequence[Path], note: str, draws: int) -> None:
    lines = ["# Zero-cost proxies against NATS-Bench accuracy (TSS)", ""]
    if note:
        lines += [f"**{note}**", ""]
    lines += [
        "Command: `python experiments/proxies_correlation.py "
        + " ".join(f"--table {p}" for p in tables) + (f" --note '{note}'" if note else "") + "`",
        "",
        "Spearman's rho of each predictor with accuracy (12 epochs: NATS-Bench's validation accuracy; 200 "
        "epochs: test accuracy), every cell a point (`cell` level), in brackets the 95 % bootstrap interval "
        f"({draws} draws resampling deployed networks). `top_half`: cells at or above the median accuracy of "
        "those included. Proxies are computed on each cell's deployed network at the dataset's input and class "
        "count; utilization is the H200 profile's at 3x32x32 for every dataset, and for ImageNet16-120 also at its own "
        "3x16x16 input (`_16x16`, over the networks the 16x16 profile holds so far). `correlations.csv` also has "
        "the `network` level (one point per deployed network). FLOPs and params are the deployed network's, "
        "which for cells with dead edges are smaller than NATS-Bench's figures of the network as built.",
        "",
    ]
    for dataset in DATASETS:
        sel = [r for r in rows if r["dataset"] == dataset and r["level"] == "cell"]
        if not sel:
            continue
        n_cells = max(int(r["n_cells"]) for r in sel)
        n_nets = max(int(r["n_networks"]) for r in sel)
        lines += [f"## {dataset} ({n_cells} cells, {n_nets} deployed networks)", "",
                  "| predictor | 12 ep, all | 12 ep, top half | 200 ep, all | 200 ep, top half |",
                  "| --- | --- | --- | --- | --- |"]
        for predictor in PREDICTORS:
            mine = [r for r in sel if r["predictor"] == predictor and r["subset"] == "all"]
            n_mine = max(int(r["n_networks"]) for r in mine)
            if n_mine == 0:
                continue
            label = predictor if n_mine == n_nets else f"{predictor} ({n_mine} networks)"
            cells = []
            for epochs in (12, 200):
                for subset in ("all", "top_half"):
                    r = next(r for r in sel if r["epochs"] == epochs and r["subset"] == subset
                             and r["predictor"] == predictor)
                    cells.append(f"{r['spearman_rho']:.3f} [{r['ci95_low']:.2f}, {r['ci95_high']:.2f}]"
                                 if math.isfinite(float(r["spearman_rho"])) else "n/a")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "Published figures for scale (NAS-Bench-201, CIFAR-10, all 15,625 cells, networks as built, real "
        "CIFAR batches): synflow about 0.74 and jacov about 0.73 (Abdelfattah et al. 2021), NASWOT about 0.8 "
        "(Mellor et al. 2021), FLOPs and params about 0.8.",
        "",
    ]
    (out / "README.md").write_text("\n".join(lines))


def load_tables(given: Sequence[str] | None, space: str) -> tuple[list[Path], dict[tuple[str, int], dict[str, float]]]:
    """The proxy tables to read (`given`, else the space's shipped one) and their rows.

    Raises:
        UsageError: a table is missing or they hold no rows.
    """
    tables = [Path(p) for p in given] if given else [default_table_path(space)]
    for p in tables:
        if not p.is_file():
            hint = " --space sss" if space == "sss" else ""
            raise UsageError(f"no proxy table at {p} (build it with experiments/proxies_table.py{hint})")
    table = read_table(tables)
    if not table:
        raise UsageError("the proxy table has no rows")
    return tables, table


def write_correlations(out: Path, rows: list[dict[str, object]], fields: Sequence[str]) -> None:
    """``correlations.csv`` in `out` (made if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "correlations.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields))
        w.writeheader()
        w.writerows(rows)


def run(args: argparse.Namespace) -> int:
    tables, table = load_tables(args.table, "tss")
    space = get_space("tss")
    rep_index = np.array([space.index(space.deployed_representative(a)) for a in space.enumerate()])
    rows = correlations(table, read_accuracy(), read_utilization(), rep_index, draws=args.draws, seed=args.seed)
    write_correlations(Path(args.out), rows, FIELDS)
    write_readme(Path(args.out), rows, tables, args.note, args.draws)
    print(f"{len(rows)} correlations -> {args.out}")
    return 0


def build_parser(prog: str = "experiments/proxies_correlation.py", description: str = __doc__.split("\n\n")[0],
                 default_out: Path = DEFAULT_OUT) -> argparse.ArgumentParser:
    """The options of a correlation script (this one's, or the size space's with its own defaults)."""
    p = OneLineParser(prog=prog, description=description)
    p.add_argument("--table", action="append", help="proxy table or chunk CSV (repeatable; default the shipped one)")
    p.add_argument("--out", default=str(default_out))
    p.add_argument("--draws", type=int, default=200, help="bootstrap draws (default 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument("--note", default="", help="a line printed at the top of the README (e.g. 'a sample')")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
