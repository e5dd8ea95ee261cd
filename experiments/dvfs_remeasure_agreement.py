"""How much the modelled energy-optimal clock of a network moves when the network is measured again.

The DVFS model takes each network's default-clock measurement (board power, throughput and the GPU
counters of its energy window: SM activity and DRAM bandwidth) and models its energy-optimal SM
clock. Two measurements of the same networks (two profiler runs, e.g. those in
``results/profile_agreement/power_samples/runs``) then give two optimal clocks and two energies at
them; their differences are what the measurement's noise costs the scored objectives. All
optima are **modelled** (the shipped H200 parameters, extrapolated from A100 sweeps) from
**measured** rows.

    python experiments/dvfs_remeasure_agreement.py EARLIER.csv[.gz] LATER.csv[.gz] [--out DIR]

Writes ``per_row.csv`` and ``README.md`` to ``--out`` (default
``results/dvfs_remeasure_agreement``).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path
from typing import Any, Sequence

from nasenergy._cli import OneLineParser, run_main
from nasenergy.dvfs.api import optimal_clock_for
from nasenergy.errors import UsageError
from nasenergy.hardware.recorded import measurement_from_row, read_profile

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_remeasure_agreement"


def paired_rows(earlier: Sequence[dict[str, str]], later: Sequence[dict[str, str]]) -> list[tuple[dict[str, str], dict[str, str]]]:
    """The rows of both runs for each (network, precision, batch size) both hold, in `later`'s order."""
    def key(r: dict[str, str]) -> tuple[str, str, str]:
        return r["canonical_arch"], r["precision"], r["batch_size"]

    first = {key(r): r for r in earlier}
    return [(first[key(r)], r) for r in later if key(r) in first]


def row_agreement(a: dict[str, str], b: dict[str, str]) -> dict[str, Any]:
    """Both measurements' modelled optima of one network and their differences."""
    oa, ob = (optimal_clock_for(measurement_from_row(r)) for r in (a, b))
    return {
        "canonical_arch": a["canonical_arch"], "precision": a["precision"],
        "optimal_sm_clock_mhz_a": oa.best.sm_clock_mhz, "optimal_sm_clock_mhz_b": ob.best.sm_clock_mhz,
        "clock_diff_mhz": ob.best.sm_clock_mhz - oa.best.sm_clock_mhz,
        "saving_pct_a": 100 * oa.energy_saving_frac, "saving_pct_b": 100 * ob.energy_saving_frac,
        "saving_diff_pp": 100 * (ob.energy_saving_frac - oa.energy_saving_frac),
        "default_energy_rel_diff": ob.default.energy_j_per_img / oa.default.energy_j_per_img - 1,
        "optimal_energy_rel_diff": ob.best.energy_j_per_img / oa.best.energy_j_per_img - 1,
        "sm_util_diff_pp": _diff(a, b, "sm_util_pct"), "dram_bw_util_diff_pp": _diff(a, b, "dram_bw_util_pct"),
    }


def _diff(a: dict[str, str], b: dict[str, str], name: str) -> float | str:
    return float(b[name]) - float(a[name]) if a.get(name) and b.get(name) else ""


def summary_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown table of the median and worst absolute differences."""
    def stats(name: str, scale: float = 1.0) -> tuple[float, float] | None:
        d = sorted(abs(float(r[name])) * scale for r in rows if r[name] != "")
        return (statistics.median(d), d[-1]) if d else None

    lines = ["| quantity | median abs. diff | worst abs. diff |", "|---|---|---|"]
    for label, name, scale, unit in (
            ("energy per image at the default clock (measured)", "default_energy_rel_diff", 100, "%"),
            ("energy per image at the optimal clock (modelled)", "optimal_energy_rel_diff", 100, "%"),
            ("optimal SM clock (modelled)", "clock_diff_mhz", 1, "MHz"),
            ("energy saving (modelled)", "saving_diff_pp", 1, "pp"),
            ("SM activity counter (measured)", "sm_util_diff_pp", 1, "pp"),
            ("DRAM bandwidth counter (measured)", "dram_bw_util_diff_pp", 1, "pp")):
        got = stats(name, scale)
        if got is not None:  # rows without counters have no counter differences
            lines.append(f"| {label} | {got[0]:.2f} {unit} | {got[1]:.2f} {unit} |")
    same = sum(1 for r in rows if r["clock_diff_mhz"] == 0)
    lines += ["", f"The optimal clock was the same in {same} of {len(rows)} rows."]
    return lines


def cmd(args: argparse.Namespace) -> int:
    for path in (args.earlier, args.later):
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
    pairs = paired_rows(read_profile(args.earlier), read_profile(args.later))
    if not pairs:
        raise UsageError("the two files share no network and setting")
    rows = [row_agreement(a, b) for a, b in pairs]
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "per_row.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    lines = ["# Modelled optimal clocks of networks measured twice", "",
             f"`{args.earlier.name}` against `{args.later.name}`: {len(rows)} rows (network and setting) in both. "
             "Each row's optimum is modelled (`nasenergy.dvfs.api.optimal_clock_for`, shipped H200 parameters, "
             "extrapolated from A100 sweeps) from its measured default-clock row; differences are later minus "
             "earlier.", "", "    python experiments/dvfs_remeasure_agreement.py EARLIER LATER --out DIR", "",
             *summary_lines(rows), ""]
    (args.out / "README.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("earlier", type=Path)
    p.add_argument("later", type=Path)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    return run_main(lambda: cmd(args))


if __name__ == "__main__":
    sys.exit(main())
