"""Screening: several cheaply measured proposals per full evaluation, and the one to evaluate.

Throughput and energy per image of any candidate are cheap (one measurement, or a recorded
profile); only accuracy is dear. With ``--screen K`` the worker measures at least ``K`` new
candidates per full evaluation (`nasenergy.search.pipeline`): those the utilization filter
rejects are told as usual; those it admits wait in a pool, each an Optuna trial still in
progress. Once ``K`` candidates were measured and the pool holds one, the full evaluation goes
to the pooled candidate `Screener.choose` ranks first; the others are recorded ``filtered`` with
a ``screened out`` reason, their trials ended ``FAIL`` (Optuna's samplers leave failed trials out
of their models, so the sampler is not taught that the region a promising candidate came from is
poor). Late in a search, when the filter rejects most proposals, a round often holds a single
admitted candidate and screening changes nothing.

The ranking is the *expected hypervolume improvement* of each candidate over the front of the
run's own full evaluations, with the candidate's accuracy predicted by a model fitted on those
evaluations only (no accuracy from outside the run) and its throughput and energy those the
filter's hardware bound gives (the modelled optimal-clock figures under a modelled DVFS step):

* the model is gradient boosting (`nasenergy.filter.conformal.make_estimator`) on the filter's
  features (the cheap figures and the space's structural features), refitted whenever new
  evaluations arrived;
* the predicted accuracy is raised by an exploration bonus, ``explore`` times the model's
  residual spread (root-mean-square in-sample error, floored at ``min_spread_pp`` points);
* the hypervolume is the 3-D one of `nasenergy.pareto.hypervolume` in the objectives' own units
  against the worst corner of the evaluated and screened points (an improvement does not depend
  on the units: scaling an axis scales every improvement alike);
* a candidate with no improvement is ranked by its shortfall (how far it is from being
  non-dominated), so the least dominated one is chosen when none improves.

Before ``min_fit`` evaluations there is no model: the candidate proposed first (the sampler's own
choice) is evaluated. The defaults (``K`` 4 in ``experiments/search_efficiency.py``, ``min_fit``
4, ``explore`` 1) were chosen on CIFAR-10 runs; ``results/search_efficiency/README.md`` lists
the variants tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nasenergy.filter.conformal import make_estimator
from nasenergy.filter.features import candidate_features
from nasenergy.measurement import Measurement
from nasenergy.pareto import hypervolume

SENSES: dict[str, str] = {"accuracy": "maximize", "throughput": "maximize", "energy": "minimize"}
"""Each objective's sense (the search's objective names)."""

DEFAULT_MIN_FIT = 4
"""Evaluations before the screener ranks candidates (before: the sampler's own choice)."""
DEFAULT_EXPLORE = 1.0
"""Default exploration bonus, in residual spreads added to the predicted accuracy."""
DEFAULT_MIN_SPREAD_PP = 0.5
"""Floor of the residual spread, in accuracy percentage points."""

HardwareFigures = Callable[[Measurement], tuple[float, float]]
"""A candidate's (throughput img/s, energy J/img) as the search will score them, from its cheap
measurement."""


@dataclass(frozen=True)
class Screened:
    """One candidate waiting to be screened.

    Attributes:
        measurement: its cheap measurement.
        features: its structural features (the space's `features`), or ``None``.
        payload: what the caller needs to evaluate or dismiss it (e.g. the trial).
    """

    measurement: Measurement
    features: Sequence[float] | None = None
    payload: Any = None


@dataclass(frozen=True)
class Ranking:
    """What `Screener.choose` decided.

    Attributes:
        chosen: the index of the candidate to evaluate.
        scores: each candidate's score (hypervolume improvement, or minus its shortfall).
        predicted: each candidate's predicted accuracy with the bonus (NaN without a model).
        reason: one line for the dismissed candidates' records.
    """

    chosen: int
    scores: tuple[float, ...]
    predicted: tuple[float, ...]
    reason: str


class Screener:
    """Ranks cheaply measured candidates by expected hypervolume improvement.

    Args:
        objectives: the search's objective names, in front-column order (``accuracy`` first).
        hardware: a candidate's scored (throughput, energy) from its measurement.
        min_fit: evaluations needed before ranking (see `DEFAULT_MIN_FIT`).
        estimator: the accuracy model (`nasenergy.filter.conformal.ESTIMATORS`).
        explore: the exploration bonus in residual spreads (see `DEFAULT_EXPLORE`).
        min_spread_pp: the floor of the spread (see `DEFAULT_MIN_SPREAD_PP`).
        seed: the model's random state.
    """

    def __init__(
        self,
        objectives: Sequence[str],
        hardware: HardwareFigures,
        *,
        min_fit: int = DEFAULT_MIN_FIT,
        estimator: str = "gbr",
        explore: float = DEFAULT_EXPLORE,
        min_spread_pp: float = DEFAULT_MIN_SPREAD_PP,
        seed: int = 0,
    ) -> None:
        self.objectives = tuple(objectives)
        if not self.objectives or self.objectives[0] != "accuracy":
            raise ValueError(f"screening needs accuracy as the first objective, got {self.objectives}")
        if int(min_fit) < 2:
            raise ValueError(f"min_fit must be at least 2, got {min_fit}")
        if not (math.isfinite(explore) and explore >= 0):
            raise ValueError(f"explore must be a finite number >= 0, got {explore}")
        self.hardware = hardware
        self.min_fit = int(min_fit)
        self.estimator = estimator
        self.explore = float(explore)
        self.min_spread_pp = float(min_spread_pp)
        self.seed = int(seed)
        self._x: list[np.ndarray] = []
        self._y: list[float] = []
        self._points: list[np.ndarray] = []
        self._model: Any = None
        self._spread = math.inf
        self._n_at_fit = 0

    @property
    def n_observed(self) -> int:
        """Evaluations learnt so far."""
        return len(self._y)

    def observe(self, measurement: Measurement, features: Sequence[float] | None, scored: Sequence[float]) -> None:
        """Learn one full evaluation: its measurement, features and scored objective row."""
        self._x.append(candidate_features(measurement, features))
        row = np.asarray(scored, dtype=float)
        self._y.append(float(row[0]))
        self._points.append(row)

    def _fit(self) -> bool:
        if self.n_observed < self.min_fit:
            return False
        if self._model is None or self._n_at_fit != self.n_observed:
            x, y = np.vstack(self._x), np.asarray(self._y)
            model = make_estimator(self.estimator, None, self.seed)
            model.fit(x, y)
            resid = y - model.predict(x)
            self._model, self._n_at_fit = model, self.n_observed
            self._spread = max(self.min_spread_pp, float(np.sqrt(np.mean(resid**2))))
        return True

    def _row(self, cand: Screened, accuracy: float) -> np.ndarray:
        thr, energy = self.hardware(cand.measurement)
        values = {"accuracy": accuracy, "throughput": thr, "energy": energy}
        return np.array([values[o] for o in self.objectives], dtype=float)

    def choose(self, candidates: Sequence[Screened]) -> Ranking:
        """The candidate to evaluate among ``candidates`` (at least one)."""
        if not candidates:
            raise ValueError("nothing to screen")
        n = len(candidates)
        if not self._fit():
            reason = f"screened out: the sampler's first proposal is evaluated until {self.min_fit} evaluations"
            return Ranking(0, (0.0,) * n, (math.nan,) * n, reason)
        x = np.vstack([candidate_features(c.measurement, c.features) for c in candidates])
        predicted = self._model.predict(x) + self.explore * self._spread
        rows = np.vstack([self._row(c, float(a)) for c, a in zip(candidates, predicted)])
        scores = improvement_scores(rows, np.vstack(self._points), [SENSES[o] for o in self.objectives])
        best = int(np.argmax(scores))
        reason = (f"screened out: trial of expected hypervolume improvement {scores[best]:.4g} chosen among {n} "
                  "measured candidates")
        return Ranking(best, tuple(float(s) for s in scores), tuple(float(p) for p in predicted), reason)


def improvement_scores(candidates: np.ndarray, evaluated: np.ndarray, senses: Sequence[str]) -> np.ndarray:
    """Each candidate row's hypervolume improvement over the front of ``evaluated`` rows; a
    candidate with none scores minus its shortfall (the smallest gain, as a share of each
    objective's range, in one objective beyond every row dominating it, that would make it
    non-dominated), so any improving one ranks first.

    The reference point is the worst corner of all the rows, moved out by 1 % of each range.
    """
    signs = np.array([1.0 if s == "maximize" else -1.0 for s in senses])
    cand = np.asarray(candidates, dtype=float) * signs
    ev = np.asarray(evaluated, dtype=float).reshape(-1, len(signs)) * signs
    ev = ev[~np.isnan(ev).any(axis=1)]
    allrows = np.vstack([cand, ev]) if len(ev) else cand
    lo, hi = np.nanmin(allrows, axis=0), np.nanmax(allrows, axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    ref = lo - 0.01 * span
    maxi = ["maximize"] * len(signs)
    base = hypervolume(ev, ref, maxi) if len(ev) else 0.0
    out = np.empty(len(cand))
    for i, c in enumerate(cand):
        if np.isnan(c).any():
            out[i] = -math.inf
            continue
        gain = hypervolume(np.vstack([ev, c[None, :]]), ref, maxi) - base if len(ev) else float(np.prod(c - ref))
        if gain > 0:
            out[i] = gain
            continue
        dominating = ev[(ev >= c).all(axis=1)]
        shortfall = np.max(((dominating - c) / span).min(axis=1)) if len(dominating) else 0.0
        out[i] = -float(shortfall) - 1e-12
    return out
