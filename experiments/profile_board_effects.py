"""Board effects in a recorded profile: how much each GPU board's figures differ, network for network.

A recorded profile is measured over several device calls, each on whatever boards the call was
given; every row names its board (``gpu_uuid``). The classes a board measured are a random share
of the space, so its rows cannot be compared with another board's directly. This script fits, per
setting (precision), one least-squares model of log energy per image (and of log throughput) on
the network's own description (the operation on each of the six edges, log FLOPs, log params, the
memory format) plus one offset per board; a board's offset, as a percentage against the board with
the most rows, is its effect. The standard error comes from the fit's residuals.

With ``--reference`` (the ``reference_*.csv`` files that ``profile_tss_space.py measure --reference
N`` writes: the profile's earliest classes re-measured on each call's boards) it also gives each
re-measuring board's offset network for network (``paired_offsets.csv``), which the fit can only
estimate.

Writes ``board_effects.csv`` and ``README.md`` to ``--out`` (default
``results/profile_agreement/boards``)::

    python experiments/profile_board_effects.py [--profile PROFILE] [--reference reference_*.csv ...]
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.hardware.recorded import DEPLOYED_PROFILE, read_profile

ROOT = Path(__file__).resolve().parent.parent
OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
COLUMNS = ("input_shape", "precision", "quantity", "board", "rows", "effect_pct", "stderr_pct", "reference_board")


def _features(row: dict[str, str]) -> list[float]:
    ops = re.findall(r"([a-z_0-9]+)~\d", row["canonical_arch"])
    onehot = [0.0] * (len(OPS) * len(ops))
    for i, op in enumerate(ops):
        onehot[i * len(OPS) + OPS.index(op)] = 1.0
    return onehot + [np.log(float(row["flops_per_img"])), np.log(float(row["params"])),
                     1.0 if row.get("memory_format") == "contiguous" else 0.0]


def _shape_order(shape: str) -> int:
    """Larger inputs first (3x32x32 before ImageNet16-120's 3x16x16)."""
    return -int(shape.rsplit("x", 1)[-1]) if shape else 0


def board_effects(rows: list[dict[str, str]], precision: str, input_shape: str | None = None) -> list[dict[str, object]]:
    """One row per (quantity, board): the board's effect in percent against the reference board,
    over the rows at `precision` (and at `input_shape`, where given)."""
    rows = [r for r in rows if r["precision"] == precision and r.get("gpu_uuid")
            and (input_shape is None or r.get("input_shape") == input_shape)]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["gpu_uuid"]] = counts.get(r["gpu_uuid"], 0) + 1
    boards = sorted(counts, key=lambda b: (-counts[b], b))
    if len(boards) < 2:
        return []
    x = np.array([_features(r) + [1.0 if r["gpu_uuid"] == b else 0.0 for b in boards[1:]] for r in rows])
    out = []
    for quantity, column in (("energy_j_per_img", "energy_j_per_img"), ("throughput_img_per_s", "throughput_img_per_s")):
        y = np.log(np.array([float(r[column]) for r in rows]))
        coef, *_ = np.linalg.lstsq(x, y, rcond=None)
        resid = y - x @ coef
        dof = max(1, len(y) - np.linalg.matrix_rank(x))
        cov = (resid @ resid / dof) * np.linalg.pinv(x.T @ x)
        k = len(boards) - 1
        effects, errors = coef[-k:], np.sqrt(np.diag(cov)[-k:])
        out.append({"input_shape": input_shape or "", "precision": precision, "quantity": quantity, "board": boards[0], "rows": counts[boards[0]],
                    "effect_pct": 0.0, "stderr_pct": 0.0, "reference_board": boards[0]})
        for b, e, s in zip(boards[1:], effects, errors):
            out.append({"input_shape": input_shape or "", "precision": precision, "quantity": quantity, "board": b, "rows": counts[b],
                        "effect_pct": round(100 * float(np.expm1(e)), 2), "stderr_pct": round(100 * float(s), 2),
                        "reference_board": boards[0]})
    return out


PAIRED_COLUMNS = ("input_shape", "precision", "quantity", "board", "pairs", "median_ratio_pct", "iqr_low_pct", "iqr_high_pct")


def paired_offsets(profile_rows: list[dict[str, str]], reference_rows: list[dict[str, str]]) -> list[dict[str, object]]:
    """Board offsets from re-measured reference classes (``measure --reference N``), network for
    network: per (precision, re-measuring board), the median and quartiles of reference / profile - 1
    over the classes both hold. Exact pairs, so far tighter than the fitted effects."""
    recorded = {(r["canonical_arch"], r["precision"], r.get("input_shape", "")): r for r in profile_rows}
    ratios: dict[tuple[str, str, str], list[float]] = {}
    for r in reference_rows:
        old = recorded.get((r["canonical_arch"], r["precision"], r.get("input_shape", "")))
        if old is None:
            continue
        for quantity in ("energy_j_per_img", "throughput_img_per_s"):
            if r.get(quantity) and old.get(quantity):
                key = (r.get("input_shape", ""), r["precision"], quantity, r.get("gpu_uuid", ""))
                ratios.setdefault(key, []).append(float(r[quantity]) / float(old[quantity]) - 1)
    out = []
    for (shape, precision, quantity, board), values in sorted(ratios.items(), key=lambda kv: (_shape_order(kv[0][0]), kv[0])):
        q1, med, q3 = np.percentile(values, [25, 50, 75])
        out.append({"input_shape": shape, "precision": precision, "quantity": quantity, "board": board, "pairs": len(values),
                    "median_ratio_pct": round(100 * float(med), 2), "iqr_low_pct": round(100 * float(q1), 2),
                    "iqr_high_pct": round(100 * float(q3), 2)})
    return out


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", type=Path, default=DEPLOYED_PROFILE)
    p.add_argument("--out", type=Path, default=ROOT / "results" / "profile_agreement" / "boards")
    p.add_argument("--reference", type=Path, nargs="*", default=[], metavar="CSV",
                   help="reference_*.csv files of `profile_tss_space.py measure --reference N`: adds paired offsets")
    args = p.parse_args(argv)

    def run() -> int:
        rows = read_profile(args.profile)
        table = [e for shape, precision in sorted({(r["input_shape"], r["precision"]) for r in rows},
                                                key=lambda sp: (_shape_order(sp[0]), sp))
                 for e in board_effects(rows, precision, shape)]
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "board_effects.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(table)
        lines = ["# Board effects in the recorded profile", "",
                 f"`python experiments/profile_board_effects.py --profile {args.profile.name}`: {len(rows)} rows. "
                 "Per input and precision, log energy per image and log throughput are fitted on each network's own "
                 "description (operation per edge, log FLOPs, log params, memory format) plus one offset per "
                 "board; the table gives each board's offset against the board with the most rows (from "
                 "measured figures; the effect itself is a fitted estimate).", "",
                 "| input | precision | quantity | board | rows | effect | std. error |", "|---|---|---|---|---:|---:|---:|"]
        for e in table:
            lines.append(f"| {e['input_shape']} | {e['precision']} | {e['quantity']} | `{str(e['board'])[:12]}` | {e['rows']} | "
                         f"{e['effect_pct']:+.2f} % | {e['stderr_pct']:.2f} % |")
        if args.reference:
            refs = [r for path in args.reference for r in read_profile(path)]
            paired = paired_offsets(rows, refs)
            with open(args.out / "paired_offsets.csv", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=PAIRED_COLUMNS, lineterminator="\n")
                w.writeheader()
                w.writerows(paired)
            lines += ["", f"Paired offsets from {len(refs)} re-measured reference rows "
                      f"({', '.join(p.name for p in args.reference)}): re-measured / recorded - 1 for the same "
                      "network (measured).", "",
                      "| input | precision | quantity | board | pairs | median | quartiles |", "|---|---|---|---|---:|---:|---|"]
            for e in paired:
                lines.append(f"| {e['input_shape']} | {e['precision']} | {e['quantity']} | `{str(e['board'])[:12]}` | {e['pairs']} | "
                             f"{e['median_ratio_pct']:+.2f} % | {e['iqr_low_pct']:+.2f} % .. {e['iqr_high_pct']:+.2f} % |")
        (args.out / "README.md").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
        return 0

    return run_main(run)


if __name__ == "__main__":
    raise SystemExit(main())
