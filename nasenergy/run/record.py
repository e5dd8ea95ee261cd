"""A candidate of a run, typed: `CandidateRecord` (every column of the candidate schema, frozen)
and `ScoredFigures` (the objective figures it was scored on).

`ScoredFigures` is written once by the evaluation step, stored on the candidate's trial (the
``scored`` part of its ``result`` attribute) and read back by the loop (the filter's observations,
the Pareto front, ``--min-accuracy``); `ScoredFigures.values` picks the figures by the objectives'
own columns (`nasenergy.objectives.OBJECTIVES`), so no objective column is spelled by hand there.
`CandidateRecord` is what the run's files, report and plots read (`nasenergy.run.front.RunFront`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from nasenergy.errors import UsageError
from nasenergy.objectives import SearchObjective
from nasenergy.run.candidate_schema import CANDIDATE_COLUMNS
from nasenergy.run.outcomes import EVALUATED

__all__ = ["CandidateRecord", "ScoredFigures"]


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


class CandidateRecord(Mapping[str, Any]):
    """One candidate of a run, frozen: every column of the candidate schema
    (`nasenergy.run.candidate_schema.CANDIDATE_SCHEMA`), each ``None`` or of its column's type.

    A record is built once, from the candidate's trial (`nasenergy.run.trial_record.row_from_trial`)
    or from a ``candidates.csv`` row, and read by the CSV writer, the report, the plots and the
    experiments: by typed attribute for the figures they compute with (`scored`, `outcome`,
    `on_front`, ...) and, as a read-only mapping, by column for the tables they print.
    """

    __slots__ = ("_values",)
    _values: Mapping[str, Any]

    def __init__(self, values: Mapping[str, Any]) -> None:
        unknown = [k for k in values if k not in CANDIDATE_COLUMNS]
        if unknown:
            raise UsageError(f"a candidate record has no column {unknown[0]!r}")
        typed: dict[str, Any] = {}
        for name, kind in CANDIDATE_COLUMNS.items():
            typed[name] = _typed(name, kind, values.get(name))
        object.__setattr__(self, "_values", MappingProxyType(typed))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a CandidateRecord is frozen; use `replace`")

    def __getitem__(self, column: str) -> Any:
        return self._values[column]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CandidateRecord) and dict(self._values) == dict(other._values)

    def __hash__(self) -> int:
        return hash(tuple(self._values.items()))

    def __repr__(self) -> str:
        return f"CandidateRecord(trial {self.trial_number}, {self.outcome}, {self.arch!r})"

    def replace(self, **columns: Any) -> "CandidateRecord":
        """A copy with ``columns`` changed."""
        return CandidateRecord({**self._values, **columns})

    def as_row(self) -> dict[str, Any]:
        """Every column, in the files' order (a plain dict, for the CSV writer)."""
        return dict(self._values)

    @property
    def trial_number(self) -> int:
        """The candidate's Optuna trial."""
        return int(self._values["trial_number"])

    @property
    def outcome(self) -> str:
        """What became of it (`nasenergy.run.outcomes`)."""
        return str(self._values["outcome"])

    @property
    def arch(self) -> str:
        """The architecture string as proposed."""
        return str(self._values["arch"])

    @property
    def network(self) -> str:
        """The study's key of its deployed network (`nasenergy.run.network_key`)."""
        return str(self._values["network"] or self._values["canonical"])

    @property
    def is_evaluated(self) -> bool:
        """Fully evaluated (accuracy, and throughput and energy at its clock)."""
        return bool(self._values["outcome"] == EVALUATED)

    @property
    def on_front(self) -> bool:
        """On the run's Pareto front (set once, by `nasenergy.run.front.RunFront`)."""
        return bool(self._values["on_front"])

    @property
    def evaluation_number(self) -> int | None:
        """1, 2, ... in order of completion, for evaluated candidates."""
        n = self._values["evaluation_number"]
        return None if n is None else int(n)

    @property
    def scored(self) -> ScoredFigures | None:
        """The figures it was scored on (``None`` unless evaluated)."""
        if not self.is_evaluated or self._values["accuracy_pct"] is None or self._values["throughput_img_per_s"] is None:
            return None
        return ScoredFigures.from_attr(self._values)

    @property
    def sources(self) -> dict[str, str | None]:
        """Where each figure came from (``measured``, ``modelled``, ``recorded``), by figure."""
        v = self._values
        return {"accuracy": v["accuracy_source"], "throughput": v["throughput_source"],
                "energy": v["energy_source"], "measurement": v["measure_source"], "dvfs": v["dvfs_source"]}


def _typed(name: str, kind: str, value: Any) -> Any:
    """``value`` as its column's type (``None`` stays ``None``); anything else is refused."""
    if value is None:
        return None
    ok = {"int": isinstance(value, numbers.Integral), "float": isinstance(value, numbers.Real),
          "bool": isinstance(value, (bool, np.bool_)), "str": isinstance(value, str)}[kind]
    if not ok or (kind in ("int", "float") and isinstance(value, (bool, np.bool_))):
        raise UsageError(f"candidate column {name}: expected {kind} or nothing, got {value!r}")
    return {"int": int, "float": float, "bool": bool, "str": str}[kind](value)
