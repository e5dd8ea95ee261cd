"""The front of a run, computed once: `RunFront` numbers the evaluations, marks the Pareto front
and holds the run's quality under its declared region, for the files, the report, the plots and
the command's closing table alike.

The front is of the evaluated candidates at or above ``--min-accuracy`` (every evaluated one
without it), by the run's objectives; a network never stands on it twice, since an evaluated
candidate is a network's only full evaluation (its repeats are ``duplicate`` rows).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nasenergy.pareto import ParetoFront, points_of
from nasenergy.quality import DeployRegion
from nasenergy.run.objectives import SearchObjective
from nasenergy.run.quality import RunQuality, run_quality, run_region
from nasenergy.run.record import CandidateRecord

__all__ = ["RunFront"]


@dataclass(frozen=True, eq=False)
class RunFront:
    """A run's candidates with their evaluation numbers and front marks.

    Attributes:
        records: every candidate, in trial order.
        objectives: the run's objectives.
        config: the run's settings (``config.json``), for its quality region.
    """

    records: tuple[CandidateRecord, ...]
    objectives: tuple[SearchObjective, ...]
    config: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def mark(cls, rows: Iterable[Mapping[str, Any]], objectives: Sequence[SearchObjective], *,
             min_accuracy: float | None = None, config: Mapping[str, Any] | None = None) -> "RunFront":
        """Number the evaluated candidates in order of completion (1, 2, ...) and mark the front of
        those at or above ``min_accuracy``; the only place a run's front is computed."""
        records = [r if isinstance(r, CandidateRecord) else CandidateRecord(r) for r in rows]
        order = sorted((i for i, r in enumerate(records) if r.is_evaluated),
                       key=lambda i: (records[i].get("datetime_complete") or "", records[i].trial_number))
        number = {i: k for k, i in enumerate(order, start=1)}
        eligible = [i for i in order if min_accuracy is None
                    or (records[i].get("accuracy_pct") is not None and records[i]["accuracy_pct"] >= min_accuracy)]
        front = ParetoFront.from_points(points_of([records[i] for i in eligible], objectives), objectives,
                                        keys=eligible)
        on = set(front.keys)
        marked = tuple(r.replace(evaluation_number=number.get(i), on_front=i in on) for i, r in enumerate(records))
        return cls(marked, tuple(objectives), dict(config or {}))

    @classmethod
    def read(cls, rows: Iterable[Mapping[str, Any]], objectives: Sequence[SearchObjective],
             config: Mapping[str, Any] | None = None) -> "RunFront":
        """A run whose marks were set when its files were written (`mark`), as they stand."""
        records = tuple(r if isinstance(r, CandidateRecord) else CandidateRecord(r) for r in rows)
        return cls(records, tuple(objectives), dict(config or {}))

    @functools.cached_property
    def evaluated(self) -> tuple[CandidateRecord, ...]:
        """The fully evaluated candidates, in evaluation order."""
        ev = [r for r in self.records if r.is_evaluated]
        return tuple(sorted(ev, key=lambda r: (r.evaluation_number or 0, r.trial_number)))

    @functools.cached_property
    def members(self) -> tuple[CandidateRecord, ...]:
        """The candidates on the front, most accurate first."""
        return tuple(sorted((r for r in self.records if r.on_front), key=lambda r: -(r.get("accuracy_pct") or 0.0)))

    @functools.cached_property
    def region(self) -> DeployRegion | None:
        """The run's quality region from its config (``None``: no floor, or nothing measured)."""
        return run_region(self.config, self.records)

    @functools.cached_property
    def quality(self) -> RunQuality | None:
        """The run's quality under its region (``None`` where it has none)."""
        region = self.region
        return run_quality(region, self.evaluated, self.objectives) if region is not None else None
