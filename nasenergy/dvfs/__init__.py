"""DVFS: energy per image at each network's energy-optimal GPU SM clock.

* `ClockControl` locks the SM clock through NVML (opt-in only) and always restores it;
  `recover_stale_locks` repairs locks left by a killed process.
* `DvfsModel` predicts time, power and energy per image at any clock from one default-clock
  measurement and a per-GPU `GpuDvfsParams` (equations in `nasenergy.dvfs.model`); `calibrate`
  fits the parameters to measured sweeps; shipped sets via `shipped_params` / `params_for_device`;
  any other NVIDIA GPU gets a ``generic`` set from NVML facts (`GpuFacts`, `generic_params`).
* Backends `MeasuredBackend`, `ModelledBackend`, `RecordedBackend` return `ClockPoint`s;
  `find_optimal_clock` searches any of them with few probes and returns an `OptimalClock`.
* `optimal_clock_for`, `optimistic_energy_bound` and `show_curve` work from a `Measurement`.
* On your own measurements: `resolve_params(measurement, facts=facts_from_measurement(...))`
  (no device handle needed), then `optimal_clock_for(measurement, params=...)`; or build a
  `WorkloadObservation` and call `DvfsModel(params).curve(...)` / `choose_clock` directly.

Names are imported lazily: importing this package needs only numpy.
"""

from __future__ import annotations

from nasenergy._lazy import lazy_getattr

_EXPORTS = {
    "ClockPoint": "points", "OptimalClock": "points", "MODES": "points",
    "MIN_ENERGY": "points", "BOUNDED_SLOWDOWN": "points", "MIN_EDP": "points",
    "GpuDvfsParams": "params", "AlphaPredictor": "params", "ParamsError": "params",
    "shipped_params": "params", "params_for_device": "params", "extrapolate_params": "params",
    "DvfsModel": "model", "WorkloadObservation": "model",
    "observation_from_measurement": "model",
    "Sweep": "sweeps", "read_sweep_csv": "sweeps", "read_sweeps_csv": "sweeps",
    "write_sweeps_csv": "sweeps",
    "calibrate": "calibration", "Calibration": "calibration",
    "ClockBackend": "backends", "ModelledBackend": "backends", "RecordedBackend": "backends",
    "ExpectedBackend": "backends",
    "MeasuredBackend": "backends", "ClockPointError": "backends",
    "MeasurementError": "backends",  # the former name of ClockPointError
    "find_optimal_clock": "clock_search", "exhaustive_search": "clock_search",
    "ClockControl": "control", "recover_stale_locks": "control",
    "ClockControlError": "control", "ClockControlRefused": "control",
    "ClockPermissionError": "control", "ClockControlInterrupted": "control",
    "optimal_clock_for": "api", "optimistic_energy_bound": "api", "show_curve": "api",
    "resolve_params": "api", "saving_band": "api", "band_members": "api", "choose_clock": "api",
    "clock_backend": "api", "search_clock": "api",
    "GpuFacts": "generic", "generic_params": "generic", "GENERIC_LABEL": "generic",
    "facts_from_measurement": "generic", "estimate_idle_power_w": "generic",
    "with_board_power_limit": "params", "POWER_CAP_FRAC": "params",
    "alpha_from_neighbour": "model", "is_power_capped": "api", "candidate_clocks": "api",
    "optimal_clock_for_observation": "api",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
