"""The search's objectives, their columns, and the hypervolume convention (the names are declared in
`nasenergy.objectives` and `nasenergy.pareto`, a layer below, and gathered here for the search).

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

Hypervolume reference (`nasenergy.pareto.search_hypervolume`): the hypervolume is computed on
(accuracy %, throughput img/s, energy efficiency img/J = 1 / energy) against the fixed reference point (0, 0, 0). Every objective is
then bounded below by a physical zero, so the reference is the same for every run, every space and
every moment of a run: the hypervolume curve of a run never changes retroactively, and curves of
different runs are comparable. Turning energy into its reciprocal keeps the Pareto front unchanged
(it is a monotone map). The value is in % x img/s x img/J (or the product of the chosen ones).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nasenergy.objectives import (
    HV_UNITS,
    OBJECTIVES,
    SearchObjective,
    hypervolume_axis_label,
    hypervolume_unit,
    objectives_for,
)
from nasenergy.pareto import non_dominated_mask, points_of, search_hypervolume, search_hypervolume_curve

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


def front_mask(points: np.ndarray, objectives: Sequence[SearchObjective]) -> np.ndarray:
    """Which rows of ``points`` are non-dominated under ``objectives``."""
    return non_dominated_mask(points, objectives)


hv_hypervolume = search_hypervolume
"""The search's hypervolume of objective rows (`nasenergy.pareto.search_hypervolume`)."""

hv_curve = search_hypervolume_curve
"""The search's hypervolume after each point in order (`nasenergy.pareto.search_hypervolume_curve`)."""
