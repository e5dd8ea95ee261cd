"""The search's objectives: the one declaration of their names, columns, senses and units.

Every other list of objectives (the CLI's ``--objectives``, the filters' senses, the Pareto
utilities' column order, the experiments) is derived from `OBJECTIVES`. The module has no
dependencies, so every layer may read it.

==============  ========================  =========  ==========  =========================
name            column                    sense      unit        hypervolume unit
==============  ========================  =========  ==========  =========================
``accuracy``    ``accuracy_pct``          maximize   %           %
``throughput``  ``throughput_img_per_s``  maximize   img/s       img/s
``energy``      ``energy_j_per_img``      minimize   J/img       img/J (enters as 1/energy)
==============  ========================  =========  ==========  =========================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "HV_UNITS",
    "OBJECTIVES",
    "OBJECTIVE_NAMES",
    "SearchObjective",
    "hypervolume_axis_label",
    "hypervolume_unit",
    "objective_senses",
    "objectives_for",
]


@dataclass(frozen=True)
class SearchObjective:
    """One objective of the search.

    Attributes:
        name: the flag name (``accuracy``, ``throughput``, ``energy``).
        column: the CSV column holding its value, with its unit.
        sense: ``maximize`` or ``minimize``.
        label: axis label for plots, of the figure wherever it was taken (`axis_label` adds the
            clock for throughput and energy scored at each network's energy-optimal clock).
        unit: the unit of ``column``.
        short: how it is spelled in a default study name.
        hv_unit: the unit it contributes to the hypervolume (energy enters as efficiency, img/J).
    """

    name: str
    column: str
    sense: Literal["maximize", "minimize"]
    label: str
    unit: str = ""
    short: str = ""
    hv_unit: str = ""

    def axis_label(self, *, at_optimal_clock: bool) -> str:
        """The plot label; throughput and energy say ``at optimal clock`` when a DVFS step scored
        them there, and nothing of clocks otherwise (``--dvfs none``, the CPU meter)."""
        if at_optimal_clock and self.name in ("throughput", "energy"):
            base, _, unit = self.label.rpartition(" (")
            return f"{base} at optimal clock ({unit}"
        return self.label


OBJECTIVES: dict[str, SearchObjective] = {
    "accuracy": SearchObjective("accuracy", "accuracy_pct", "maximize", "accuracy (%)",
                                unit="%", short="acc", hv_unit="%"),
    "throughput": SearchObjective("throughput", "throughput_img_per_s", "maximize",
                                  "throughput (img/s)", unit="img/s", short="thr",
                                  hv_unit="img/s"),
    "energy": SearchObjective("energy", "energy_j_per_img", "minimize", "energy per image (J/img)",
                              unit="J/img", short="energy", hv_unit="img/J"),
}
"""The objectives by name, in their canonical order (a search uses a subset, in this order)."""

OBJECTIVE_NAMES: tuple[str, ...] = tuple(OBJECTIVES)
"""The objective names in canonical order."""


def objective_senses() -> dict[str, str]:
    """``{name: sense}`` of every objective, in canonical order."""
    return {name: o.sense for name, o in OBJECTIVES.items()}


def objectives_for(names: Sequence[str]) -> tuple[SearchObjective, ...]:
    """The `SearchObjective` objects for ``names``, in the given order."""
    return tuple(OBJECTIVES[n] for n in names)


HV_UNITS: dict[str, str] = {name: o.hv_unit for name, o in OBJECTIVES.items()}
"""The unit each objective contributes to the hypervolume (energy enters as efficiency, img/J)."""


def hypervolume_unit(objectives: Sequence[SearchObjective]) -> str:
    """The hypervolume's unit, e.g. ``% × img/s × img/J`` for the three objectives."""
    return " × ".join(HV_UNITS[o.name] for o in objectives)


def hypervolume_axis_label(objectives: Sequence[SearchObjective]) -> str:
    """An axis label naming the hypervolume's unit and reference, e.g.
    ``hypervolume (% × img/s × img/J; reference 0)``."""
    return f"hypervolume ({hypervolume_unit(objectives)}; reference 0)"
