"""How much of the space a recorded profile can answer, and what that means for a run.

A recorded profile (``--hardware recorded``, or ``auto`` without a GPU) may hold only some of the
canonical networks. A candidate outside it is recorded with outcome ``not_recorded``: it is not
measured, spends no budget, and is told to the sampler as pruned, which steers the sampler away
from such cells, so the search effectively runs over the recorded classes. `Coverage` describes
that share; the run refuses a budget larger than the networks it can measure, and the default
candidate cap grows in proportion to the share of cells the profile cannot answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.hardware.meter import RecordedProfile
from nasenergy.search.config import SearchConfig


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


def profile_coverage(meter: Any, space: Any, config: SearchConfig) -> Coverage | None:
    """The coverage of ``meter``'s recorded profile at ``config``'s setting, or ``None`` for a meter
    that measures any network (it is no `nasenergy.hardware.meter.RecordedProfile`).

    Args:
        meter: a meter; a `nasenergy.hardware.recorded.RecordedMeter` is described.
        space: the search space.
        config: the run's settings (precision, batch size, dataset).
    """
    if not isinstance(meter, RecordedProfile):
        return None
    from nasenergy.hardware.recorded import shape_to_str

    shape = shape_to_str(space.input_shape(config.dataset))
    covered = {
        r["canonical_arch"]
        for r in meter.rows()
        if r["precision"] == config.precision and int(r["batch_size"]) == config.batch_size and r["input_shape"] == shape
    }
    cells = sum(1 for arch in space.enumerate() if str(space.canonical(arch)) in covered)
    path = getattr(meter, "path", None)
    return Coverage(
        profile=getattr(path, "name", None) or str(path or "recorded profile"),
        device_name=str(getattr(meter, "device_name", "unknown device")),
        space=str(space.name),
        setting=f"{config.precision}, batch {config.batch_size}, input {shape}",
        covered_classes=len(covered),
        total_classes=len(space.canonical_classes()),
        covered_cells=cells,
        total_cells=int(space.size),
    )


def check_budget_reachable(config: SearchConfig, coverage: Coverage | None) -> None:
    """Refuse a budget the profile cannot fill.

    Raises:
        UsageError: ``--budget`` exceeds the recorded classes (each full evaluation needs a
            distinct network), with what to do instead.
    """
    if coverage is None or config.budget <= coverage.covered_classes:
        return
    raise UsageError(
        f"--budget {config.budget} needs {config.budget} distinct networks, but "
        f"{coverage.summary()}; lower --budget to at most {coverage.covered_classes} "
        "or measure on a GPU (--hardware cuda)"
    )


def candidate_cap(config: SearchConfig, coverage: Coverage | None) -> int:
    """The safety cap on the study's candidates: ``--max-candidates`` when given, else the
    default cap (`SearchConfig.candidate_cap`) divided by the share of cells the profile answers,
    since candidates outside it cost nothing but still count."""
    if config.max_candidates is not None or coverage is None or coverage.complete:
        return config.candidate_cap
    return math.ceil(config.candidate_cap / max(coverage.cell_fraction, 1e-3))
