"""The objective figures of one evaluated candidate, typed: what a worker tells Optuna, stores on
the candidate's trial (the ``scored`` part of its ``result`` attribute) and reads back.

`ScoredFigures` is written once by the evaluation step and read by the loop (the filter's
observations, the Pareto front, ``--min-accuracy``), so the objective columns are never spelled
by hand there: `ScoredFigures.values` picks them by the objectives' own columns
(`nasenergy.objectives.OBJECTIVES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.objectives import SearchObjective

__all__ = ["ScoredFigures"]


@dataclass(frozen=True)
class ScoredFigures:
    """The figures a candidate is scored on.

    Attributes:
        accuracy_pct: the accuracy the oracle gave.
        throughput_img_per_s: images per second, at the energy-optimal clock when a DVFS step
            chose one, else at the default clock.
        energy_j_per_img: joules per image at the same clock; ``None`` where the meter has no
            energy (a CPU meter: energy is then left out of the objectives).
        throughput_source: where the throughput came from (``measured``, ``modelled``, ``recorded``).
        energy_source: where the energy came from; ``None`` with no energy.
    """

    accuracy_pct: float
    throughput_img_per_s: float
    energy_j_per_img: float | None
    throughput_source: str
    energy_source: str | None

    def value(self, objective: SearchObjective) -> float:
        """The figure of ``objective`` (by its column)."""
        try:
            figure = getattr(self, objective.column)
        except AttributeError:
            raise UsageError(f"objective {objective.name!r}: no scored figure is named {objective.column!r}") from None
        if figure is None:
            raise UsageError(f"objective {objective.name!r}: the candidate has no {objective.column} figure")
        return float(figure)

    def values(self, objectives: Sequence[SearchObjective]) -> list[float]:
        """The figures of ``objectives``, in their order (what Optuna is told)."""
        return [self.value(o) for o in objectives]

    def as_attr(self) -> dict[str, Any]:
        """The stored form (JSON): one key per field."""
        return asdict(self)

    @classmethod
    def from_attr(cls, attr: Mapping[str, Any]) -> "ScoredFigures":
        """Read the stored form back; a trial of an older study may lack the sources."""
        missing = [k for k in ("accuracy_pct", "throughput_img_per_s") if attr.get(k) is None]
        if missing:
            raise UsageError(f"a stored candidate's scored figures lack {', '.join(missing)}")
        energy = attr.get("energy_j_per_img")
        return cls(accuracy_pct=float(attr["accuracy_pct"]),
                   throughput_img_per_s=float(attr["throughput_img_per_s"]),
                   energy_j_per_img=None if energy is None else float(energy),
                   throughput_source=str(attr.get("throughput_source") or ""),
                   energy_source=None if attr.get("energy_source") is None else str(attr["energy_source"]))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The stored keys, in order."""
        return tuple(f.name for f in fields(cls))
