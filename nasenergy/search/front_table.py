"""A short Pareto-front table for the end of the terminal output."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.search.objectives import SearchObjective

MAX_FRONT_ROWS = 10
"""Front members the terminal table shows (the most accurate first); the CSV has them all."""

_FORMATS = {"accuracy_pct": ("accuracy %", ".2f"), "throughput_img_per_s": ("img/s", ",.0f"),
            "energy_j_per_img": ("J/img", ".3e")}


def _cell(value: Any, spec: str) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(number):
        return "-"
    return str(int(number)) if spec == "d" else format(number, spec)


def front_table(front: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective], *,
                max_rows: int = MAX_FRONT_ROWS) -> list[str]:
    """The lines of a plain-text table of ``front`` (trial, arch index and the objectives' columns),
    most accurate first, at most ``max_rows`` rows and a line saying how many were left out.

    Returns:
        No lines for an empty front.
    """
    if not front:
        return []
    columns = [o.column for o in objectives if o.column in _FORMATS]
    headers = ["trial", "arch index", *(_FORMATS[c][0] for c in columns)]
    ordered = sorted(front, key=lambda r: -float(r.get("accuracy_pct") or 0.0))
    body = [[_cell(r.get("trial_number"), "d"), _cell(r.get("arch_index"), "d"),
             *(_cell(r.get(c), _FORMATS[c][1]) for c in columns)] for r in ordered[:max_rows]]
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in body]
    if len(front) > max_rows:
        lines.append(f"... and {len(front) - max_rows} more in pareto_front.csv")
    return lines
