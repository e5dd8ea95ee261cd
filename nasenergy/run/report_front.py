"""The Pareto front table of ``report.md``: its columns (`Column`) by the run's objectives and DVFS
step, and the boards that measured the run (`board_lines`, `board_columns`).

The public names are re-exported by `nasenergy.run.report`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.boards import BoardCalibration
from nasenergy.run.report_text import _fmt


def _band(r: Mapping[str, Any]) -> str:
    lo, hi = r.get("energy_saving_low_pct"), r.get("energy_saving_high_pct")
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "–"
    return f"{float(lo):.1f} to {float(hi):.1f}"


Column = tuple[str, str, Any]
"""A front table column: header, Markdown alignment, and the function giving a row's cell."""


def _front_columns(names: Sequence[str], with_dvfs: bool = True) -> list[Column]:
    """The Pareto front table's columns for a run with objectives ``names`` (the clock columns
    only ``with_dvfs``)."""
    columns: list[Column] = [
        ("trial", "---:", lambda r: str(r["trial_number"])),
        ("arch index", "---:", lambda r: _fmt(r.get("arch_index"), "d")),
        ("arch", "---", lambda r: f"`{r.get('arch')}`"),
        ("search acc %", "---:", lambda r: _fmt(r.get("accuracy_pct"), ".2f")),
        ("final acc %", "---:", lambda r: _fmt(r.get("final_accuracy_pct"), ".2f")),
    ]
    if "throughput" in names:
        columns.append(("img/s", "---:", lambda r: _fmt(r.get("throughput_img_per_s"), ",.0f")))
    if "energy" in names:
        columns.append(("J/img", "---:", lambda r: _fmt(r.get("energy_j_per_img"), ".3e")))
    if not with_dvfs:
        return columns
    columns += [
        ("optimal clock MHz", "---:", lambda r: _fmt(r.get("optimal_sm_clock_mhz"), ".0f")),
        ("default clock MHz", "---:", lambda r: _fmt(r.get("default_sm_clock_mhz"), ".0f")),
    ]
    if "energy" in names:
        columns.append(("energy saving %", "---:", lambda r: _fmt(r.get("energy_saving_pct"), ".1f")))
        columns.append(("saving band %", "---:", _band))
    columns.append(("clock from", "---", lambda r: str(r.get("dvfs_label") or r.get("dvfs_source") or "–")))
    return columns


# ------------------------------------------------------------------------------------- boards


def _board_of(r: Mapping[str, Any]) -> str | None:
    return r.get("measure_gpu_uuid") or None


def board_lines(measured: Sequence[Mapping[str, Any]], front: Sequence[Mapping[str, Any]],
                env: Mapping[str, Any] | None = None) -> list[str]:
    """The provenance lines on boards: how many boards measured the run and its front, the run's
    cross-board calibration (``env.json``'s ``boards``) and whether figures were normalised to a
    reference board; none where no measurement names its board and no calibration ran."""
    boards = Counter(b for b in map(_board_of, measured) if b)
    calibration = (env or {}).get("boards")
    cal_lines = []
    if calibration:
        try:
            summary = BoardCalibration.from_dict(calibration).summary()
        except NasEnergyError:
            summary = "unreadable"
        cal_lines.append(f"- board calibration (`--boards {calibration.get('policy')}`): {summary}")
    if not boards:
        return cal_lines
    on_front = {b for b in map(_board_of, front) if b}
    named = ", ".join(f"`{b[:12]}` ({n})" for b, n in sorted(boards.items()))
    lines = [f"- boards: {len(boards)} measured the candidates ({named}); {len(on_front)} measured the front"
             + (" (its table names each member's)" if len(on_front) > 1 else "")] + cal_lines
    refs = sorted({str(r["normalised_to_gpu_uuid"]) for r in measured if r.get("normalised_to_gpu_uuid")})
    if refs:
        n = sum(1 for r in measured if r.get("normalised_to_gpu_uuid"))
        lines.append(f"- cross-board calibration: the throughput and energy of {n} measurements were normalised "
                     f"to board {', '.join(f'`{x[:12]}`' for x in refs)} (divided by their board's ratios "
                     "on the reference networks; `board_*_ratio` in `candidates.csv`)")
    return lines


def board_columns(front: Sequence[Mapping[str, Any]]) -> list[Column]:
    """A ``board`` column for the front table when more than one board measured the front."""
    if len({b for b in map(_board_of, front) if b}) < 2:
        return []
    return [("board", "---", lambda r: f"`{str(_board_of(r) or '–')[:12]}`")]
