"""The search's objectives, their columns, and the hypervolume convention.

Objectives (a subset may be chosen, always in this order):

==============  ========================  =========  ==========================================
name            column                    sense      value
==============  ========================  =========  ==========================================
``accuracy``    ``accuracy_pct``          maximize   the accuracy oracle's top-1 accuracy, %
``throughput``  ``throughput_img_per_s``  maximize   images/s at the energy-optimal clock
``energy``      ``energy_j_per_img``      minimize   joules/image at the energy-optimal clock
==============  ========================  =========  ==========================================

Without DVFS (``--dvfs none``) throughput and energy are the cheap measurement's, at the default
clock.

Hypervolume reference: the hypervolume is computed on (accuracy %, throughput img/s, energy
efficiency img/J = 1 / energy) against the fixed reference point (0, 0, 0). Every objective is
then bounded below by a physical zero, so the reference is the same for every run, every space and
every moment of a run: the hypervolume curve of a run never changes retroactively, and curves of
different runs are comparable. Turning energy into its reciprocal keeps the Pareto front unchanged
(it is a monotone map). The value is in % x img/s x img/J (or the product of the chosen ones).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from nasenergy.objectives import OBJECTIVES, SearchObjective
from nasenergy.pareto import hypervolume, non_dominated_mask

__all__ = [
    "HV_UNITS",
    "OBJECTIVES",
    "SearchObjective",
    "front_mask",
    "hv_curve",
    "hv_hypervolume",
    "hypervolume_axis_label",
    "hypervolume_unit",
    "objectives_for",
    "points_of",
]


def objectives_for(names: Sequence[str]) -> tuple[SearchObjective, ...]:
    """The `SearchObjective` objects for ``names``, in the given order."""
    return tuple(OBJECTIVES[n] for n in names)


def points_of(rows: Sequence[Mapping[str, object]], objectives: Sequence[SearchObjective]) -> np.ndarray:
    """The objective values of ``rows`` as an ``(n, n_objectives)`` float array (NaN if missing)."""
    out = np.full((len(rows), len(objectives)), np.nan)
    for i, row in enumerate(rows):
        for j, obj in enumerate(objectives):
            value = row.get(obj.column)
            if value is not None and value != "":
                out[i, j] = float(value)  # type: ignore[arg-type]
    return out


def front_mask(points: np.ndarray, objectives: Sequence[SearchObjective]) -> np.ndarray:
    """Which rows of ``points`` are non-dominated under ``objectives``."""
    return non_dominated_mask(points, [o.sense for o in objectives])


def hv_hypervolume(points: np.ndarray, objectives: Sequence[SearchObjective]) -> float:
    """The hypervolume of ``points`` under the module's convention (see the module docstring).

    Args:
        points: ``(n, n_objectives)`` in the objectives' own units (energy in J/img).
        objectives: the objectives of the columns.

    Returns:
        The dominated volume against the zero reference, energy taken as img/J; rows with NaN or a
        non-positive energy are ignored.
    """
    pts = np.array(points, dtype=float, copy=True).reshape(-1, len(objectives))
    for j, obj in enumerate(objectives):
        if obj.name == "energy":
            with np.errstate(divide="ignore", invalid="ignore"):
                col = pts[:, j]
                pts[:, j] = np.where(col > 0, 1.0 / col, np.nan)
    return hypervolume(pts, [0.0] * len(objectives), ["maximize"] * len(objectives))


def hv_curve(points_in_order: np.ndarray, objectives: Sequence[SearchObjective]) -> np.ndarray:
    """The hypervolume after each of the points in order (the k-th value uses the first k+1)."""
    pts = np.asarray(points_in_order, dtype=float).reshape(-1, len(objectives))
    senses = [o.sense for o in objectives]
    out = np.zeros(len(pts))
    front = np.empty((0, len(objectives)))
    hv = 0.0
    for k, p in enumerate(pts):
        if not np.isnan(p).any():
            candidate = np.vstack([front, p[None, :]])
            mask = non_dominated_mask(candidate, senses)
            if mask[-1]:
                front = candidate[mask]
                hv = hv_hypervolume(front, objectives)
        out[k] = hv
    return out


HV_UNITS: dict[str, str] = {name: o.hv_unit for name, o in OBJECTIVES.items()}
"""The unit each objective contributes to the hypervolume (energy enters as efficiency, img/J)."""


def hypervolume_unit(objectives: Sequence[SearchObjective]) -> str:
    """The hypervolume's unit, e.g. ``% × img/s × img/J`` for the three objectives."""
    return " × ".join(HV_UNITS[o.name] for o in objectives)


def hypervolume_axis_label(objectives: Sequence[SearchObjective]) -> str:
    """An axis label naming the hypervolume's unit and reference, e.g.
    ``hypervolume (% × img/s × img/J; reference 0)``."""
    return f"hypervolume ({hypervolume_unit(objectives)}; reference 0)"
