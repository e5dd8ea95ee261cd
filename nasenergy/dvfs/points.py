"""The result types of the DVFS layer: one operating point per clock, and an optimal-clock answer.

Units are in the field names: MHz, seconds per image, images per second, watts, joules per image.
``energy_j_per_img`` is always total board energy (idle power included), so points from different
backends compare on one basis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nasenergy.measurement import SOURCES

#: Search modes of `nasenergy.dvfs.find_optimal_clock`.
MIN_ENERGY = "min-energy"
BOUNDED_SLOWDOWN = "bounded-slowdown"
MIN_EDP = "min-edp"
MODES: tuple[str, ...] = (MIN_ENERGY, BOUNDED_SLOWDOWN, MIN_EDP)


@dataclass(frozen=True)
class ClockPoint:
    """Time, power and energy per image of one workload at one SM clock.

    Attributes:
        sm_clock_mhz: the SM (graphics) clock, MHz.
        time_s_per_img: seconds per image.
        throughput_img_per_s: images per second (``1 / time_s_per_img``).
        power_w: mean board power, watts.
        energy_j_per_img: total board energy per image, joules (``power_w * time_s_per_img``).
        source: ``measured`` | ``recorded`` | ``modelled``.
    """

    sm_clock_mhz: float
    time_s_per_img: float
    throughput_img_per_s: float
    power_w: float
    energy_j_per_img: float
    source: str

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        for name in ("sm_clock_mhz", "time_s_per_img", "throughput_img_per_s", "power_w",
                     "energy_j_per_img"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")

    @classmethod
    def from_time_power(cls, sm_clock_mhz: float, time_s_per_img: float, power_w: float,
                        source: str) -> "ClockPoint":
        """A point from seconds per image and board power (watts)."""
        t = float(time_s_per_img)
        p = float(power_w)
        return cls(float(sm_clock_mhz), t, 1.0 / t, p, p * t, source)

    @property
    def edp_j_s(self) -> float:
        """Energy-delay product per image, joule-seconds."""
        return self.energy_j_per_img * self.time_s_per_img


@dataclass(frozen=True)
class OptimalClock:
    """The best SM clock of one workload under one objective, with the default clock to compare.

    Attributes:
        mode: ``min-energy`` | ``bounded-slowdown`` | ``min-edp``.
        best: the chosen operating point.
        default: the operating point at the default clock.
        energy_saving_frac: ``1 - best.energy / default.energy`` (positive = saves energy).
        throughput_change_frac: ``best.throughput / default.throughput - 1`` (negative = slower).
        n_probes: how many clocks the search evaluated through its backend.
        probed: every evaluated point, in the order evaluated.
        source: where ``best`` came from: ``measured`` | ``modelled`` | ``recorded``.
        caveat: what limits the answer (e.g. "modelled; H200 parameters are extrapolated"), or
            ``None``.
        max_slowdown_frac: the throughput-loss bound of ``bounded-slowdown`` mode, else ``None``.
        basis: for ``modelled`` answers, the provenance of the parameter set behind them:
            ``calibrated`` | ``extrapolated`` | ``generic``; ``None`` otherwise.
        saving_band_frac: ``(low, high)`` of the energy saving at the chosen clock under the
            model's uncertainty (`nasenergy.dvfs.api.saving_band`), or ``None``.
    """

    mode: str
    best: ClockPoint
    default: ClockPoint
    energy_saving_frac: float
    throughput_change_frac: float
    n_probes: int
    probed: tuple[ClockPoint, ...]
    source: str
    caveat: str | None = None
    max_slowdown_frac: float | None = None
    basis: str | None = None
    saving_band_frac: tuple[float, float] | None = None

    @property
    def label(self) -> str:
        """Where the clock came from, for outputs: ``measured`` (a sweep measured with clock
        control), ``recorded`` (a recorded sweep) or ``modelled (<basis>)``."""
        if self.source == "modelled" and self.basis:
            return f"modelled ({self.basis})"
        return self.source

    @property
    def sm_clock_mhz(self) -> float:
        """The chosen SM clock, MHz."""
        return self.best.sm_clock_mhz

    @property
    def energy_j_per_img(self) -> float:
        """Energy per image at the chosen clock, joules."""
        return self.best.energy_j_per_img
