"""Three sources of operating points behind one interface, `ClockBackend`.

* `MeasuredBackend` (``measured``): locks the GPU clock through `ClockControl` and runs a meter at
  each probed clock.
* `ModelledBackend` (``modelled``): the DVFS model (`nasenergy.dvfs.model`) from one
  default-clock observation.
* `RecordedBackend` (``recorded``): replays a sweep recorded earlier, here or elsewhere
  (`nasenergy.dvfs.sweeps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
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
