"""The common interface of the utilization filters, their saved state, and the pass-through mode.

A saved filter is one JSON file: its mode, options, mode-specific state (e.g. the calibrated
threshold) and every evaluated candidate it learnt from. Models are refitted from that data when
loaded (deterministically, from the saved seed), never pickled.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nasenergy.errors import DataNotFoundError, first_line, malformed_input
from nasenergy.filter.protocol import CandidateFilter
from nasenergy.filter.records import Decision, FilterError, Observation
from nasenergy.filter.registry import FILTERS, filter_kind
from nasenergy.measurement import Measurement

FORMAT = "nasenergy.filter"
FORMAT_VERSION = 1
MODES: tuple[str, ...] = FILTERS.names()
"""The built-in filter modes (`nasenergy.filter.registry.FILTERS` holds these and any registered later)."""


class UtilizationFilter(ABC):
    """Decides, from a cheap measurement, whether a candidate deserves a full accuracy evaluation.

    Use `UtilizationFilter.create` (or the subclasses directly) to build one, `fit` on already
    evaluated candidates, `admit` for each new candidate, `observe` each full evaluation's result,
    and `save`/`load` to reuse a calibrated filter.
    """

    mode: ClassVar[str]

    def __init__(self) -> None:
        self._observations: list[Observation] = []
        self._stale = True

    # ----- construction -------------------------------------------------------------------
    @staticmethod
    def create(mode: str, **options: Any) -> CandidateFilter:
        """A filter of the given registered mode (``dominance`` | ``threshold`` | ``none`` | ...,
        see `nasenergy.filter.registry`) with ``options``."""
        return filter_kind(mode).create(**options)

    # ----- learning -----------------------------------------------------------------------
    def fit(self, sample: Iterable[Observation]) -> UtilizationFilter:
        """Replace what the filter has learnt by ``sample`` (evaluated candidates); returns self."""
        obs = list(sample)
        if not all(isinstance(o, Observation) for o in obs):
            raise FilterError("fit() takes Observation records (measurement + accuracy)")
        self._observations = obs
        self._stale = True
        self._validate_observations()
        return self

    def observe(
        self,
        measurement: Measurement,
        accuracy: float,
        *,
        features: Sequence[float] | np.ndarray | None = None,
        throughput_img_per_s: float | None = None,
        energy_j_per_img: float | None = None,
    ) -> None:
        """Learn the result of one full evaluation (the filter refits before its next decision).

        Args:
            measurement: the candidate's cheap measurement.
            accuracy: its evaluated accuracy (same unit as the front's accuracy column).
            features: the extra features passed to `admit` for it, if any.
            throughput_img_per_s: throughput as scored on the front, if not the measurement's.
            energy_j_per_img: energy per image as scored on the front, if not the measurement's.
        """
        if not math.isfinite(float(accuracy)):
            raise FilterError(f"accuracy must be a finite number, got {accuracy!r}")
        self._observations.append(
            Observation(
                measurement=measurement,
                accuracy=accuracy,
                features=None if features is None else tuple(np.asarray(features, dtype=float).ravel()),
                throughput_img_per_s=throughput_img_per_s,
                energy_j_per_img=energy_j_per_img,
            )
        )
        try:
            self._validate_observations()
        except FilterError:
            self._observations.pop()
            raise
        self._stale = True

    @property
    def observations(self) -> list[Observation]:
        """The evaluated candidates learnt so far (a copy)."""
        return list(self._observations)

    @property
    def n_observed(self) -> int:
        """How many evaluated candidates the filter has learnt from."""
        return len(self._observations)

    def _validate_observations(self) -> None:
        """Raise `FilterError` when the observations cannot be used together (subclass hook)."""

    # ----- deciding -----------------------------------------------------------------------
    @abstractmethod
    def admit(
        self,
        measurement: Measurement,
        front: Any = None,
        *,
        features: Sequence[float] | np.ndarray | None = None,
    ) -> Decision:
        """Decide whether the measured candidate deserves a full evaluation.

        Args:
            measurement: the candidate's cheap measurement.
            front: the current Pareto front of fully evaluated candidates: a
                `nasenergy.pareto.ParetoFront` or an array of rows in the filter's objective order
                (modes that do not use it ignore it).
            features: optional extra features (same layout as in `observe`).
        """

    # ----- persistence --------------------------------------------------------------------
    @abstractmethod
    def options(self) -> dict[str, Any]:
        """The constructor options, JSON-serialisable."""

    def _state(self) -> dict[str, Any]:
        """Mode-specific saved state beyond options and observations (subclass hook)."""
        return {}

    def _restore_state(self, state: dict[str, Any]) -> None:
        """Inverse of `_state` (subclass hook)."""

    def to_dict(self) -> dict[str, Any]:
        """The whole filter as a JSON-serialisable dict."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "mode": self.mode,
            "options": self.options(),
            "state": self._state(),
            "observations": [o.to_dict() for o in self._observations],
        }

    @staticmethod
    def from_dict(d: dict[str, Any], **overrides: Any) -> UtilizationFilter:
        """Inverse of `to_dict`; ``overrides`` replace or add constructor options (e.g. a custom
        ``energy_bound`` callable, which cannot be saved)."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise FilterError("not a saved nasenergy filter")
        if d.get("version") != FORMAT_VERSION:
            raise FilterError(f"unsupported saved filter version {d.get('version')!r}")
        mode, options = d.get("mode"), d.get("options", {})
        observations, state = d.get("observations", []), d.get("state", {})
        if not isinstance(mode, str):
            raise FilterError(f"corrupt saved filter: mode must be one of {FILTERS.names()}, got {mode!r}"[:300])
        for name, value, kind in (("options", options, dict), ("state", state, dict),
                                  ("observations", observations, list)):
            if not isinstance(value, kind):
                raise FilterError(f"corrupt saved filter: {name} must be a JSON {'object' if kind is dict else 'array'}")
        with malformed_input(FilterError, "corrupt saved filter"):
            flt = UtilizationFilter.create(mode, **{**options, **overrides})
            if not isinstance(flt, UtilizationFilter):
                raise FilterError(f"saved filter mode {mode!r} does not make a UtilizationFilter, which saving needs")
            flt._observations = [Observation.from_dict(o) for o in observations]
            flt._validate_observations()
            flt._stale = True
            flt._restore_state(state)
        return flt

    def save(self, path: str | Path) -> Path:
        """Write the filter to a JSON file (parent folders are created); returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        tmp.replace(p)
        return p

    @staticmethod
    def load(path: str | Path, **overrides: Any) -> UtilizationFilter:
        """Read a filter written by `save` (its class follows its saved mode)."""
        p = Path(path)
        if not p.is_file():
            raise DataNotFoundError(f"no saved filter at {p}")
        try:
            d = json.loads(p.read_text())
        except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, absurd nesting
            raise FilterError(f"{p} is not valid JSON: {first_line(exc)}") from None
        try:
            return UtilizationFilter.from_dict(d, **overrides)
        except FilterError as exc:
            raise FilterError(f"{p}: {exc}") from None


class PassThroughFilter(UtilizationFilter):
    """Mode ``none``: admits every candidate (a baseline, and a way to switch filtering off)."""

    mode = "none"

    def admit(
        self,
        measurement: Measurement,
        front: Any = None,
        *,
        features: Sequence[float] | np.ndarray | None = None,
    ) -> Decision:
        """Always admits."""
        return Decision(
            admit=True,
            reason="filtering is off (mode none)",
            mode=self.mode,
            utilization=float(measurement.utilization),
            n_observed=self.n_observed,
        )

    def options(self) -> dict[str, Any]:
        """No options."""
        return {}

