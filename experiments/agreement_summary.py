"""Summaries of ``profile_tss_space.py remeasure`` samples (their ``agreement.csv``).

For each sample, per precision and quantity (throughput, energy per image): the number of rows, the
median absolute relative difference (re-measured / recorded - 1), the signed median with its
quartiles, and the worst absolute difference. With two or more samples of the same networks
(re-measured on different boards), it also compares the re-measurements with one another, network
for network, on the rows both samples hold: the relative difference (later sample / earlier sample
- 1) and the Spearman correlation. A row whose recorded figure two independent re-measurements both
disagree with by a wide margin is then a recording outlier, not noise in one re-measurement.

All figures come from measured rows; this script only summarises them::

    python experiments/agreement_summary.py results/profile_agreement/h200_stratified/cifar10_32x32 \\
        results/profile_agreement/h200_stratified/cifar10_32x32_100 [--flag-pct 6]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.dvfs.validation import spearman

from lib.profile_rows import describe_pct

QUANTITIES = ("throughput", "energy")
REQUIRED = ("precision", "canonical_arch", "gpu_uuid_old") + tuple(
    f"{q}_{c}" for q in QUANTITIES for c in ("new", "rel_diff"))


def read_sample(folder: Path) -> dict[tuple[str, str], dict[str, str]]:
    """The rows of one sample's ``agreement.csv``, keyed by (precision, canonical_arch)."""
    path = folder / "agreement.csv"
    if not path.is_file():
        raise SystemExit(f"error: {path} not found (a folder written by `profile_tss_space.py remeasure`)")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise SystemExit(f"error: {path} lacks the column(s) {', '.join(missing)} "
                             "(not an agreement.csv of `profile_tss_space.py remeasure`)")
        rows = list(reader)
    for r in rows:
        for q in QUANTITIES:
            for column in (f"{q}_rel_diff", f"{q}_new"):
                try:
                    float(r[column] or "nan")
                except (TypeError, ValueError):
                    raise SystemExit(f"error: {path}: {column} of {r['canonical_arch']} is not a number: {r[column]!r}") from None
    return {(r["precision"], r["canonical_arch"]): r for r in rows}


def _values(rows: list[dict[str, str]], column: str) -> np.ndarray:
    return np.array([float(r[column]) for r in rows if r.get(column, "") != ""])


def _stat_cells(d: dict[str, float]) -> str:
    """The cells every table row shares: rows, median |d|, signed median (quartiles), worst |d|."""
    return (f"{int(d['rows'])} | {d['median_abs_pct']:.2f} % | {d['signed_median_pct']:+.2f} % "
            f"({d['q1_pct']:+.2f} .. {d['q3_pct']:+.2f} %) | {d['worst_abs_pct']:.2f} % |")


def sample_lines(name: str, sample: dict[tuple[str, str], dict[str, str]]) -> list[str]:
    lines = []
    for precision in sorted({p for p, _ in sample}):
        rows = [r for (p, _), r in sample.items() if p == precision]
        for q in QUANTITIES:
            diff = _values(rows, f"{q}_rel_diff")
            if len(diff):
                lines.append(f"| {name} | {precision} | {q} | {_stat_cells(describe_pct(diff))}")
    return lines


def between_lines(names: tuple[str, str], a: dict[tuple[str, str], dict[str, str]],
                  b: dict[tuple[str, str], dict[str, str]]) -> list[str]:
    """The two samples' re-measurements compared on the rows both hold (b / a - 1)."""
    lines = []
    shared = sorted(set(a) & set(b))
    for precision in sorted({p for p, _ in shared}):
        keys = [k for k in shared if k[0] == precision]
        for q in QUANTITIES:
            keys_q = [k for k in keys if a[k][f"{q}_new"] != "" and b[k][f"{q}_new"] != ""]
            if not keys_q:
                continue
            x = [float(a[k][f"{q}_new"]) for k in keys_q]
            y = [float(b[k][f"{q}_new"]) for k in keys_q]
            cells = _stat_cells(describe_pct(np.array(y) / np.array(x) - 1.0))
            lines.append(f"| {names[1]} / {names[0]} | {precision} | {q} | {cells} {spearman(x, y):.4f} |")
    return lines


def flagged_lines(names: list[str], samples: list[dict[tuple[str, str], dict[str, str]]], flag_pct: float) -> list[str]:
    """Rows of the shared networks where any sample differs from the recorded figure by over flag_pct."""
    lines = []
    shared = sorted(set.intersection(*(set(s) for s in samples)))
    for key in shared:
        for q in QUANTITIES:
            diffs = [s[key][f"{q}_rel_diff"] for s in samples]
            if "" in diffs:
                continue
            pct = [100.0 * float(v) for v in diffs]
            if max(abs(v) for v in pct) > flag_pct:
                each = ", ".join(f"{n} {v:+.2f} %" for n, v in zip(names, pct))
                agree = all(abs(v) > flag_pct / 2 and np.sign(v) == np.sign(pct[0]) for v in pct)
                lines.append(f"- {key[0]} {q} `{key[1]}` (recorded on `{samples[0][key]['gpu_uuid_old'][:12]}`): "
                             f"{each}{' (every re-measurement on the same side: the recorded row is off)' if agree else ''}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path, nargs="+", help="folders holding agreement.csv")
    parser.add_argument("--flag-pct", type=float, default=6.0,
                        help="list shared rows where a sample differs from the recorded figure by more (default 6)")
    args = parser.parse_args(argv)
    if args.flag_pct <= 0:
        parser.error("--flag-pct must be positive")
    names = [p.name for p in args.samples]
    samples = [read_sample(p) for p in args.samples]
    print("| sample | precision | quantity | rows | median abs. diff | signed median (quartiles) | worst abs. diff |")
    print("|---|---|---|---:|---:|---|---:|")
    for name, sample in zip(names, samples):
        print("\n".join(sample_lines(name, sample)))
    if len(samples) > 1:
        print("\nRe-measurements compared with one another (later / earlier - 1), rows both samples hold:\n")
        print("| samples | precision | quantity | rows | median abs. diff | signed median (quartiles) | worst abs. diff | Spearman |")
        print("|---|---|---|---:|---:|---|---:|---:|")
        for i in range(1, len(samples)):
            print("\n".join(between_lines((names[0], names[i]), samples[0], samples[i])))
        flagged = flagged_lines(names, samples, args.flag_pct)
        print(f"\nShared rows differing from the recorded figure by over {args.flag_pct:g} % in any sample:\n")
        print("\n".join(flagged) if flagged else "(none)")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
