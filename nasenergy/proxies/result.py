"""`ProxyResult`: one zero-cost proxy's score for one network, with its cost and provenance."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from nasenergy.errors import UsageError

SOURCES: tuple[str, ...] = ("measured", "recorded")
"""``measured``: computed live by this process; ``recorded``: read from a recorded proxy table."""

__all__ = ["SOURCES", "ProxyResult", "ProxyValue"]


@dataclass(frozen=True)
class ProxyValue:
    """What a proxy function returns: its score and, for a degenerate network, why it is not finite
    or is zero (empty otherwise)."""

    score: float
    reason: str = ""


@dataclass(frozen=True)
class ProxyResult:
    """One proxy's score of one network.

    Attributes:
        name: the proxy (a name of `nasenergy.proxies.registry.PROXIES`).
        score: the score, in `unit`; higher means "predicted better" for every proxy but
            ``flops`` and ``params`` (which are sizes). ``-inf`` for a network whose output does
            not depend on its input under the data-dependent proxies (see `reason`).
        unit: what the score counts (e.g. ``"log-det"``, ``"flop/img"``).
        cost_s: wall seconds this process spent computing it (copying the network, the passes,
            the reduction; the network's construction is not included); for a recorded result,
            the cost recorded with it.
        source: ``measured`` (computed live) or ``recorded`` (read from a table).
        seed: the seed of the input batch and labels (the network's weights are its builder's).
        batch_size: images in the batch (1 for synflow, 0 for the counts).
        data: the input batch (`nasenergy.proxies.data.DATA_CHOICES`), ``ones`` for synflow,
            ``none`` for the counts.
        device: where it was computed (``cpu``, ``cuda``, ``cuda:1``...).
        reason: why the score is degenerate (``-inf``, NaN or 0 by construction), else empty.
    """

    name: str
    score: float
    unit: str
    cost_s: float
    source: str
    seed: int
    batch_size: int
    data: str
    device: str
    reason: str = ""

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise UsageError(f"proxy source must be one of {SOURCES}, got {self.source!r}")
        object.__setattr__(self, "score", float(self.score))
        object.__setattr__(self, "cost_s", float(self.cost_s))

    @property
    def finite(self) -> bool:
        """Whether the score is a finite number."""
        return math.isfinite(self.score)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (a non-finite score as the strings ``"-inf"``, ``"inf"``, ``"nan"``)."""
        d = dataclasses.asdict(self)
        if not self.finite:
            d["score"] = str(self.score)
        return d
