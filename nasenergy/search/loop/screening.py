"""Screening: several cheaply measured proposals per full evaluation, and the one to evaluate.

Throughput and energy per image of any candidate are cheap (one measurement, or a recorded
profile); only accuracy is dear. With ``--screen K`` the worker measures at least ``K`` new
candidates per full evaluation (`nasenergy.search.loop.pipeline`): those the utilization filter
rejects are told as usual; those it admits wait in a pool, each an Optuna trial still in
progress. Once ``K`` candidates were measured and the pool holds one, the full evaluation goes
to the pooled candidate `Screener.choose` ranks first; up to ``reserve`` of the next best that
still promise an improvement stay in the pool for the next screening (so a promising network the
model misjudged early is ranked again once it learnt more); the others are recorded ``filtered``
with a ``screened out`` reason, their trials ended ``FAIL`` (Optuna's samplers leave failed trials
out of their models, so the sampler is not taught that the region a promising candidate came from
is poor). Late in a search, when the filter rejects most proposals, a round often holds a single
admitted candidate and screening changes nothing.

The ranking is the *expected hypervolume improvement* of each candidate over the front of the
run's own full evaluations, with the candidate's accuracy a normal distribution predicted from
those evaluations only (no accuracy from outside the run) and its throughput and energy those the
filter's hardware bound gives (the modelled optimal-clock figures under a modelled DVFS step):

* a candidate whose *group* (its deployed network, `Screened.group`: cells spelt differently that
  compute the same function) the run evaluated twice or more: the mean and standard deviation of
  those evaluations (a group evaluated alike, such as the networks whose cell outputs zero,
  promises nothing more); evaluated once: that value, with the within-group spread pooled over
  the run's repeated groups;
* any other: gradient boosting (`nasenergy.filter.conformal.make_estimator`) on the filter's
  features (by default the cheap figures and the space's structural features; ``--filter-features``
  chooses others, `nasenergy.search.command.filter_features`), with its cross-validated
  residual spread (floored at ``min_spread_pp`` points); refitted as the evaluations grow;
* the expectation averages the improvement over `N_QUANTILES` equal-probability points of the
  distribution (its spread scaled by ``explore``);
* the hypervolume is the 3-D one of `nasenergy.pareto.hypervolume` in the objectives' own units
  against the worst corner of the evaluated and screened points (an improvement does not depend
  on the units: scaling an axis scales every improvement alike);
* a candidate with no expected improvement is ranked by its shortfall at the mean (how far it is
  from being non-dominated), so the least dominated one is chosen when none improves.

Before ``min_fit`` evaluations there is no model: the candidate proposed first in the round (the
sampler's own choice) is evaluated, and up to ``reserve`` of the others whose hardware figures alone
would widen the front of the evaluations (`hardware_scores`) stay in the pool, for the model to
rank once it exists; so a network the cold start cannot judge, such as one much faster than any
evaluated, is not lost to it. The defaults (``K`` 4 in ``experiments/search_efficiency.py``, ``min_fit``
4, ``explore`` 1, ``reserve`` 4) were chosen on CIFAR-10 runs; ``results/search_efficiency/README.md``
lists the variants tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from nasenergy.filter.conformal import make_estimator
from nasenergy.filter.features import CHEAP_FEATURE_NAMES, candidate_features, check_cheap_columns
from nasenergy.measurement import Measurement
from nasenergy.objectives import OBJECTIVES
from nasenergy.pareto import hypervolume, non_dominated_mask

SENSES: dict[str, str] = {name: o.sense for name, o in OBJECTIVES.items()}
"""Each objective's sense, by name (declared once, in `nasenergy.objectives.OBJECTIVES`)."""
"""Each objective's sense (the search's objective names)."""

DEFAULT_MIN_FIT = 4
"""Evaluations before the screener ranks candidates (before: the sampler's own choice)."""
DEFAULT_EXPLORE = 1.0
"""Default scale of the predictive spread (1: the spread as estimated)."""
DEFAULT_MIN_SPREAD_PP = 0.5
"""Floor of the model's residual spread, in accuracy percentage points."""
DEFAULT_RESERVE = 4
"""Unchosen candidates with a positive expected improvement kept for the next screening."""
N_QUANTILES = 7
"""Equal-probability points of the predictive distribution the expected improvement averages."""
CV_FOLDS = 3
"""Folds of the cross-validated residual spread of the accuracy model."""
REFIT_GROWTH = 10
"""The accuracy model is refitted once the evaluations grew by a tenth since its fit (the groups'
own evaluations are used at once)."""
CV_GROWTH = 4
"""Its cross-validated spread is refreshed once they grew by a quarter."""

HardwareFigures = Callable[[Measurement], tuple[float, float]]
"""A candidate's (throughput img/s, energy J/img) as the search will score them, from its cheap
measurement."""


@dataclass(frozen=True)
class Screened:
    """One candidate waiting to be screened.

    Attributes:
        measurement: its cheap measurement.
        features: its extra features (by default the space's structural `features`), or ``None``.
        payload: what the caller needs to evaluate or dismiss it (e.g. the trial).
        group: the function it computes (the space's `deployed_key`), or ``None``: candidates of
            one group are the same deployed network, whatever their cell's spelling.
    """

    measurement: Measurement
    features: Sequence[float] | np.ndarray | None = None
    payload: Any = None
    group: str | None = None


@dataclass(frozen=True)
class Ranking:
    """What `Screener.choose` decided.

    Attributes:
        chosen: the index of the candidate to evaluate.
        scores: each candidate's score (expected hypervolume improvement, or minus its shortfall).
        predicted: each candidate's predicted accuracy (NaN without a model).
        reason: one line for the dismissed candidates' records.
        kept: indices of unchosen candidates to keep for the next screening (best first).
        spread_pp: each candidate's predictive spread in accuracy points (NaN without a model).
    """

    chosen: int
    scores: tuple[float, ...]
    predicted: tuple[float, ...]
    reason: str
    kept: tuple[int, ...] = ()
    spread_pp: tuple[float, ...] = ()


class Screener:
    """Ranks cheaply measured candidates by expected hypervolume improvement.

    A candidate's accuracy is predicted as a normal distribution: for a group (deployed network)
    the run evaluated twice or more, the mean and standard deviation of its evaluations; once,
    that evaluation and the pooled within-group spread of the run's repeated groups (the floor
    `min_spread_pp` before any); otherwise the accuracy model's prediction and its cross-validated
    residual spread (floored at `min_spread_pp`). The expected improvement averages the
    hypervolume improvement over `N_QUANTILES` equal-probability points of that distribution.

    Args:
        objectives: the search's objective names, in front-column order (``accuracy`` first).
        hardware: a candidate's scored (throughput, energy) from its measurement.
        min_fit: evaluations needed before ranking (see `DEFAULT_MIN_FIT`).
        estimator: the accuracy model (`nasenergy.filter.conformal.ESTIMATORS`).
        explore: the scale of every predictive spread (see `DEFAULT_EXPLORE`; 0: the mean alone).
        min_spread_pp: the floor of the model's spread (see `DEFAULT_MIN_SPREAD_PP`).
        reserve: unchosen candidates kept for the next screening (see `DEFAULT_RESERVE`).
        seed: the model's random state.
        cheap_columns: the cheap measurement columns the accuracy model reads (see
            `nasenergy.filter.features.CHEAP_FEATURE_NAMES`; default all), before the features
            of each candidate.
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
        reserve: int = DEFAULT_RESERVE,
        seed: int = 0,
        cheap_columns: Sequence[str] = CHEAP_FEATURE_NAMES,
    ) -> None:
        self.objectives = tuple(objectives)
        if not self.objectives or self.objectives[0] != "accuracy":
            raise ValueError(f"screening needs accuracy as the first objective, got {self.objectives}")
        if int(min_fit) < 2:
            raise ValueError(f"min_fit must be at least 2, got {min_fit}")
        if not (math.isfinite(explore) and explore >= 0):
            raise ValueError(f"explore must be a finite number >= 0, got {explore}")
        if int(reserve) < 0:
            raise ValueError(f"reserve must be at least 0, got {reserve}")
        self.hardware = hardware
        self.min_fit = int(min_fit)
        self.estimator = estimator
        self.explore = float(explore)
        self.min_spread_pp = float(min_spread_pp)
        self.reserve = int(reserve)
        self.seed = int(seed)
        self.cheap_columns = check_cheap_columns(cheap_columns)
        self._x: list[np.ndarray] = []
        self._y: list[float] = []
        self._points: list[np.ndarray] = []
        self._groups: dict[str, list[float]] = {}
        self._model: Any = None
        self._spread = math.inf
        self._n_at_fit = 0
        self._n_at_cv = 0

    @property
    def n_observed(self) -> int:
        """Evaluations learnt so far."""
        return len(self._y)

    def observe(self, measurement: Measurement, features: Sequence[float] | np.ndarray | None, scored: Sequence[float],
                group: str | None = None) -> None:
        """Learn one full evaluation: its measurement, features, scored objective row and group."""
        self._x.append(candidate_features(measurement, features, self.cheap_columns))
        row = np.asarray(scored, dtype=float)
        self._y.append(float(row[0]))
        self._points.append(row)
        if group is not None and math.isfinite(float(row[0])):
            self._groups.setdefault(group, []).append(float(row[0]))

    def _fit(self) -> bool:
        if self.n_observed < self.min_fit:
            return False
        n = self.n_observed
        if self._model is None or n - self._n_at_fit >= max(1, self._n_at_fit // REFIT_GROWTH):
            x, y = np.vstack(self._x), np.asarray(self._y)
            model = make_estimator(self.estimator, None, self.seed)
            model.fit(x, y)
            self._model, self._n_at_fit = model, n
            if n - self._n_at_cv >= max(1, self._n_at_cv // CV_GROWTH):
                self._spread = max(self.min_spread_pp, self._cv_spread(x, y))
                self._n_at_cv = n
        return True

    def _cv_spread(self, x: np.ndarray, y: np.ndarray) -> float:
        """Root-mean-square out-of-fold error of the accuracy model (`CV_FOLDS` folds)."""
        n = len(y)
        folds = min(CV_FOLDS, n)
        order = np.random.default_rng(self.seed).permutation(n)
        resid = np.empty(n)
        for k in range(folds):
            test = order[k::folds]
            train = np.setdiff1d(order, test)
            model = make_estimator(self.estimator, None, self.seed)
            model.fit(x[train], y[train])
            resid[test] = y[test] - model.predict(x[test])
        return float(np.sqrt(np.mean(resid**2)))

    def _pooled_group_spread(self) -> float:
        """The within-group standard deviation pooled over the groups evaluated twice or more
        (`min_spread_pp` when there is none)."""
        sq, dof = 0.0, 0
        for values in self._groups.values():
            if len(values) >= 2:
                v = np.asarray(values)
                sq += float(np.sum((v - v.mean()) ** 2))
                dof += len(v) - 1
        return math.sqrt(sq / dof) if dof else self.min_spread_pp

    def predict(self, candidates: Sequence[Screened]) -> tuple[np.ndarray, np.ndarray]:
        """Each candidate's predicted accuracy (mean, standard deviation), in accuracy points,
        before the `explore` scale; needs `min_fit` evaluations."""
        if not self._fit():
            raise ValueError(f"the screener needs {self.min_fit} evaluations, has {self.n_observed}")
        x = np.vstack([candidate_features(c.measurement, c.features, self.cheap_columns) for c in candidates])
        mean = np.asarray(self._model.predict(x), dtype=float)
        spread = np.full(len(candidates), self._spread)
        pooled = self._pooled_group_spread()
        for i, c in enumerate(candidates):
            values = self._groups.get(c.group) if c.group is not None else None
            if values:
                mean[i] = float(np.mean(values))
                spread[i] = float(np.std(values, ddof=1)) if len(values) >= 2 else pooled
        return mean, spread

    def _row(self, cand: Screened, accuracy: float) -> np.ndarray:
        thr, energy = self.hardware(cand.measurement)
        values = {"accuracy": accuracy, "throughput": thr, "energy": energy}
        return np.array([values[o] for o in self.objectives], dtype=float)

    def choose(self, candidates: Sequence[Screened]) -> Ranking:
        """The candidate to evaluate among ``candidates`` (at least one), and those to keep."""
        if not candidates:
            raise ValueError("nothing to screen")
        n = len(candidates)
        if not self._fit():
            return self._cold_start(candidates)
        mean, spread = self.predict(candidates)
        z = normal_quantiles(N_QUANTILES) if self.explore > 0 else np.zeros(1)
        accuracies = mean[:, None] + self.explore * spread[:, None] * z[None, :]
        rows = np.stack([np.vstack([self._row(c, float(a)) for a in acc]) for c, acc in zip(candidates, accuracies)])
        at_mean = np.vstack([self._row(c, float(m)) for c, m in zip(candidates, mean)])
        scores = expected_improvement_scores(rows, at_mean, np.vstack(self._points),
                                             [SENSES[o] for o in self.objectives])
        order = [int(i) for i in np.argsort(-scores, kind="stable")]
        best = order[0]
        kept = tuple(i for i in order[1:] if scores[i] > 0)[: self.reserve]
        reason = (f"screened out: trial of expected hypervolume improvement {scores[best]:.4g} chosen among {n} "
                  "measured candidates")
        return Ranking(best, tuple(float(s) for s in scores), tuple(float(p) for p in mean), reason, kept,
                       tuple(float(s) for s in spread))

    def _cold_start(self, candidates: Sequence[Screened]) -> Ranking:
        """Before `min_fit` evaluations: the first candidate (the sampler's proposal) is
        evaluated; of the others, up to `reserve` whose hardware figures alone would widen the
        front of the evaluations (`hardware_scores`) are kept, best first, for the model to rank
        once it exists, so a network the cold start could not judge is not lost to it."""
        n = len(candidates)
        hw = [j for j, o in enumerate(self.objectives) if o != "accuracy"]
        scores = np.zeros(n)
        if hw and n > 1:
            rows = np.vstack([self._row(c, math.nan)[hw] for c in candidates])
            done = np.vstack(self._points)[:, hw] if self._points else np.empty((0, len(hw)))
            scores = hardware_scores(rows, done, [SENSES[self.objectives[j]] for j in hw])
        order = [int(i) for i in np.argsort(-scores[1:], kind="stable") + 1]
        kept = tuple(i for i in order if scores[i] > 0)[: self.reserve]
        reason = f"screened out: the sampler's first proposal is evaluated until {self.min_fit} evaluations"
        return Ranking(0, tuple(float(s) for s in scores), (math.nan,) * n, reason, kept, (math.nan,) * n)


def hardware_scores(rows: np.ndarray, evaluated: np.ndarray, senses: Sequence[str]) -> np.ndarray:
    """Each row's improvement of the hardware front of ``evaluated`` rows (same columns: the
    objectives other than accuracy); no evaluations yet: every row's volume against the rows'
    own worst corner. A row with NaN scores ``-inf``."""
    rows = np.asarray(rows, dtype=float)
    finite = ~np.isnan(rows).any(axis=1)
    out = np.full(len(rows), -math.inf)
    if finite.any():
        out[finite] = improvement_scores(rows[finite], evaluated, senses)
    return out


def normal_quantiles(n: int) -> np.ndarray:
    """The standard normal's quantiles at the ``n`` equal-probability midpoints ``(i + 0.5) / n``."""
    dist = NormalDist()
    return np.array([dist.inv_cdf((i + 0.5) / n) for i in range(n)])


def expected_improvement_scores(draws: np.ndarray, at_mean: np.ndarray, evaluated: np.ndarray,
                                senses: Sequence[str]) -> np.ndarray:
    """Each candidate's expected hypervolume improvement over the front of ``evaluated`` rows,
    the mean of its improvements over its ``draws`` (``(n, q, d)``: ``q`` equally likely rows);
    a candidate with no expected improvement scores minus the shortfall of its ``at_mean`` row
    (`improvement_scores`), so any improving one ranks first. One reference point serves every
    draw: the worst corner of all the rows, moved out by 1 % of each range."""
    draws = np.asarray(draws, dtype=float)
    n, q, d = draws.shape
    flat = draws.reshape(n * q, d)
    pool = np.vstack([flat, np.asarray(at_mean, dtype=float).reshape(-1, d)])
    scores = improvement_scores(pool, evaluated, senses)
    gains = np.maximum(scores[: n * q], 0.0).reshape(n, q)
    gains[~np.isfinite(scores[: n * q].reshape(n, q))] = 0.0
    expected = gains.mean(axis=1)
    fallback = scores[n * q:]
    return np.where(expected > 0, expected, np.minimum(fallback, -1e-12))


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
    ev = ev[non_dominated_mask(ev, maxi)]  # the same hypervolume, fewer points
    base = hypervolume(ev, ref, maxi) if len(ev) else 0.0
    out = np.empty(len(cand))
    for i, c in enumerate(cand):
        if np.isnan(c).any():
            out[i] = -math.inf
            continue
        dominating = ev[(ev >= c).all(axis=1)]
        if not len(dominating):
            gain = hypervolume(np.vstack([ev, c[None, :]]), ref, maxi) - base if len(ev) else float(np.prod(c - ref))
            if gain > 0:
                out[i] = gain
                continue
        shortfall = np.max(((dominating - c) / span).min(axis=1)) if len(dominating) else 0.0
        out[i] = -float(shortfall) - 1e-12
    return out

