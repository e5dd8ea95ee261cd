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

Hypervolume reference (`nasenergy.pareto.search_hypervolume`): the hypervolume is computed on (accuracy %, throughput img/s, energy
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
from nasenergy.pareto import non_dominated_mask, search_hypervolume, search_hypervolume_curve

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
    return non_dominated_mask(points, objectives)


hv_hypervolume = search_hypervolume
"""The search's hypervolume of objective rows (`nasenergy.pareto.search_hypervolume`)."""

hv_curve = search_hypervolume_curve
"""The search's hypervolume after each point in order (`nasenergy.pareto.search_hypervolume_curve`)."""


HV_UNITS: dict[str, str] = {name: o.hv_unit for name, o in OBJECTIVES.items()}
"""The unit each objective contributes to the hypervolume (energy enters as efficiency, img/J)."""


def hypervolume_unit(objectives: Sequence[SearchObjective]) -> str:
    """The hypervolume's unit, e.g. ``% × img/s × img/J`` for the three objectives."""
    return " × ".join(HV_UNITS[o.name] for o in objectives)


def hypervolume_axis_label(objectives: Sequence[SearchObjective]) -> str:
    """An axis label naming the hypervolume's unit and reference, e.g.
    ``hypervolume (% × img/s × img/J; reference 0)``."""
    return f"hypervolume ({hypervolume_unit(objectives)}; reference 0)"
