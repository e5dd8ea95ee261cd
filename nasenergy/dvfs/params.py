"""Per-GPU parameters of the DVFS model (`GpuDvfsParams`), their JSON form and the shipped sets.

A parameter set describes one GPU model: its supported SM clocks, power figures, the shape of its
voltage/frequency curve and how the compute-bound share ``alpha`` of a workload is predicted from
figures read at the default clock. The equations that use them are in `nasenergy.dvfs.model`.

Shipped sets live as JSON files beside this module (``params/*.json``). They are written by
``experiments/dvfs_calibrate.py`` from published clock sweeps; the H200 set is an extrapolation
(no measured H200 sweep exists) and says so in its ``caveat``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from nasenergy.errors import DataNotFoundError, UsageError

FORMAT = "nasenergy.dvfs.params/1"

#: Features an `AlphaPredictor` may use, all readable at the default clock without changing it:
#: ``power_frac`` = (board power - idle power) / (power limit - idle power);
#: ``flop_util`` = achieved / peak arithmetic rate (`Measurement.utilization`; DCGM pipe activity);
#: ``sm_active`` = fraction of time SMs are busy (DCGM field 1002, NVML GPM SM_UTIL / 100);
#: ``dram_active`` = fraction of peak DRAM bandwidth in use (DCGM 1005, NVML GPM DRAM_BW_UTIL / 100);
#: ``gpu_busy`` = fraction of time a kernel runs (NVML utilization.gpu / 100, DCGM 1001);
#: ``compute_share`` = ``sm_active * (1 - dram_active)``, the share of time the SMs are busy while
#: DRAM bandwidth is not the limit (`compute_share`; equation 6 of `nasenergy.dvfs.model`).
FEATURES: tuple[str, ...] = ("power_frac", "flop_util", "sm_active", "dram_active", "gpu_busy",
                             "compute_share")


def compute_share(sm_active: float | None, dram_active: float | None) -> float | None:
    """``sm_active * (1 - dram_active)`` (both fractions 0..1, clipped), or ``None`` if either is
    missing: the default-clock estimate of how much of a workload's time the SM clock drives."""
    if not (_present(sm_active) and _present(dram_active)):
        return None
    sm = min(1.0, max(0.0, float(sm_active)))  # type: ignore[arg-type]
    dram = min(1.0, max(0.0, float(dram_active)))  # type: ignore[arg-type]
    return sm * (1.0 - dram)

#: A run drawing at least this share of the power limit is held at the limit (power-capped).
POWER_CAP_FRAC = 0.97

#: A board power limit differing from a set's by more than this share replaces it
#: (`with_board_power_limit`).
POWER_LIMIT_TOLERANCE = 0.02

#: Where a parameter set comes from: fitted to measured sweeps of this GPU, carried over from
#: another GPU's fit, or built for any GPU from NVML facts (`nasenergy.dvfs.generic`).
PROVENANCES: tuple[str, ...] = ("calibrated", "extrapolated", "generic")

_PARAMS_DIR = Path(__file__).resolve().parent / "params"


class ParamsError(UsageError):
    """A DVFS parameter file or value is malformed."""


@dataclass(frozen=True)
class AlphaPredictor:
    """A clipped linear predictor of the compute-bound share ``alpha`` of a workload.

    ``alpha = clip(intercept + sum(coef[k] * x[features[k]]), lo, hi)``.

    Attributes:
        features: names from `FEATURES` the predictor reads.
        coef: one weight per feature.
        intercept: the constant term.
        lo: lower clip (the smallest alpha seen in calibration).
        hi: upper clip (at most 1).
        rmse: root-mean-square residual of ``alpha`` in calibration (0 if unknown); the width of
            the saving band (`nasenergy.dvfs.api.saving_band`).
    """

    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    lo: float
    hi: float = 1.0
    rmse: float = 0.0

    def __post_init__(self) -> None:
        if len(self.features) != len(self.coef):
            raise ParamsError("alpha predictor: one coefficient per feature is needed")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ParamsError(f"alpha predictor: unknown feature(s) {unknown}; known: {FEATURES}")
        if not 0.0 < self.lo <= self.hi <= 1.0:
            raise ParamsError(f"alpha predictor: need 0 < lo <= hi <= 1, got {self.lo}, {self.hi}")

    def usable_with(self, features: Mapping[str, float | None]) -> bool:
        """Whether every feature this predictor needs is present (not ``None``/NaN)."""
        return all(_present(features.get(f)) for f in self.features)

    def predict(self, features: Mapping[str, float | None]) -> float:
        """The predicted ``alpha`` for one workload's default-clock `features`."""
        if not self.usable_with(features):
            missing = [f for f in self.features if not _present(features.get(f))]
            raise UsageError(f"alpha predictor needs feature(s) {missing}")
        value = self.intercept + sum((c * float(features[f] or 0.0) for f, c in zip(self.features, self.coef)), 0.0)
        return min(self.hi, max(self.lo, value))


def _present(value: Any) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


@dataclass(frozen=True)
class GpuDvfsParams:
    """The DVFS model parameters of one GPU model (see `nasenergy.dvfs.model` for the equations).

    Attributes:
        name: short identifier, e.g. ``"a100-sxm4"``.
        gpu: human-readable GPU description.
        device_patterns: case-insensitive substrings of NVML device names this set applies to.
        supported_clocks_mhz: SM clocks the model may be evaluated at, ascending, MHz.
        default_clock_mhz: the clock the GPU runs at by default under load, MHz.
        power_limit_w: board power limit, watts.
        idle_power_w: board power of the idle GPU, watts (used when a measurement lacks one).
        static_power_w: ``P_s``, board power that does not scale with clock or work, watts.
        knee_clock_mhz: ``f_knee``, below this the core voltage stays at its floor, MHz.
        v_floor: ``V(f <= f_knee) / V(f_max)``.
        v_exponent: ``q``, shape of the voltage rise above the knee (1 = linear).
        per_cycle_share: ``beta``, share of dynamic power that follows clock cycles rather than
            completed work.
        overlap_exponent: ``p``, how compute and clock-independent time combine (1 = they add).
        alpha_predictors: predictors of ``alpha``, most informative first; the first one whose
            features a workload has is used.
        provenance: ``calibrated`` (fitted to measured sweeps), ``extrapolated`` or ``generic``.
        caveat: what limits this set, shown wherever its predictions are; ``None`` if nothing.
        sources: ``(parameter, citation)`` pairs: where each constant comes from.
        fit: ``(metric, value)`` pairs describing the calibration fit.
    """

    name: str
    gpu: str
    device_patterns: tuple[str, ...]
    supported_clocks_mhz: tuple[float, ...]
    default_clock_mhz: float
    power_limit_w: float
    idle_power_w: float
    static_power_w: float
    knee_clock_mhz: float
    v_floor: float
    v_exponent: float
    per_cycle_share: float
    overlap_exponent: float
    alpha_predictors: tuple[AlphaPredictor, ...]
    provenance: str = "calibrated"
    caveat: str | None = None
    sources: tuple[tuple[str, str], ...] = ()
    fit: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        clocks = tuple(float(c) for c in self.supported_clocks_mhz)
        if len(clocks) < 2 or any(b <= a for a, b in zip(clocks, clocks[1:])):
            raise ParamsError(f"{self.name}: supported clocks must be >= 2 ascending distinct values")
        object.__setattr__(self, "supported_clocks_mhz", clocks)
        checks = [
            (self.provenance in PROVENANCES, "provenance must be " + "|".join(PROVENANCES)),
            (clocks[0] <= self.default_clock_mhz <= clocks[-1] + 1e-9,
             "default clock must lie within the supported clocks"),
            (self.power_limit_w > self.idle_power_w > 0, "need power_limit_w > idle_power_w > 0"),
            (self.static_power_w >= 0, "static_power_w must be >= 0"),
            (0 < self.knee_clock_mhz < clocks[-1], "knee must lie below the highest clock"),
            (0 < self.v_floor <= 1, "v_floor must be in (0, 1]"),
            (self.v_exponent >= 1, "v_exponent must be >= 1"),
            (0 <= self.per_cycle_share <= 1, "per_cycle_share must be in [0, 1]"),
            (self.overlap_exponent >= 1, "overlap_exponent must be >= 1"),
            (len(self.alpha_predictors) >= 1, "at least one alpha predictor is needed"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ParamsError(f"{self.name}: {msg}")

    @property
    def max_clock_mhz(self) -> float:
        """The highest supported clock, MHz."""
        return self.supported_clocks_mhz[-1]

    def source_of(self, key: str) -> str | None:
        """The citation recorded for parameter `key`, or ``None``."""
        return dict(self.sources).get(key)

    def matches(self, device_name: str) -> bool:
        """Whether `device_name` (as NVML reports it) contains one of `device_patterns`."""
        low = device_name.lower()
        return any(p.lower() in low for p in self.device_patterns)

    # ---------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the file format, with a ``format`` tag)."""
        d = dataclasses.asdict(self)
        d["alpha_predictors"] = [dataclasses.asdict(a) for a in self.alpha_predictors]
        d["sources"] = dict(self.sources)
        d["fit"] = dict(self.fit)
        return {"format": FORMAT, **d}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GpuDvfsParams":
        """Inverse of `to_dict`.

        Raises:
            ParamsError: wrong format tag, missing or malformed fields.
        """
        if d.get("format") != FORMAT:
            raise ParamsError(f"not a DVFS parameter set (format {d.get('format')!r}, want {FORMAT!r})")
        try:
            preds = tuple(
                AlphaPredictor(tuple(a["features"]), tuple(float(c) for c in a["coef"]),
                               float(a["intercept"]), float(a["lo"]), float(a.get("hi", 1.0)),
                               float(a.get("rmse", 0.0)))
                for a in d["alpha_predictors"])
            return cls(
                name=str(d["name"]), gpu=str(d["gpu"]),
                device_patterns=tuple(str(p) for p in d["device_patterns"]),
                supported_clocks_mhz=tuple(float(c) for c in d["supported_clocks_mhz"]),
                default_clock_mhz=float(d["default_clock_mhz"]),
                power_limit_w=float(d["power_limit_w"]), idle_power_w=float(d["idle_power_w"]),
                static_power_w=float(d["static_power_w"]), knee_clock_mhz=float(d["knee_clock_mhz"]),
                v_floor=float(d["v_floor"]), v_exponent=float(d["v_exponent"]),
                per_cycle_share=float(d["per_cycle_share"]),
                overlap_exponent=float(d["overlap_exponent"]),
                alpha_predictors=preds, provenance=str(d.get("provenance", "calibrated")),
                caveat=d.get("caveat"),
                sources=tuple((str(k), str(v)) for k, v in dict(d.get("sources", {})).items()),
                fit=tuple((str(k), float(v)) for k, v in dict(d.get("fit", {})).items()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ParamsError):
                raise
            raise ParamsError(f"malformed DVFS parameter set: {exc!r}") from None

    def to_json(self) -> str:
        """The JSON text of this set."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "GpuDvfsParams":
        """Parse JSON text written by `to_json`."""
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise ParamsError(f"DVFS parameter file is not valid JSON: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write this set as JSON to `path`; returns the path."""
        p = Path(path)
        p.write_text(self.to_json())
        return p

    @classmethod
    def load(cls, path: str | Path) -> "GpuDvfsParams":
        """Read a set written by `save`.

        Raises:
            DataNotFoundError: no such file.
            ParamsError: the file is malformed.
        """
        p = Path(path)
        if not p.is_file():
            raise DataNotFoundError(f"DVFS parameter file not found: {p}")
        return cls.from_json(p.read_text())


def shipped_params(directory: str | Path | None = None) -> dict[str, GpuDvfsParams]:
    """The parameter sets shipped with nasenergy (or those in `directory`), by name."""
    d = Path(directory) if directory is not None else _PARAMS_DIR
    sets = [GpuDvfsParams.load(p) for p in sorted(d.glob("*.json"))]
    return {s.name: s for s in sets}


def params_for_device(device_name: str, candidates: Iterable[GpuDvfsParams] | None = None
                      ) -> GpuDvfsParams:
    """The parameter set whose `device_patterns` match `device_name` (longest pattern wins).

    Raises:
        UsageError: no set matches.
    """
    sets = list(candidates) if candidates is not None else list(shipped_params().values())
    best: tuple[int, GpuDvfsParams] | None = None
    for s in sets:
        for pat in s.device_patterns:
            if pat.lower() in device_name.lower() and (best is None or len(pat) > best[0]):
                best = (len(pat), s)
    if best is None:
        known = ", ".join(f"{s.name} ({'/'.join(s.device_patterns)})" for s in sets) or "none"
        raise UsageError(f"no DVFS parameter set for device {device_name!r}; known: {known}")
    return best[1]


def extrapolate_params(base: GpuDvfsParams, *, name: str, gpu: str,
                       device_patterns: tuple[str, ...], supported_clocks_mhz: tuple[float, ...],
                       default_clock_mhz: float, power_limit_w: float, idle_power_w: float,
                       caveat: str, sources: Mapping[str, str] | None = None) -> GpuDvfsParams:
    """A parameter set for a GPU without measured sweeps, carried over from `base`.

    Shape parameters are kept in relative units: the knee stays at the same fraction of the
    highest clock, the static power at the same ratio to idle power; ``v_floor``, ``v_exponent``,
    ``per_cycle_share``, ``overlap_exponent`` and the alpha predictors (whose features are
    normalised by idle power and power limit) are copied. The result has ``provenance =
    "extrapolated"`` and the given `caveat`.
    """
    clocks = tuple(sorted(float(c) for c in supported_clocks_mhz))
    knee_frac = base.knee_clock_mhz / base.max_clock_mhz
    static_ratio = base.static_power_w / base.idle_power_w
    src = {k: f"carried over from {base.name}: {v}" for k, v in base.sources}
    src.update({
        "knee_clock_mhz": f"{base.name} knee at {knee_frac:.3f} x its highest clock, scaled",
        "static_power_w": f"{base.name} static/idle ratio {static_ratio:.3f} x idle_power_w",
    })
    src.update(dict(sources or {}))
    return dataclasses.replace(
        base, name=name, gpu=gpu, device_patterns=tuple(device_patterns),
        supported_clocks_mhz=clocks, default_clock_mhz=float(default_clock_mhz),
        power_limit_w=float(power_limit_w), idle_power_w=float(idle_power_w),
        static_power_w=static_ratio * float(idle_power_w),
        knee_clock_mhz=knee_frac * clocks[-1], provenance="extrapolated", caveat=caveat,
        sources=tuple(src.items()), fit=(),
    )


def with_board_power_limit(params: GpuDvfsParams, board_limit_w: float, *,
                           source: str = "NVML") -> GpuDvfsParams:
    """`params` with the power limit in force on the board, where it differs from the set's by
    more than `POWER_LIMIT_TOLERANCE` (e.g. the A100 set, calibrated on a 500 W board, used on a
    400 W SXM4 or 250 W PCIe board). The limit enters the power fraction of equation (5) and the
    power-cap test; the caveat says it was replaced.

    Raises:
        ParamsError: the board's limit is not above the set's idle power.
    """
    limit = float(board_limit_w)
    if not math.isfinite(limit) or abs(limit - params.power_limit_w) <= (
            POWER_LIMIT_TOLERANCE * params.power_limit_w):
        return params
    if not limit > params.idle_power_w:
        raise ParamsError(f"{params.name}: board power limit {limit:g} W is not above the set's "
                          f"idle power {params.idle_power_w:g} W")
    note = (f"power limit {limit:g} W read from the board ({source}) replaces the set's "
            f"{params.power_limit_w:g} W")
    src = dict(params.sources)
    src["power_limit_w"] = f"{source} (the set's own: {params.power_limit_w:g} W, " + (
        src.get("power_limit_w", "unrecorded") + ")")
    return dataclasses.replace(params, power_limit_w=limit, sources=tuple(src.items()),
                               caveat=(params.caveat + "; " if params.caveat else "") + note)
