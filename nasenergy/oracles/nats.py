"""The NATS-Bench oracle: answers from the official benchmark files through the `nats_bench` package.

Accepted layouts (`locate_nats`):

* a fast-mode folder, ``NATS-tss-v1_0-3ffb9-simple/`` (``meta.pickle.pbz2`` plus one
  ``NNNNNN.pickle.pbz2`` per architecture), read cell by cell as queried;
* a folder holding such a folder, e.g. ``$TORCH_HOME`` (the default when no path is given);
* a single full file, ``NATS-tss-v1_0-3ffb9.pickle.pbz2`` (loaded whole, slowly).

Answers follow `nasenergy.oracles.evaluation`: the search metric with the cost
``train-all-time + <split>-per-time`` of the chosen run, as ``api.simulate_train_eval`` charges it.
For many queries, import the benchmark once (``python -m nasenergy.benchmark import``) and use the
`CachedOracle`.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy.errors import UsageError, typed_first_line
from nasenergy.oracles.archs import SPACE_SIZES, arch_index, check_space_name
from nasenergy.oracles.datasets import NatsCell, resolve
from nasenergy.oracles.errors import (
    GET_A_BENCHMARK,
    ArchNotInBenchmarkError,
    BenchmarkNotFoundError,
    CorruptBenchmarkError,
    MetricNotAvailableError,
)
from nasenergy.oracles.evaluation import (
    Evaluation,
    MetricSpec,
    Metrics,
    TrialStreams,
    default_metrics,
    trial_label,
)
from search_spaces import Arch

NATS_BASE_NAMES: dict[str, str] = {"tss": "NATS-tss-v1_0-3ffb9", "sss": "NATS-sss-v1_0-50262"}
PICKLE_EXT = ".pickle.pbz2"
META_FILE = "meta" + PICKLE_EXT
RECORD_LRU_SIZE = 32
"""Architectures whose NATS records the live oracle keeps in memory."""


@dataclass(frozen=True)
class NatsLocation:
    """An official NATS-Bench benchmark on disk.

    Attributes:
        path: the fast-mode folder or the full file.
        fast_mode: True for a folder of per-architecture files.
        space_name: ``tss`` or ``sss``.
    """

    path: Path
    fast_mode: bool
    space_name: str


def torch_home() -> Path:
    """``$TORCH_HOME``, else ``~/.torch`` (where `nats_bench` looks by default)."""
    env = os.environ.get("TORCH_HOME")
    return Path(env).expanduser() if env else Path.home() / ".torch"


def _space_of_name(name: str) -> str | None:
    for key, base in NATS_BASE_NAMES.items():
        if name.startswith(base):
            return key
    return None


def locate_nats(path: str | Path | None, space_name: str = "tss") -> NatsLocation | None:
    """Find an official NATS-Bench benchmark at `path` (``$TORCH_HOME`` when None).

    Args:
        path: a fast-mode folder, a folder holding one, or a full ``.pickle.pbz2`` file.
        space_name: the space wanted when `path` holds several.

    Returns:
        The location, or None when `path` holds no NATS-Bench benchmark of that space.

    Raises:
        UsageError: `path` is a NATS-Bench ``.tar`` archive that needs extracting first.
    """
    space_name = check_space_name(space_name)
    root = torch_home() if path is None else Path(path).expanduser()
    base = NATS_BASE_NAMES[space_name]
    if root.is_dir():
        if (root / META_FILE).is_file():
            return NatsLocation(root, True, _space_of_name(root.name) or space_name)
        if (root / f"{base}-simple" / META_FILE).is_file():
            return NatsLocation(root / f"{base}-simple", True, space_name)
        if (root / f"{base}{PICKLE_EXT}").is_file():
            return NatsLocation(root / f"{base}{PICKLE_EXT}", False, space_name)
        return None
    if root.is_file():
        if root.name.endswith(PICKLE_EXT):
            return NatsLocation(root, False, _space_of_name(root.name) or space_name)
        if root.name.endswith(".tar") and _space_of_name(root.name):
            raise UsageError(f"{root} is a NATS-Bench archive; extract it first: tar xf {root}")
    return None


logger = logging.getLogger(__name__)


def announce_pickles(location: NatsLocation) -> None:
    """Say, in one line, that the NATS-Bench pickles at ``location`` are about to be read (reading a
    pickle can run any code it carries); called once per load."""
    logger.warning("note: reading the NATS-Bench pickles at %s (a pickle can run code: use files from a trusted "
                   "source only)", location.path)


def open_nats_api(location: NatsLocation) -> Any:
    """``nats_bench.create`` on `location`, quiet, with failures turned into typed errors.

    Raises:
        CorruptBenchmarkError: the files cannot be read, or they hold another space.
    """
    import nats_bench  # lazy: heavy-ish and only needed here

    announce_pickles(location)
    try:
        api = nats_bench.create(
            str(location.path), location.space_name, fast_mode=location.fast_mode, verbose=False
        )
    except Exception as exc:  # nats_bench raises bare ValueError / pickle / bz2 errors
        raise CorruptBenchmarkError(
            f"cannot read NATS-Bench at {location.path}: {typed_first_line(exc)}"
        ) from exc
    expected = SPACE_SIZES[location.space_name]
    if len(api) != expected:
        raise CorruptBenchmarkError(
            f"NATS-Bench at {location.path} lists {len(api)} architectures, "
            f"expected {expected} for {location.space_name}"
        )
    return api


def has_record(api: Any, location: NatsLocation, index: int) -> bool:
    """Whether the benchmark holds the record of architecture `index`."""
    if not location.fast_mode:
        return index in api.evaluated_indexes
    return any(
        (location.path / f"{name}{PICKLE_EXT}").is_file() for name in (f"{index:06d}", str(index))
    )


class NatsBenchOracle:
    """Accuracy oracle answering from the official NATS-Bench files, through `nats_bench`.

    Args:
        path: a NATS-Bench fast-mode folder, a folder holding one, or a full file; None for
            ``$TORCH_HOME``.
        space: ``tss`` or ``sss``.
        metrics: the search and report metrics (default: the NATS-Bench protocol).
        seed: seed of the oracle's own stream for picking training runs.

    Raises:
        BenchmarkNotFoundError: no NATS-Bench benchmark at `path`.
        CorruptBenchmarkError: the files cannot be read.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        space: str = "tss",
        *,
        metrics: Metrics | None = None,
        seed: int | None = 0,
    ) -> None:
        space_name = check_space_name(space)
        location = locate_nats(path, space_name)
        if location is None:
            where = torch_home() if path is None else Path(path)
            raise BenchmarkNotFoundError(
                f"no NATS-Bench {space_name} benchmark at {where}; {GET_A_BENCHMARK}"
            )
        self.location = location
        self._space_name = location.space_name
        self._metrics = metrics or default_metrics(self._space_name)
        self._streams = TrialStreams(seed)
        self._api = open_nats_api(location)
        self._records: OrderedDict[int, dict[str, Any]] = OrderedDict()

    @property
    def space_name(self) -> str:
        """``tss`` or ``sss``."""
        return self._space_name

    @property
    def metrics(self) -> Metrics:
        """The search and report metrics."""
        return self._metrics

    @property
    def api(self) -> Any:
        """The underlying `nats_bench` API object."""
        return self._api

    def describe(self) -> str:
        """One line naming the benchmark."""
        mode = "fast mode" if self.location.fast_mode else "full file"
        return f"NATS-Bench {self._space_name} at {self.location.path} ({mode})"

    def evaluate(self, arch: Arch, dataset: str, *, seed: int | None = None) -> Evaluation:
        """The search metric of `arch` on `dataset` and its simulated training cost.

        Args:
            arch: an architecture string, object or official index.
            dataset: ``cifar10``, ``cifar100``, ``ImageNet16-120`` (``imagenet16``).
            seed: pick the training run from ``random.Random(seed)``; None draws from the
                oracle's own stream.
        """
        return self.query(arch, dataset, self._metrics.search, seed=seed)

    def report(self, arch: Arch, dataset: str) -> Evaluation:
        """The final reported metric of `arch` on `dataset` (mean over runs by default)."""
        return self.query(arch, dataset, self._metrics.report, seed=None)

    def query(
        self, arch: Arch, dataset: str, metric: MetricSpec, *, seed: int | None = None
    ) -> Evaluation:
        """Any metric of `arch` on `dataset`.

        Raises:
            UnknownDatasetError: unknown dataset or split.
            ArchError: malformed architecture.
            ArchNotInBenchmarkError: no record of `arch` (or of this metric for it).
            MetricNotAvailableError: the benchmark has no such schedule or split.
        """
        cell = resolve(dataset, metric.split)
        index = arch_index(arch, self._api.archstr2index, self._space_name)
        results = self._arch_results(index, metric.schedule)
        try:
            seeds = list(results.get_dataset_seeds(cell.nats_dataset))
        except KeyError:
            raise MetricNotAvailableError(
                f"NATS-Bench holds no {cell.nats_dataset} runs for schedule {metric.schedule}"
            ) from None
        position = None
        which: bool | int = False
        if metric.trial == "random":
            position = TrialStreams.pick(self._streams.stream(seed), len(seeds))
            which = seeds[position]
        return self._evaluation(index, cell, metric, results, which, position, seeds)

    def _evaluation(
        self,
        index: int,
        cell: NatsCell,
        metric: MetricSpec,
        results: Any,
        which: bool | int,
        position: int | None,
        seeds: list[int],
    ) -> Evaluation:
        try:
            train = results.get_metrics(cell.nats_dataset, "train", is_random=which)
            scored = results.get_metrics(cell.nats_dataset, cell.split, is_random=which)
        except (KeyError, ValueError):
            raise MetricNotAvailableError(
                f"NATS-Bench holds no {cell.split} accuracy of {cell.nats_dataset} "
                f"for schedule {metric.schedule}"
            ) from None
        epochs = train["iepoch"] + 1
        cost_s = float(train["all_time"]) + float(scored["all_time"]) / epochs
        return Evaluation(
            arch=self._api.meta_archs[index],
            arch_index=index,
            accuracy_pct=float(scored["accuracy"]),
            dataset=cell.dataset,
            split=cell.split,
            schedule=metric.schedule,
            cost_s=cost_s,
            cost_source="recorded",
            source="recorded",
            trial=trial_label(seeds[position] if position is not None else None, position),
        )

    def _arch_results(self, index: int, schedule: str) -> Any:
        """The `nats_bench.ArchResults` of one architecture and schedule, through a small LRU.

        In fast mode the API's own copy is dropped after reading, so memory stays bounded
        (about 2 MB per architecture) however many architectures are queried.
        """
        records = self._records.get(index)
        if records is not None:
            self._records.move_to_end(index)
        else:
            records = self._load_records(index)
            self._records[index] = records
            while len(self._records) > RECORD_LRU_SIZE:
                self._records.popitem(last=False)
        if schedule not in records:
            raise MetricNotAvailableError(
                f"NATS-Bench has no schedule {schedule} for architecture {index}; "
                f"it has {', '.join(sorted(records))}"
            )
        return records[schedule]

    def _load_records(self, index: int) -> dict[str, Any]:
        if not has_record(self._api, self.location, index):
            raise ArchNotInBenchmarkError(
                f"architecture {index} ({self._api.meta_archs[index]}) has no record in "
                f"{self.location.path}"
            )
        if not self.location.fast_mode:
            return dict(self._api.arch2infos_dict[index])
        try:
            self._api.reload(str(self.location.path), index)
        except Exception as exc:  # bz2 / pickle / format errors of a damaged cell file
            raise CorruptBenchmarkError(
                f"cannot read the record of architecture {index} in {self.location.path}: "
                f"{typed_first_line(exc)}"
            ) from exc
        records = dict(self._api.arch2infos_dict.pop(index))
        self._api.evaluated_indexes.discard(index)
        return records
