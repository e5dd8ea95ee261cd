"""A whole benchmark in memory, as arrays indexed by official architecture index.

Every source (the official NATS-Bench files, benchmark tables, the local cache) becomes one
`BenchmarkData`; `BenchmarkOracle` answers from it with vectorised lookups.

Keys use NATS-Bench names: a *metric key* is ``(nats_dataset, split, schedule)``, e.g.
``("cifar10-valid", "x-valid", "12")``; a *train key* is ``(nats_dataset, schedule)``; an *eval key*
is ``(nats_dataset, split)``. Missing values are NaN (accuracies, times) or -1 (seeds).

Costs. NATS-Bench's recorded times are per-image rates: for each architecture, one training time
per image per epoch and one evaluation time per image, whatever the dataset, schedule or seed
(checked on the official records of archs 0, 11 and 284 and on all 6,000 recorded times of archs
0..999). `cost_s` therefore charges a recorded time where the exact cell is recorded and otherwise
the same architecture's recorded rate times the images the NATS training and evaluation would
process (`nasenergy.oracles.datasets`); both are labelled ``recorded``. With no recorded training
time at all for an architecture the cost is NaN (the oracle then estimates it or marks it
``unknown``). A recorded training time without any recorded evaluation time charges training only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nasenergy.oracles.checks import bad_accuracies, name_items
from nasenergy.oracles.datasets import (
    EVAL_IMAGES,
    TRAIN_IMAGES,
    normalize_schedule,
    schedule_epochs,
)
from nasenergy.oracles.errors import CorruptBenchmarkError, UnknownDatasetError

MetricKey = tuple[str, str, str]
TrainKey = tuple[str, str]
EvalKey = tuple[str, str]


@dataclass
class BenchmarkData:
    """Accuracies, training runs and recorded times of every architecture of one space.

    Attributes:
        space_name: ``tss`` or ``sss``.
        arch_strs: official architecture strings, in official index order.
        means: metric key → accuracy in percent, the mean over the recorded runs, ``float64[N]``.
        trials: metric key → accuracy of each recorded run, ``float64[N, K]``, runs packed to the
            left, NaN after the last.
        trial_seeds: metric key → the seed of each run in `trials`, ``int64[N, K]``, -1 where the
            seed is not recorded.
        train_s: train key → total training seconds of the schedule.
        eval_s: eval key → seconds of one evaluation pass over the split.
        est_train_rate: predicted training seconds per image per epoch for every architecture
            (`nasenergy.oracles.cost_model`), or None.
        est_eval_rate: predicted evaluation seconds per image, or None.
        provenance: JSON-able facts about where the data came from (kind, source path, files,
            ignored columns, conflicts).
        means_seed: metric key → the seed of the single run `means` holds, for a source whose one
            figure per cell is one run's rather than a mean (the embedded SSS tables: seed 777).
    """

    space_name: str
    arch_strs: np.ndarray
    means: dict[MetricKey, np.ndarray] = field(default_factory=dict)
    trials: dict[MetricKey, np.ndarray] = field(default_factory=dict)
    trial_seeds: dict[MetricKey, np.ndarray] = field(default_factory=dict)
    train_s: dict[TrainKey, np.ndarray] = field(default_factory=dict)
    eval_s: dict[EvalKey, np.ndarray] = field(default_factory=dict)
    est_train_rate: np.ndarray | None = None
    est_eval_rate: np.ndarray | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    means_seed: dict[MetricKey, int] = field(default_factory=dict)
    _costs: dict[MetricKey, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    _n_trials: dict[MetricKey, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    _means: dict[MetricKey, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    _index_of: dict[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        """Number of architectures."""
        return int(self.arch_strs.shape[0])

    @property
    def index_of(self) -> dict[str, int]:
        """Official string → index (built on first use)."""
        if self._index_of is None:
            self._index_of = {s: i for i, s in enumerate(self.arch_strs.tolist())}
        return self._index_of

    def metric_keys(self) -> list[MetricKey]:
        """Every metric key with any value, sorted."""
        return sorted(set(self.means) | set(self.trials))

    def n_trials(self, key: MetricKey) -> np.ndarray:
        """Recorded runs per architecture for `key`, ``int64[N]`` (zeros when none)."""
        if key not in self._n_trials:
            runs = self.trials.get(key)
            counts = np.zeros(self.size, np.int64) if runs is None else np.isfinite(runs).sum(axis=1)
            self._n_trials[key] = counts
        return self._n_trials[key]

    def mean(self, key: MetricKey) -> np.ndarray:
        """Mean accuracy per architecture for `key`: the stored mean, else the mean of the runs."""
        if key not in self._means:
            stored = self.means.get(key, np.full(self.size, np.nan))
            runs = self.trials.get(key)
            if runs is None:
                self._means[key] = stored
            else:
                counts = self.n_trials(key)
                total = np.where(np.isfinite(runs), runs, 0.0).sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    from_runs = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
                self._means[key] = np.where(np.isfinite(stored), stored, from_runs)
        return self._means[key]

    def recorded_train_rate(self) -> np.ndarray:
        """Recorded training seconds per image per epoch of each architecture; NaN if none."""
        return self._rate(self.train_s, lambda k: TRAIN_IMAGES[k[0]] * schedule_epochs(k[1]))

    def recorded_eval_rate(self) -> np.ndarray:
        """Recorded evaluation seconds per image of each architecture; NaN if none."""
        return self._rate(self.eval_s, lambda k: EVAL_IMAGES[k])

    def cost_s(self, key: MetricKey) -> np.ndarray:
        """Recorded seconds to train on the schedule and evaluate the split once; NaN if unknown."""
        if key not in self._costs:
            nats_dataset, split, schedule = key
            train_images = TRAIN_IMAGES[nats_dataset] * schedule_epochs(schedule)
            eval_images = EVAL_IMAGES[(nats_dataset, split)]
            train = _exact_or(self.train_s.get((nats_dataset, schedule)),
                              self.recorded_train_rate() * train_images)
            evaluation = _exact_or(self.eval_s.get((nats_dataset, split)),
                                   self.recorded_eval_rate() * eval_images)
            self._costs[key] = train + np.where(np.isfinite(evaluation), evaluation, 0.0)
        return self._costs[key]

    def estimated_cost_s(self, key: MetricKey) -> np.ndarray:
        """Seconds predicted by the fitted rate model (`est_train_rate`); NaN without one."""
        if self.est_train_rate is None or self.est_eval_rate is None:
            return np.full(self.size, np.nan)
        nats_dataset, split, schedule = key
        return (self.est_train_rate * TRAIN_IMAGES[nats_dataset] * schedule_epochs(schedule)
                + self.est_eval_rate * EVAL_IMAGES[(nats_dataset, split)])

    def _rate(self, times: dict[Any, np.ndarray], images_of: Any) -> np.ndarray:
        """Seconds per image, from the first recorded time of each architecture (keys sorted)."""
        rate = np.full(self.size, np.nan)
        for key in sorted(times):
            rate = np.where(np.isnan(rate), times[key] / images_of(key), rate)
        return rate

    def validate(self) -> None:
        """Check names and shapes of every array.

        Raises:
            CorruptBenchmarkError: an unknown dataset / split / schedule name, a wrong shape, or
                an accuracy outside [0, 100] %.
        """
        n = self.size
        if self.arch_strs.ndim != 1 or self.arch_strs.dtype.kind != "U":
            raise CorruptBenchmarkError("benchmark architecture list is not a 1-D string array")

        def check(kind: str, key: tuple[str, ...], array: np.ndarray, ndim: int) -> None:
            try:
                if kind == "train":
                    ok = key[0] in TRAIN_IMAGES and key[1] == normalize_schedule(key[1])
                elif kind == "eval":
                    ok = key in EVAL_IMAGES
                else:
                    ok = key[:2] in EVAL_IMAGES and key[2] == normalize_schedule(key[2])
            except UnknownDatasetError:
                ok = False
            if not ok or len(key) != (2 if kind in ("train", "eval") else 3):
                raise CorruptBenchmarkError(f"benchmark holds an unknown {kind} key {'/'.join(key)}")
            if array.ndim != ndim or array.shape[0] != n:
                raise CorruptBenchmarkError(
                    f"benchmark {kind} array {'/'.join(key)} has shape {array.shape}, expected {n} rows"
                )

        for key, array in self.means.items():
            check("mean", key, array, 1)
            _check_range("mean accuracies", key, array)
        for key, array in self.trials.items():
            check("trials", key, array, 2)
            _check_range("run accuracies", key, array)
            seeds = self.trial_seeds.get(key)
            if seeds is None or seeds.shape != array.shape:
                raise CorruptBenchmarkError(f"benchmark runs of {'/'.join(key)} have no matching seeds")
        for time_key, times in self.train_s.items():
            check("train", time_key, times, 1)
        for time_key, times in self.eval_s.items():
            check("eval", time_key, times, 1)
        for name, rate in (("training", self.est_train_rate), ("evaluation", self.est_eval_rate)):
            if rate is not None and rate.shape != (n,):
                raise CorruptBenchmarkError(f"benchmark {name} rate estimates have shape {rate.shape}")

    def coverage(self) -> dict[str, Any]:
        """Per metric key: architectures with a value, with runs, and with a recorded cost."""
        out: dict[str, Any] = {}
        for key in self.metric_keys():
            values = np.isfinite(self.mean(key))
            out["/".join(key)] = {
                "archs": int(values.sum()),
                "archs_with_runs": int((self.n_trials(key) > 0).sum()),
                "max_runs": int(self.n_trials(key).max(initial=0)),
                "archs_with_recorded_cost": int((values & np.isfinite(self.cost_s(key))).sum()),
            }
        return out


def _check_range(what: str, key: MetricKey, array: np.ndarray) -> None:
    bad = bad_accuracies(array)
    if bad:
        raise CorruptBenchmarkError(
            f"benchmark {what} of {'/'.join(key)} outside [0, 100] %: {name_items(bad, 'architecture')}"
        )


def _exact_or(exact: np.ndarray | None, derived: np.ndarray) -> np.ndarray:
    """`exact` where recorded, else `derived`."""
    if exact is None:
        return derived
    return np.where(np.isfinite(exact), exact, derived)
