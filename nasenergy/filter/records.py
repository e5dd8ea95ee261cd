"""The records the filters read and write: evaluated candidates (`Observation`) and `Decision`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement
from nasenergy.objectives import OBJECTIVE_NAMES, objective_senses


class FilterError(UsageError, ValueError):
    """A bad option, input or saved state given to a utilization filter."""


OBJECTIVE_SENSES: dict[str, str] = objective_senses()
"""The figures a filter can compare a candidate on, with their senses."""

DEFAULT_OBJECTIVES: tuple[str, ...] = OBJECTIVE_NAMES
"""Column order of the fronts the filters compare against (as `nasenergy.pareto.NAS_OBJECTIVES`)."""


def check_objectives(objectives: Sequence[str]) -> tuple[str, ...]:
    """Validate a filter's objective names (a subset of `OBJECTIVE_SENSES` holding ``accuracy``)."""
    objs = tuple(objectives)
    bad = [o for o in objs if o not in OBJECTIVE_SENSES]
    if bad or "accuracy" not in objs or len(set(objs)) != len(objs):
        raise FilterError(
            f"objectives must be distinct names from {tuple(OBJECTIVE_SENSES)} including 'accuracy', "
            f"got {objs}"
        )
    return objs


def _opt_float(x: float | None) -> float | None:
    return None if x is None else float(x)


@dataclass(frozen=True)
class Observation:
    """One fully evaluated candidate: its cheap measurement and its (dear) accuracy.

    Attributes:
        measurement: the cheap hardware measurement at the default clock.
        accuracy: the accuracy found by the full evaluation, in the same unit as the front's
            accuracy column (e.g. percent).
        features: optional extra structural features (e.g. the cell's one-hot operations). Every
            observation a filter sees must have the same number of them, or none.
        throughput_img_per_s: the throughput as scored on the front (e.g. at the energy-optimal
            clock); ``None``: the measurement's.
        energy_j_per_img: the energy per image as scored on the front (e.g. at the energy-optimal
            clock); ``None``: the measurement's.
    """

    measurement: Measurement
    accuracy: float
    features: tuple[float, ...] | None = None
    throughput_img_per_s: float | None = None
    energy_j_per_img: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "accuracy", float(self.accuracy))
        if self.features is not None:
            object.__setattr__(self, "features", tuple(float(v) for v in self.features))

    def objective(self, name: str) -> float:
        """The figure ``name`` (``accuracy`` | ``throughput`` | ``energy``); NaN when unavailable."""
        if name == "accuracy":
            return self.accuracy
        if name == "throughput":
            v = self.throughput_img_per_s
            return float(self.measurement.throughput_img_per_s if v is None else v)
        if name == "energy":
            v = self.energy_j_per_img if self.energy_j_per_img is not None else self.measurement.energy_j_per_img
            return math.nan if v is None else float(v)
        raise FilterError(f"unknown objective {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return {
            "measurement": self.measurement.to_dict(),
            "accuracy": self.accuracy,
            "features": None if self.features is None else list(self.features),
            "throughput_img_per_s": self.throughput_img_per_s,
            "energy_j_per_img": self.energy_j_per_img,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Observation:
        """Inverse of `to_dict`.

        Raises:
            FilterError: a field missing or of the wrong type.
        """
        if not isinstance(d, dict):
            raise FilterError(f"a saved observation must be a JSON object, got {type(d).__name__}")
        features = d.get("features")
        if features is not None and not (isinstance(features, list) and all(_is_number(v) for v in features)):
            raise FilterError("a saved observation's features must be a list of numbers")
        for name in ("throughput_img_per_s", "energy_j_per_img"):
            check_field(f"observation {name}", d.get(name), "float | None")
        check_field("observation accuracy", d.get("accuracy"), "float")
        return cls(
            measurement=measurement_from_saved(d.get("measurement")),
            accuracy=d["accuracy"],
            features=None if features is None else tuple(float(v) for v in features),
            throughput_img_per_s=_opt_float(d.get("throughput_img_per_s")),
            energy_j_per_img=_opt_float(d.get("energy_j_per_img")),
        )


def measurement_from_saved(d: Any) -> Measurement:
    """A `Measurement` from its saved dict, every field checked for its type.

    Raises:
        FilterError: not a dict, a field missing, or of the wrong type.
    """
    if not isinstance(d, dict):
        raise FilterError(f"a saved measurement must be a JSON object, got {type(d).__name__}")
    for f in fields(Measurement):
        if f.name not in d:
            if f.default is None:  # a field added later (e.g. the board's identity): read as None
                continue
            raise FilterError(f"a saved measurement lacks {f.name}")
        check_field(f"measurement {f.name}", d[f.name], str(f.type))
    try:
        return Measurement.from_dict(d)
    except ValueError as exc:
        raise FilterError(f"bad saved measurement: {exc}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_field(name: str, value: Any, kind: str) -> None:
    """Raise `FilterError` unless ``value`` fits the annotation ``kind`` (as written in the source)."""
    if value is None and kind.endswith("| None"):
        return
    base = kind.replace("| None", "").strip()
    ok = {
        "float": _is_number(value),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "str": isinstance(value, str),
        "bool": isinstance(value, bool),
        "tuple[int, ...]": isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
    }.get(base, True)
    if not ok:
        raise FilterError(f"{name} must be {base.replace('tuple[int, ...]', 'a list of integers')}, "
                          f"got {type(value).__name__}")


@dataclass(frozen=True)
class Decision:
    """Whether a candidate deserves a full accuracy evaluation, and why.

    Only the figures the deciding filter used are set; the rest stay ``None``.

    Attributes:
        admit: ``True``: evaluate the candidate; ``False``: skip it.
        reason: one readable line.
        mode: the filter's mode (``none`` | ``threshold`` | ``dominance``).
        utilization: the candidate's measured utilization (0..1; NaN if unknown).
        n_observed: how many evaluated candidates the filter had seen.
        threshold: the utilization threshold τ (threshold mode).
        expected_recall: the recall of good candidates the filter was set up for: the empirical
            calibration recall (threshold) or the conformal target (dominance).
        recall_lower_bound: a one-sided lower confidence bound on recall (threshold mode with a
            confidence level).
        expected_pass_rate: the share of calibration candidates at or above τ (threshold mode).
        accuracy_predicted: the model's point prediction of accuracy (dominance mode).
        accuracy_lower: one-sided conformal lower bound on accuracy at the target level.
        accuracy_upper: one-sided conformal upper bound (the optimistic accuracy) at the target
            level; ``inf`` when too few evaluations exist to bound it.
        throughput_img_per_s_upper: optimistic throughput used for the dominance test.
        energy_j_per_img_lower: optimistic energy per image used for the dominance test.
        dominating_point: the front point that dominates the optimistic figures (skips only), in
            the filter's objective order.
        objectives: the objective names of ``dominating_point``.
    """

    admit: bool
    reason: str
    mode: str
    utilization: float
    n_observed: int = 0
    threshold: float | None = None
    expected_recall: float | None = None
    recall_lower_bound: float | None = None
    expected_pass_rate: float | None = None
    accuracy_predicted: float | None = None
    accuracy_lower: float | None = None
    accuracy_upper: float | None = None
    throughput_img_per_s_upper: float | None = None
    energy_j_per_img_lower: float | None = None
    dominating_point: tuple[float, ...] | None = None
    objectives: tuple[str, ...] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """A flat dict of JSON-safe values: tuples become lists, NaN and ±inf become ``None``."""

        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, tuple):
                return [clean(x) for x in v]
            return v

        return {k: clean(v) for k, v in asdict(self).items()}
