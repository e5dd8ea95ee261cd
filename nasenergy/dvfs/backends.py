"""Three sources of operating points behind one interface, `ClockBackend`.

* `MeasuredBackend` (``measured``): locks the GPU clock through `ClockControl` and runs a meter at
  each probed clock.
* `ModelledBackend` (``modelled``): the DVFS model (`nasenergy.dvfs.model`) from one
  default-clock observation.
* `ExpectedBackend` (``modelled``): the same, averaged over the model's uncertainty band (the
  expected operating point of equation 7 of `nasenergy.dvfs.model`); the clock search uses it.
* `RecordedBackend` (``recorded``): replays a sweep recorded earlier, here or elsewhere
  (`nasenergy.dvfs.sweeps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.points import ClockPoint
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.errors import CandidateError, UsageError
from nasenergy.measurement import Measurement

if TYPE_CHECKING:
    from nasenergy.dvfs.control import ClockControl


@runtime_checkable
class ClockBackend(Protocol):
    """Where operating points come from.

    Attributes:
        source: ``measured`` | ``modelled`` | ``recorded``.
        caveat: what limits its points, or ``None``.
    """

    source: str
    caveat: str | None

    def clocks_mhz(self) -> tuple[float, ...]:
        """The clocks this backend can evaluate, MHz, ascending."""
        ...

    def default_clock_mhz(self) -> float:
        """The clock the workload runs at by default, MHz."""
        ...

    def probe(self, sm_clock_mhz: float) -> ClockPoint:
        """The operating point at `sm_clock_mhz` (one of `clocks_mhz`)."""
        ...


class ModelledBackend:
    """Points predicted by the DVFS model from one default-clock observation.

    Args:
        model: the GPU's model.
        observation: the workload at its default clock.
        clocks_mhz: clocks to offer; default: the parameter set's supported clocks.
        alpha: override the predicted compute-bound share.
    """

    source = "modelled"

    def __init__(self, model: DvfsModel, observation: WorkloadObservation,
                 clocks_mhz: Sequence[float] | None = None, *, alpha: float | None = None) -> None:
        self.model = model
        self.observation = observation
        self._clocks = tuple(sorted(float(c) for c in (
            clocks_mhz if clocks_mhz is not None else model.params.supported_clocks_mhz)))
        self.alpha = model.alpha(observation) if alpha is None else float(alpha)
        p = model.params
        self.caveat: str | None = f"modelled from the default clock with DVFS parameters {p.name}" + (
            f"; {p.caveat}" if p.caveat else "")

    def clocks_mhz(self) -> tuple[float, ...]:
        return self._clocks

    def default_clock_mhz(self) -> float:
        return self.observation.sm_clock_mhz

    def probe(self, sm_clock_mhz: float) -> ClockPoint:
        return self.model.point(self.observation, sm_clock_mhz, alpha=self.alpha)


class ExpectedBackend(ModelledBackend):
    """Modelled points averaged over band members: equation (7) of `nasenergy.dvfs.model`.

    Each probe evaluates every member ``(params, alpha)`` at the clock and returns the mean energy
    per image over them, at the point estimate's time per image (power = mean energy / that
    time). Searching this backend for the least energy chooses the clock of least *expected*
    energy under the model's uncertainty instead of the least point-estimate energy; a
    throughput bound (``bounded-slowdown``) is still judged on the point estimate, the figure
    reported. At the default clock every member reproduces the measured point, so the default
    point is unchanged.

    Args:
        model: the GPU's model (its parameter set is the point estimate's).
        observation: the workload at its default clock.
        members: ``(parameter set, alpha)`` pairs to average over, e.g.
            `nasenergy.dvfs.api.band_members`.
        clocks_mhz: clocks to offer; default: the parameter set's supported clocks.
        alpha: the point estimate's compute-bound share (kept as ``self.alpha``); default: the
            model's prediction.
    """

    def __init__(self, model: DvfsModel, observation: WorkloadObservation,
                 members: Sequence[tuple[GpuDvfsParams, float]],
                 clocks_mhz: Sequence[float] | None = None, *, alpha: float | None = None) -> None:
        if not members:
            raise UsageError("the expected-energy backend needs at least one band member")
        super().__init__(model, observation, clocks_mhz, alpha=alpha)
        self.members = tuple((DvfsModel(p), float(a)) for p, a in members)
        self._table: dict[float, tuple[float, float]] | None = None

    def _mean(self, clocks: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """The point estimate's time and the members' mean energy per image at `clocks`."""
        curves = [m.curve(self.observation, clocks, alpha=a) for m, a in self.members]
        point = self.model.curve(self.observation, clocks, alpha=self.alpha)
        return point.time_s_per_img, np.mean([c.energy_j_per_img for c in curves], axis=0)

    def point_probe(self, sm_clock_mhz: float) -> ClockPoint:
        """The point estimate's operating point at a clock (`ModelledBackend.probe`)."""
        return super().probe(sm_clock_mhz)

    def probe(self, sm_clock_mhz: float) -> ClockPoint:
        if self._table is None:  # one vectorised pass over every offered clock
            t, e = self._mean(self._clocks)
            self._table = {f: (float(ti), float(ei)) for f, ti, ei in zip(self._clocks, t, e)}
        hit = self._table.get(float(sm_clock_mhz))
        if hit is None:
            t, e = self._mean([sm_clock_mhz])
            hit = (float(t[0]), float(e[0]))
        return ClockPoint.from_time_power(sm_clock_mhz, hit[0], hit[1] / hit[0], "modelled")


class RecordedBackend:
    """Points replayed from a recorded sweep.

    Args:
        sweep: the recorded sweep (time per image and board power per clock).
        caveat: optional note about the recording.
    """

    source = "recorded"

    def __init__(self, sweep: Sweep, caveat: str | None = None) -> None:
        self.sweep = sweep
        self.caveat = caveat

    def clocks_mhz(self) -> tuple[float, ...]:
        return self.sweep.clocks_mhz

    def default_clock_mhz(self) -> float:
        return self.sweep.default_clock_mhz

    def probe(self, sm_clock_mhz: float) -> ClockPoint:
        return self.sweep.point(sm_clock_mhz, "recorded")


class ClockPointError(CandidateError):
    """A measurement taken at a locked clock cannot give an operating point (e.g. no energy).

    (A failed measurement itself is `nasenergy.hardware.MeterError`.)"""


MeasurementError = ClockPointError
"""The former name of `ClockPointError`, kept for ``nasenergy.dvfs.MeasurementError``."""


def point_from_measurement(m: Measurement, sm_clock_mhz: float, source: str = "measured"
                           ) -> ClockPoint:
    """The operating point in a `Measurement` taken at `sm_clock_mhz` (total board energy).

    Raises:
        ClockPointError: the measurement has no power or energy, or energy above idle without an
            idle power.
    """
    if not m.throughput_img_per_s > 0:
        raise ClockPointError(f"measurement at {sm_clock_mhz:g} MHz has no throughput")
    t = 1.0 / m.throughput_img_per_s
    if m.avg_power_w is not None:
        return ClockPoint.from_time_power(sm_clock_mhz, t, m.avg_power_w, source)
    if m.energy_j_per_img is None:
        raise ClockPointError(f"measurement at {sm_clock_mhz:g} MHz has no power or energy; "
                               "clock search needs a meter that reads energy")
    power = m.energy_j_per_img / t
    if m.energy_basis == "above_idle":
        if m.idle_power_w is None:
            raise ClockPointError("energy above idle without an idle power")
        power += m.idle_power_w
    return ClockPoint.from_time_power(sm_clock_mhz, t, power, source)


class MeasuredBackend:
    """Points measured with the GPU clock locked at each probed clock.

    Args:
        control: the clock control (it must have been created with ``allow=True``).
        measure: takes one measurement of the workload at whatever clock is in force.
        clocks_mhz: clocks to offer; default: every clock the GPU supports.
    """

    source = "measured"

    def __init__(self, control: "ClockControl", measure: Callable[[], Measurement],
                 clocks_mhz: Sequence[float] | None = None) -> None:
        self.control = control
        self.measure = measure
        supported = control.supported_clocks_mhz()
        if clocks_mhz is None:
            self._clocks = tuple(float(c) for c in supported)
        else:
            self._clocks = tuple(sorted({float(control.snap(c)) for c in clocks_mhz}))
        if not self._clocks:
            raise UsageError("no clocks to measure at")
        self.caveat: str | None = None

    def clocks_mhz(self) -> tuple[float, ...]:
        return self._clocks

    def default_clock_mhz(self) -> float:
        return float(self.control.default_clock_mhz())

    def probe(self, sm_clock_mhz: float) -> ClockPoint:
        with self.control.locked(sm_mhz=sm_clock_mhz) as locked_mhz:
            m = self.measure()
        return point_from_measurement(m, float(locked_mhz), "measured")
