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

from dataclasses import dataclass

__all__ = ["OBJECTIVES", "OBJECTIVE_NAMES", "SearchObjective", "objective_senses"]


@dataclass(frozen=True)
class SearchObjective:
    """One objective of the search.

    Attributes:
        name: the flag name (``accuracy``, ``throughput``, ``energy``).
        column: the CSV column holding its value, with its unit.
        sense: ``maximize`` or ``minimize``.
        label: axis label for plots.
        unit: the unit of ``column``.
        short: how it is spelled in a default study name.
        hv_unit: the unit it contributes to the hypervolume (energy enters as efficiency, img/J).
    """

    name: str
    column: str
    sense: str
    label: str
    unit: str = ""
    short: str = ""
    hv_unit: str = ""


OBJECTIVES: dict[str, SearchObjective] = {
    "accuracy": SearchObjective("accuracy", "accuracy_pct", "maximize", "accuracy (%)",
                                unit="%", short="acc", hv_unit="%"),
    "throughput": SearchObjective("throughput", "throughput_img_per_s", "maximize",
                                  "throughput at optimal clock (img/s)", unit="img/s", short="thr",
                                  hv_unit="img/s"),
    "energy": SearchObjective("energy", "energy_j_per_img", "minimize", "energy at optimal clock (J/img)",
                              unit="J/img", short="energy", hv_unit="img/J"),
}
"""The objectives by name, in their canonical order (a search uses a subset, in this order)."""

OBJECTIVE_NAMES: tuple[str, ...] = tuple(OBJECTIVES)
"""The objective names in canonical order."""


def objective_senses() -> dict[str, str]:
    """``{name: sense}`` of every objective, in canonical order."""
    return {name: o.sense for name, o in OBJECTIVES.items()}
