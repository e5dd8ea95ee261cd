"""`Coverage`: how much of a search space a recorded profile holds at one setting.

Plain data, written to a run's ``env.json`` by the search (`nasenergy.search.command.coverage` computes it)
and read back by the run's report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["CELL_UNIT", "CLASS_UNIT", "Coverage"]

CLASS_UNIT = "canonical classes"
"""`Coverage.unit` of a profile keyed by canonical class."""
CELL_UNIT = "configurations (each its own network)"
"""`Coverage.unit` of a space whose every cell is its own network (SSS)."""


@dataclass(frozen=True)
class Coverage:
    """The networks a recorded profile holds at the run's setting.

    Attributes:
        profile: the profile's file name.
        device_name: the GPU it was measured on.
        space: the search space (``tss``).
        setting: precision, batch size and input shape, e.g. ``fp16, batch 1024, input 3x32x32``.
        covered_classes: networks recorded at that setting, counted as the search counts them
            (`unit`).
        total_classes: networks of the space, counted alike.
        covered_cells: cells (architectures) whose network is recorded.
        total_cells: cells of the space.
        unit: what is counted: `CLASS_UNIT` (a profile of networks as built), `CELL_UNIT` (a
            space whose every cell is its own network), or networks keyed by canonical class and
            deployed structure (`nasenergy.run.network_key`).
    """

    profile: str
    device_name: str
    space: str
    setting: str
    covered_classes: int
    total_classes: int
    covered_cells: int
    total_cells: int
    unit: str = CLASS_UNIT

    @property
    def complete(self) -> bool:
        """Whether every class is recorded."""
        return self.covered_classes >= self.total_classes

    @property
    def cell_fraction(self) -> float:
        """The share of the space's cells the profile answers (what a uniform sampler hits)."""
        return self.covered_cells / self.total_cells if self.total_cells else 0.0

    def summary(self) -> str:
        """One clause, e.g. ``the recorded profile ... covers 1,527 of 6,466 canonical tss classes ...``."""
        cells = "" if self.unit == CELL_UNIT else f" ({self.covered_cells:,} of {self.total_cells:,} cells)"
        return (
            f"the recorded profile {self.profile} ({self.device_name}) covers {self.covered_classes:,} of "
            f"{self.total_classes:,} {self._counted}{cells} at {self.setting}"
        )

    @property
    def _counted(self) -> str:
        """``canonical tss classes``, or ``tss networks (...)``."""
        if self.unit == CLASS_UNIT:
            return f"canonical {self.space} classes"
        return f"{self.space} {self.unit}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Coverage":
        """Inverse of `to_dict`."""
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})  # older runs lack `unit`
