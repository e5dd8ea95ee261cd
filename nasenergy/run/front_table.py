"""A short Pareto-front table for the end of the terminal output."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.run.objectives import SearchObjective

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


def _same_network_groups(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[list[Mapping[str, Any]]]:
    """``rows`` grouped where they are one measured network with identical objective values (e.g.
    cells of different NAS-Bench-201 classes that deploy to one network and share a recorded
    accuracy), each group in ``rows``' order; rows without a measured network stay alone."""
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for i, r in enumerate(rows):
        network = r.get("measured_network")
        key = (network, *(str(r.get(c)) for c in columns)) if network else i
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def front_table(front: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective], *,
                max_rows: int = MAX_FRONT_ROWS) -> list[str]:
    """The lines of a plain-text table of ``front`` (trial, arch index and the objectives' columns),
    most accurate first, at most ``max_rows`` rows and a line saying how many were left out.

    Members that are one deployed network with identical figures share a row: its arch index
    reads e.g. ``2952 +3``, and a line under the table names the others.

    Returns:
        No lines for an empty front.
    """
    if not front:
        return []
    columns = [o.column for o in objectives if o.column in _FORMATS]
    headers = ["trial", "arch index", *(_FORMATS[c][0] for c in columns)]
    ordered = sorted(front, key=lambda r: -float(r.get("accuracy_pct") or 0.0))
    groups = _same_network_groups(ordered, columns)
    shown = groups[:max_rows]
    body = [[_cell(g[0].get("trial_number"), "d"),
             _cell(g[0].get("arch_index"), "d") + (f" +{len(g) - 1}" if len(g) > 1 else ""),
             *(_cell(g[0].get(c), _FORMATS[c][1]) for c in columns)] for g in shown]
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in body]
    for g in shown:
        if len(g) > 1:
            others = ", ".join(_cell(r.get("arch_index"), "d") for r in g[1:])
            cells = f"cells {others} deploy" if len(g) > 2 else f"cell {others} deploys"
            lines.append(f"+{len(g) - 1} with arch {_cell(g[0].get('arch_index'), 'd')}: {cells} to the same network "
                         "with the same figures")
    left = sum(len(g) for g in groups[max_rows:])
    if left:
        lines.append(f"... and {left} more in pareto_front.csv")
    return lines
