"""The row logic of `experiments/profile_tss_space.py` (no GPU needed): complete rows of a profile
or chunk CSV, merging chunks into a profile, the agreement table of two measurements and the
per-class seconds of a ``measure --verbose`` log."""

from __future__ import annotations

import argparse
import collections
import csv
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from nasenergy.dvfs.validation import spearman  # NaN where undefined (a constant side, < 3 pairs)
from nasenergy.hardware.energy_window import MIN_BUSY_FRAC
from nasenergy.hardware.recorded import OPTIONAL_COLUMNS, read_profile, row_busy_fraction


def complete_rows(path: Path) -> list[dict[str, str]]:
    """The complete rows of a profile or chunk CSV (a run killed mid-write may leave a partial
    last line, which is dropped)."""

    return [r for r in read_profile(path) if None not in r.values() and None not in r]


def merge_rows(profile_rows: list[dict[str, str]], chunk_rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """Profile rows plus new chunk rows (earliest measurement of each key), sorted. Rows name their
    class by its member of smallest index, so rows of one class have equal names."""
    def key(r: dict[str, str]) -> tuple[str, str, int, str]:
        return r["canonical_arch"], r["precision"], int(r["batch_size"]), r["input_shape"]

    merged = {key(r): r for r in profile_rows}
    for r in sorted(chunk_rows, key=lambda r: r["measured_at"]):
        merged.setdefault(key(r), r)
    return sorted(merged.values(), key=lambda r: (int(r["arch_index"]), r["precision"],
                                                  int(r["batch_size"]), r["input_shape"]))


def fill_empty(rows: list[dict[str, str]], values: dict[str, str]) -> list[dict[str, str]]:
    """`rows` with each column in `values` set where it is empty (for runs whose settings were
    recorded outside the CSV)."""
    return [{**r, **{k: v for k, v in values.items() if not r.get(k)}} for r in rows]


def parse_fill(text: str) -> tuple[str, str]:
    """``"COLUMN=VALUE"`` for an optional profile column."""

    key, sep, value = text.partition("=")
    if not sep or key not in OPTIONAL_COLUMNS:
        raise argparse.ArgumentTypeError(
            f"--fill wants COLUMN=VALUE with COLUMN one of {', '.join(OPTIONAL_COLUMNS)}; got {text!r}")
    return key, value


def steady_rows(rows: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """``(kept, starved)``: a row whose energy window ran below `MIN_BUSY_FRAC` of its timed
    throughput (the device idled inside the window, so its energy holds idle energy) is starved."""
    kept, starved = [], []
    for r in rows:
        frac = row_busy_fraction(r)
        (starved if frac is not None and frac < MIN_BUSY_FRAC else kept).append(r)
    return kept, starved


def agreement_row(arch: str, throughput_old: float, throughput_new: float, energy_old: float | None,
                  energy_new: float | None, measured: tuple[str, str], gpu_uuid: tuple[str, str],
                  counters: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """One row of an agreement table: a network's earlier and later figures and their relative
    differences (later / earlier - 1); `counters`: GPU counter name -> (earlier, later) percent,
    whose differences are in percentage points (``<name>_diff_pp``)."""
    pp = {f"{name}_diff_pp": float(b) - float(a) if a and b else ""
          for name, (a, b) in (counters or {}).items()}
    return {
        "canonical_arch": arch, "throughput_old": throughput_old, "throughput_new": throughput_new,
        "throughput_rel_diff": throughput_new / throughput_old - 1,
        "energy_old": energy_old, "energy_new": energy_new,
        "energy_rel_diff": energy_new / energy_old - 1 if energy_old and energy_new else "",
        "measured_old": measured[0], "measured_new": measured[1],
        "gpu_uuid_old": gpu_uuid[0], "gpu_uuid_new": gpu_uuid[1], **pp,
    }


def random_pick(n_items: int, n: int, seed: int) -> list[int]:
    """`n` distinct positions of `n_items`, seeded, in increasing order."""
    import numpy as np

    return sorted(int(i) for i in np.random.default_rng(seed).choice(n_items, size=min(n, n_items), replace=False))


def stratified_pick(values: list[float], n: int, seed: int) -> list[int]:
    """One position from each of `n` strata of equal size of `values` sorted (all of them when
    there are fewer than `n`), seeded, in increasing order: a sample that spans the whole range."""
    import numpy as np

    order = np.argsort(np.asarray(values, dtype=float), kind="stable")
    if n >= len(order):
        return sorted(int(i) for i in order)
    rng = np.random.default_rng(seed)
    return sorted(int(rng.choice(stratum)) for stratum in np.array_split(order, n))


def describe_pct(diff: Any) -> dict[str, float]:
    """Median |d|, signed median, quartiles and worst |d| of relative differences, in percent."""
    import numpy as np

    pct = 100.0 * np.asarray(diff, dtype=float)
    return {"rows": float(len(pct)), "median_abs_pct": float(np.median(np.abs(pct))),
            "signed_median_pct": float(np.median(pct)), "q1_pct": float(np.percentile(pct, 25)),
            "q3_pct": float(np.percentile(pct, 75)), "worst_abs_pct": float(np.max(np.abs(pct)))}


def _agreement_lines(rows: list[dict[str, Any]], label: str) -> list[str]:
    lines = []
    for q in ("throughput", "energy"):
        ok = [r for r in rows if r[f"{q}_rel_diff"] != ""]
        if ok:
            d = describe_pct([float(r[f"{q}_rel_diff"]) for r in ok])
            rho = spearman([float(r[f"{q}_old"]) for r in ok], [float(r[f"{q}_new"]) for r in ok])
            lines.append(f"| {label}{q} | {len(ok)} | {d['median_abs_pct']:.2f} % | {d['worst_abs_pct']:.2f} % | "
                         f"{rho:.4f} |")
    return lines


def write_agreement(out: Path, out_rows: list[dict[str, Any]], what: str) -> int:
    """Writes ``agreement.csv`` and a ``README.md`` with the median and worst differences and the
    Spearman correlation of recorded and new figures (per precision where the rows name one)."""
    if not out_rows:
        print("error: no network is in both measurements", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "agreement.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out_rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out_rows)
    lines = ["# Profile agreement", "",
             f"{what}; relative difference = new / recorded - 1. All figures measured.", "",
             "| quantity | rows | median abs. rel. diff | worst abs. rel. diff | Spearman (recorded, new) |",
             "|---|---|---|---|---|"]
    precisions = sorted({str(r.get("precision", "")) for r in out_rows})
    for precision in precisions:
        lines += _agreement_lines([r for r in out_rows if str(r.get("precision", "")) == precision],
                                  f"{precision} " if precision else "")
    same = [r.get("gpu_uuid_old") == r.get("gpu_uuid_new") for r in out_rows if r.get("gpu_uuid_old")]
    if any(same) and not all(same):  # some rows re-measured on the recording board, some on others
        lines += ["", "The same rows split by board (the board that recorded the row, or another):", "",
                  "| quantity | rows | median abs. rel. diff | worst abs. rel. diff | Spearman (recorded, new) |",
                  "|---|---|---|---|---|"]
        for label, pick in (("same board", True), ("other board", False)):
            for precision in precisions:
                lines += _agreement_lines(
                    [r for r in out_rows if str(r.get("precision", "")) == precision and r.get("gpu_uuid_old")
                     and (r["gpu_uuid_old"] == r["gpu_uuid_new"]) == pick],
                    f"{label}, {precision} " if precision else f"{label}, ")
    counters = [k for k in out_rows[0] if k.endswith("_diff_pp")]
    if any(r[k] != "" for r in out_rows for k in counters):
        lines += ["", "| GPU counter | median abs. diff | 90th percentile | worst |", "|---|---|---|---|"]
        for k in counters:
            d = sorted(abs(float(r[k])) for r in out_rows if r[k] != "")
            if d:
                lines.append(f"| {k.removesuffix('_diff_pp')} | {statistics.median(d):.1f} pp | "
                             f"{d[int(0.9 * (len(d) - 1))]:.1f} pp | {d[-1]:.1f} pp |")
    lines.append("")
    (out / "README.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


CLASS_LINE = re.compile(r"^(\d+) (\S+) ([\d.]+) s$")
PHASE_LINE = re.compile(r"^\s+(\w+): (.*) s$")


def class_seconds(lines: list[str]) -> dict[str, Any]:
    """Per-class wall seconds of a ``measure --verbose`` log (the first class, which carries the
    process's warm-up, left out), with the median seconds of each meter phase per setting."""
    per_class, phases = [], collections.defaultdict(list)
    for line in lines:
        if m := CLASS_LINE.match(line):
            per_class.append(float(m.group(3)))
        elif (m := PHASE_LINE.match(line)) and len(per_class) >= 1:
            for part in m.group(2).split(", "):
                name, value = part.rsplit(" ", 1)
                phases[f"{m.group(1)} {name}"].append(float(value))
    rest = per_class[1:]
    return {"classes": len(per_class),
            "median_s": statistics.median(rest) if rest else None,
            "mean_s": statistics.fmean(rest) if rest else None,
            **{f"{k} median_s": statistics.median(v) for k, v in phases.items()}}
