"""The oracle that answers from a `BenchmarkData` in memory, one architecture or thousands at once.

`BenchmarkOracle` is the engine; `TableOracle` (benchmark tables) and `CachedOracle` (the local
benchmark file, see `nasenergy.oracles.cache`) only differ in where the data comes from.

Costs: a recorded cost (`BenchmarkData.cost_s`) is charged when there is one. Otherwise the
``estimate`` setting decides:

* ``auto`` (default): ``fit`` when the benchmark records enough times to fit the rate model,
  else ``none``; it never trains a network (timing steps on a CPU takes minutes per class);
* ``fit``: NATS-Bench-scale seconds predicted from the recorded rates (`nasenergy.oracles.cost_model`);
* ``device``: timed training steps on this device (`nasenergy.oracles.cost_estimate`; on a CPU this
  takes minutes per canonical class, stored so each class is timed once);
* ``none``: cost 0.0 labelled ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import ArchError, UsageError
from nasenergy.oracles.archs import arch_index
from nasenergy.oracles.cost_estimate import STEP_TIMES_FILE, StepTimeEstimator
from nasenergy.oracles.cost_model import attach_rate_model
from nasenergy.oracles.data import BenchmarkData, MetricKey
from nasenergy.oracles.datasets import NatsCell, resolve
from nasenergy.oracles.errors import ArchNotInBenchmarkError, MetricNotAvailableError
from nasenergy.oracles.evaluation import (
    Evaluation,
    MetricSpec,
    Metrics,
    TrialStreams,
    default_metrics,
    trial_label,
)
from nasenergy.oracles.tables import read_tables
from nasenergy.paths import cache_dir
from search_spaces import Arch

ESTIMATE_MODES: tuple[str, ...] = ("auto", "fit", "device", "none")


@dataclass(frozen=True)
class EvaluationBatch:
    """Evaluations of many architectures on one dataset and metric, as arrays.

    Attributes:
        arch_index: official indices, ``int64[n]``.
        accuracy_pct: top-1 accuracy in percent, ``float64[n]``.
        cost_s: seconds a real evaluation would take, ``float64[n]``.
        cost_source: ``recorded`` / ``estimated`` / ``unknown`` per row.
        trial_seed: seed of the run used, -1 for the mean or an unrecorded seed, ``int64[n]``.
        trial_position: position of the run among the recorded ones, -1 for the mean.
        arch_strs: the benchmark's official strings (indexed by `arch_index`).
        dataset: user-level dataset.
        split: ``x-valid`` / ``x-test`` / ``ori-test``.
        schedule: NATS ``hp``.
    """

    arch_index: np.ndarray
    accuracy_pct: np.ndarray
    cost_s: np.ndarray
    cost_source: np.ndarray
    trial_seed: np.ndarray
    trial_position: np.ndarray
    arch_strs: np.ndarray
    dataset: str
    split: str
    schedule: str

    def __len__(self) -> int:
        return int(self.arch_index.shape[0])

    def row(self, i: int) -> Evaluation:
        """Row `i` as an `Evaluation`."""
        index = int(self.arch_index[i])
        position = int(self.trial_position[i])
        return Evaluation(
            arch=str(self.arch_strs[index]),
            arch_index=index,
            accuracy_pct=float(self.accuracy_pct[i]),
            dataset=self.dataset,
            split=self.split,
            schedule=self.schedule,
            cost_s=float(self.cost_s[i]),
            cost_source=str(self.cost_source[i]),
            source="recorded",
            trial=trial_label(int(self.trial_seed[i]), position if position >= 0 else None),
        )

    def rows(self) -> list[Evaluation]:
        """Every row as an `Evaluation`."""
        return [self.row(i) for i in range(len(self))]


class BenchmarkOracle:
    """Accuracy oracle over a `BenchmarkData`.

    Args:
        data: the benchmark.
        metrics: search and report metrics (default: NATS-Bench's protocol for the space).
        seed: seed of the oracle's own stream for picking training runs.
        estimate: ``auto``, ``fit``, ``device`` or ``none`` (see the module docstring).
        step_estimator: the device estimator to use for ``device`` (made on first need).
        description: one line naming the benchmark.
    """

    def __init__(
        self,
        data: BenchmarkData,
        *,
        metrics: Metrics | None = None,
        seed: int | None = 0,
        estimate: str = "auto",
        step_estimator: StepTimeEstimator | None = None,
        description: str = "benchmark",
    ) -> None:
        if estimate not in ESTIMATE_MODES:
            raise UsageError(f"unknown cost estimation {estimate!r}; choose one of {', '.join(ESTIMATE_MODES)}")
        self.data = data
        self._metrics = metrics or default_metrics(data.space_name)
        self._streams = TrialStreams(seed)
        self.estimate = estimate
        self._step_estimator = step_estimator
        self._fit_tried = data.est_train_rate is not None
        self._description = description

    @property
    def space_name(self) -> str:
        """``tss`` or ``sss``."""
        return self.data.space_name

    @property
    def metrics(self) -> Metrics:
        """The search and report metrics."""
        return self._metrics

    def describe(self) -> str:
        """One line naming the benchmark."""
        return self._description

    def evaluate(self, arch: Arch, dataset: str, *, seed: int | None = None) -> Evaluation:
        """The search metric of `arch` on `dataset` and the cost of a real evaluation.

        Args:
            arch: an architecture string, object or official index.
            dataset: ``cifar10``, ``cifar100``, ``ImageNet16-120`` (``imagenet16``).
            seed: pick the training run from ``random.Random(seed)``; None draws from the
                oracle's own stream.
        """
        return self.query_many([arch], dataset, self._metrics.search, seed=seed).row(0)

    def report(self, arch: Arch, dataset: str) -> Evaluation:
        """The final reported metric of `arch` on `dataset`."""
        return self.query_many([arch], dataset, self._metrics.report).row(0)

    def evaluate_many(self, archs: Iterable[Any] | np.ndarray, dataset: str, *,
                      seed: int | None = None) -> EvaluationBatch:
        """The search metric of many architectures at once (vectorised).

        Runs are drawn in row order from one stream, so ``evaluate_many([a], d, seed=s)`` equals
        ``evaluate(a, d, seed=s)``.
        """
        return self.query_many(archs, dataset, self._metrics.search, seed=seed)

    def query_many(self, archs: Iterable[Any] | np.ndarray, dataset: str, metric: MetricSpec, *,
                   seed: int | None = None) -> EvaluationBatch:
        """Any metric of many architectures at once.

        Raises:
            UnknownDatasetError: unknown dataset or split.
            ArchError: a malformed architecture.
            MetricNotAvailableError: the benchmark has no values for this metric at all.
            ArchNotInBenchmarkError: an architecture without a value for this metric.
        """
        cell = resolve(dataset, metric.split)
        key: MetricKey = (cell.nats_dataset, cell.split, metric.schedule)
        if key not in self.data.means and key not in self.data.trials:
            raise MetricNotAvailableError(self._unavailable(cell, metric))
        indices = self._indices(archs)
        accuracy = self.data.mean(key)[indices]
        positions = np.full(indices.shape, -1, np.int64)
        seeds = np.full(indices.shape, -1, np.int64)
        if metric.trial == "random" and key in self.data.trials:
            counts = self.data.n_trials(key)[indices]
            rng = self._streams.stream(seed)
            positions = np.array([TrialStreams.pick(rng, n) if n > 0 else -1 for n in counts.tolist()],
                                 dtype=np.int64)
            has = positions >= 0
            accuracy[has] = self.data.trials[key][indices[has], positions[has]]
            seeds[has] = self.data.trial_seeds[key][indices[has], positions[has]]
        if key in self.data.means_seed:  # the one figure per cell is one run's, not a mean
            seeds[positions < 0] = self.data.means_seed[key]
        missing = np.flatnonzero(np.isnan(accuracy))
        if missing.size:
            i = int(indices[missing[0]])
            more = f" (and {missing.size - 1} more)" if missing.size > 1 else ""
            raise ArchNotInBenchmarkError(
                f"the benchmark has no {cell.split} accuracy of {cell.nats_dataset} after "
                f"{int(metric.schedule)} epochs for architecture {i} ({self.data.arch_strs[i]}){more}"
            )
        cost, source = self._costs(indices, key, cell, metric.schedule)
        return EvaluationBatch(indices, accuracy, cost, source, seeds, positions,
                               self.data.arch_strs, cell.dataset, cell.split, metric.schedule)

    def _unavailable(self, cell: NatsCell, metric: MetricSpec) -> str:
        have = ", ".join(f"{d} {s} {int(h)}ep" for d, s, h in self.data.metric_keys()) or "nothing"
        return (f"the benchmark has no {cell.split} accuracy of {cell.nats_dataset} after "
                f"{int(metric.schedule)} epochs; it has: {have}")

    def _indices(self, archs: Iterable[Any] | np.ndarray) -> np.ndarray:
        if isinstance(archs, np.ndarray) and archs.dtype.kind in "iu":
            indices = archs.astype(np.int64, copy=False).ravel()
            bad = np.flatnonzero((indices < 0) | (indices >= self.data.size))
            if bad.size:
                raise ArchError(f"architecture index {indices[bad[0]]} is out of range "
                                f"0..{self.data.size - 1} for {self.space_name}")
            return indices
        index_of = self.data.index_of
        return np.array([arch_index(a, index_of, self.space_name) for a in archs], dtype=np.int64)

    def _costs(self, indices: np.ndarray, key: MetricKey, cell: NatsCell,
               schedule: str) -> tuple[np.ndarray, np.ndarray]:
        cost = self.data.cost_s(key)[indices].copy()
        source = np.where(np.isfinite(cost), "recorded", "unknown").astype("<U9")
        todo = ~np.isfinite(cost)
        if not todo.any() or self.estimate == "none":
            cost[todo] = 0.0
            return cost, source
        if self.estimate in ("auto", "fit") and self._ensure_fit():
            cost[todo] = self.data.estimated_cost_s(key)[indices[todo]]
            source[todo] = "estimated"
        elif self.estimate == "device":  # only when asked for: it trains networks here
            estimator = self._device_estimator()
            for i in np.flatnonzero(todo):
                arch = str(self.data.arch_strs[indices[i]])
                cost[i] = estimator.cost_s(arch, cell, schedule)
                source[i] = "estimated"
        todo = ~np.isfinite(cost)
        cost[todo] = 0.0
        source[todo] = "unknown"
        return cost, source

    def _ensure_fit(self) -> bool:
        if not self._fit_tried:
            self._fit_tried = True
            attach_rate_model(self.data)
        return self.data.est_train_rate is not None

    def _device_estimator(self) -> StepTimeEstimator:
        if self._step_estimator is None:
            self._step_estimator = StepTimeEstimator(
                self.space_name, store_path=cache_dir() / STEP_TIMES_FILE)
        return self._step_estimator


class TableOracle(BenchmarkOracle):
    """Accuracy oracle over benchmark tables read directly (one CSV or a folder; see
    `nasenergy.oracles.tables` for the schema).

    Args:
        path: a ``.csv`` / ``.csv.gz`` table or a folder of them.
        space: ``tss`` or ``sss``; None infers it from the tables.
        **options: `BenchmarkOracle` options (``metrics``, ``seed``, ``estimate``, ...).
    """

    def __init__(self, path: str | Path, space: str | None = None, **options: Any) -> None:
        data = read_tables(path, space)
        super().__init__(data, description=f"benchmark tables at {Path(path).resolve()}", **options)

