"""Optimistic bounds on a candidate's throughput and energy at its energy-optimal clock.

A front scored at each network's energy-optimal clock must be compared with the candidate's
figures at *its* optimal clock, which are not measured yet. The dominance filter therefore asks an
injected bound for figures no worse than the truth: a lower bound on energy per image and an upper
bound on throughput. Any callable ``bound(measurement)`` returning an `OptimisticFigures`, a
``(energy_j_per_img_lower, throughput_img_per_s_upper)`` pair or just the energy lower bound will
do, e.g. ``nasenergy.dvfs.optimistic_energy_bound``; `ScaledBound` is the dependency-free default.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from nasenergy.filter.records import FilterError
from nasenergy.measurement import Measurement


class OptimisticFigures(NamedTuple):
    """Optimistic figures of a candidate at its energy-optimal clock.

    Attributes:
        energy_j_per_img_lower: a lower bound on joules per image (NaN if unknown).
        throughput_img_per_s_upper: an upper bound on images per second.
    """

    energy_j_per_img_lower: float
    throughput_img_per_s_upper: float


EnergyBound = Callable[[Measurement], "OptimisticFigures | tuple[float, float] | float | None"]
"""A callable giving a measurement's optimistic (energy lower, throughput upper) figures."""

DEFAULT_ENERGY_FACTOR = 0.5
"""Default optimism on energy: the optimal clock may at best halve the default-clock energy per
image. Published DVFS sweeps of CUDA kernels on a V100 and a Quadro RTX 8000 (Wang & Chu, ICPADS
2018) never go below 0.58 of the top-clock energy, so 0.5 errs on the optimistic (safe) side."""


@dataclass(frozen=True)
class ScaledBound:
    """Default-clock figures scaled by fixed optimistic factors, widened by measurement noise.

    ``energy_lower = energy * energy_factor * (1 - noise_sigmas * energy_cv)`` and
    ``throughput_upper = throughput * throughput_factor * (1 + noise_sigmas * throughput_cv)``.
    The throughput factor defaults to 1: a clock at or below the default one does not speed a
    network up.

    Attributes:
        energy_factor: in (0, 1]; see `DEFAULT_ENERGY_FACTOR`.
        throughput_factor: ≥ 1.
        noise_sigmas: how many coefficients of variation of slack to add for measurement noise.
    """

    energy_factor: float = DEFAULT_ENERGY_FACTOR
    throughput_factor: float = 1.0
    noise_sigmas: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.energy_factor <= 1:
            raise FilterError(f"energy_factor must be in (0, 1], got {self.energy_factor}")
        if not self.throughput_factor >= 1:
            raise FilterError(f"throughput_factor must be >= 1, got {self.throughput_factor}")
        if not self.noise_sigmas >= 0:
            raise FilterError(f"noise_sigmas must be >= 0, got {self.noise_sigmas}")

    def __call__(self, measurement: Measurement) -> OptimisticFigures:
        m = measurement
        thr = m.throughput_img_per_s * self.throughput_factor * (1 + self.noise_sigmas * (m.throughput_cv or 0.0))
        if m.energy_j_per_img is None:
            energy = math.nan
        else:
            shrink = max(0.0, 1 - self.noise_sigmas * (m.energy_cv or 0.0))
            energy = m.energy_j_per_img * self.energy_factor * shrink
        return OptimisticFigures(energy_j_per_img_lower=float(energy), throughput_img_per_s_upper=float(thr))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return asdict(self)


def optimistic_figures(bound: EnergyBound, measurement: Measurement) -> OptimisticFigures:
    """Call ``bound`` and normalise its answer to `OptimisticFigures`.

    Accepts an `OptimisticFigures`, any object with ``energy_j_per_img_lower`` and
    ``throughput_img_per_s_upper`` attributes, a pair ``(energy lower, throughput upper)``, or a
    single number: an energy lower bound, the throughput bound then being the measured throughput
    (a clock at or below the default one does not speed a network up). ``None`` energy becomes NaN.
    """
    out: Any = bound(measurement)  # any object with the two attributes is accepted, not only ours
    if hasattr(out, "energy_j_per_img_lower") and hasattr(out, "throughput_img_per_s_upper"):
        e, t = out.energy_j_per_img_lower, out.throughput_img_per_s_upper
    elif out is None or isinstance(out, (int, float)):
        e, t = out, measurement.throughput_img_per_s
    else:
        try:
            e, t = out
        except (TypeError, ValueError):
            raise FilterError(
                "an energy bound must return (energy_j_per_img_lower, throughput_img_per_s_upper)"
            ) from None
    return OptimisticFigures(math.nan if e is None else float(e), math.nan if t is None else float(t))
