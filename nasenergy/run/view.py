"""`RunView`: what a run's report (`nasenergy.run.report`) and plots (`nasenergy.run.plots`) read of
a run. `nasenergy.run.files.RunRecord` (a run read back from its folder) follows it; so may a
user's own record of a run. Also exported by `nasenergy.protocols` with the other extension points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from nasenergy.objectives import SearchObjective
from nasenergy.run.front import RunFront
from nasenergy.run.record import CandidateRecord

__all__ = ["RunView"]


@runtime_checkable
class RunView(Protocol):
    """A search run as its report and plots read it."""

    @property
    def run_dir(self) -> Path:
        """The run folder."""
        ...

    @property
    def config(self) -> Mapping[str, Any]:
        """The run's settings (``config.json``)."""
        ...

    @property
    def env(self) -> Mapping[str, Any]:
        """Where it ran (``env.json``)."""
        ...

    @property
    def rows(self) -> Sequence[CandidateRecord]:
        """Every candidate, in trial order."""
        ...

    @property
    def name(self) -> str:
        """The study name (or the folder name)."""
        ...

    @property
    def objectives(self) -> tuple[SearchObjective, ...]:
        """The run's objectives."""
        ...

    @property
    def run_front(self) -> RunFront:
        """The run's evaluations, its front and its quality, computed once."""
        ...

    @property
    def evaluated(self) -> Sequence[CandidateRecord]:
        """The fully evaluated, non-duplicate candidates in evaluation order."""
        ...

    @property
    def front(self) -> Sequence[CandidateRecord]:
        """The candidates on the Pareto front, most accurate first."""
        ...
