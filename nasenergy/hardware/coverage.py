"""`Coverage`: how much of a search space a recorded profile holds at one setting.

Plain data, written to a run's ``env.json`` by the search (`nasenergy.search.coverage` computes it)
and read back by the run's report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Coverage"]


@dataclass(frozen=True)
class Coverage:
    """The networks a recorded profile holds at the run's setting.

    Attributes:
        profile: the profile's file name.
        device_name: the GPU it was measured on.
        space: the search space (``tss``).
        setting: precision, batch size and input shape, e.g. ``fp16, batch 1024, input 3x32x32``.
        covered_classes: canonical classes recorded at that setting.
        total_classes: canonical classes of the space.
        covered_cells: cells (architectures) whose class is recorded.
        total_cells: cells of the space.
    """

    profile: str
    device_name: str
    space: str
    setting: str
    covered_classes: int
    total_classes: int
    covered_cells: int
    total_cells: int

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
        return (
            f"the recorded profile {self.profile} ({self.device_name}) covers {self.covered_classes:,} of "
            f"{self.total_classes:,} canonical {self.space} classes ({self.covered_cells:,} of "
            f"{self.total_cells:,} cells) at {self.setting}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Coverage":
        """Inverse of `to_dict`."""
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})
