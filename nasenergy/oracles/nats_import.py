"""Read the official NATS-Bench files once into a `BenchmarkData` (for the local benchmark file).

A fast-mode folder holds one bz2-compressed pickle per architecture (15,625 for the topology
space, about 45 ms each to read), so the import reads them in parallel worker processes. Every
run (seed) of every schedule and NATS training set is kept, in NATS-Bench's seed order, with the
recorded training time of the schedule and the time of one evaluation pass per split.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from multiprocessing import get_context
from typing import Any

import numpy as np

from nasenergy.errors import typed_first_line
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.datasets import EVAL_IMAGES, SPLITS
from nasenergy.oracles.errors import CorruptBenchmarkError
from nasenergy.oracles.nats import META_FILE, PICKLE_EXT, NatsLocation, announce_pickles
from search_spaces import get_space

ProgressCallback = Callable[[int, int], None]
"""Called with (architectures read, architectures to read)."""

_INLINE_LIMIT = 64
"""Read at most this many files in-process; more go to worker processes."""


def _records_of(states: dict[str, Any]) -> dict[str, Any]:
    """Plain values of one architecture: {hp: {nats_ds: {seeds, acc{split: [..]}, train_s, eval_s{}}}}."""
    from nats_bench import ArchResults

    out: dict[str, Any] = {}
    for hp, state in states.items():
        results = ArchResults.create_from_state_dict(state)
        per_dataset: dict[str, Any] = {}
        for nats_dataset in results.get_dataset_names():
            seeds = [int(s) for s in results.get_dataset_seeds(nats_dataset)]
            # NATS-Bench records the same times for every run; keep the first run's exactly
            train = results.get_metrics(nats_dataset, "train", is_random=seeds[0])
            epochs = train["iepoch"] + 1
            accs: dict[str, list[float]] = {}
            evals: dict[str, float] = {}
            for split in SPLITS:
                if (nats_dataset, split) not in EVAL_IMAGES:
                    continue
                try:
                    runs = [results.get_metrics(nats_dataset, split, is_random=s) for s in seeds]
                except (KeyError, ValueError):
                    continue
                accs[split] = [float(run["accuracy"]) for run in runs]
                if runs[0]["all_time"] is not None:
                    evals[split] = float(runs[0]["all_time"]) / epochs
            per_dataset[nats_dataset] = {
                "seeds": seeds,
                "acc": accs,
                "train_s": None if train["all_time"] is None else float(train["all_time"]),
                "eval_s": evals,
            }
        out[str(hp)] = per_dataset
    return out


def read_cell(path: str) -> dict[str, Any]:
    """The records of one fast-mode cell file, as plain values.

    Raises:
        CorruptBenchmarkError: the file cannot be read.
    """
    from nats_bench import pickle_load

    try:
        states = pickle_load(path)
        return _records_of(states)
    except Exception as exc:  # a damaged file: bz2, pickle or format errors
        raise CorruptBenchmarkError(f"cannot read NATS-Bench record {path}: {typed_first_line(exc)}") from None


def _cell_files(location: NatsLocation, size: int) -> dict[int, str]:
    names = set(os.listdir(location.path))
    found: dict[int, str] = {}
    for index in range(size):
        for name in (f"{index:06d}{PICKLE_EXT}", f"{index}{PICKLE_EXT}"):
            if name in names:
                found[index] = str(location.path / name)
                break
    return found


def _read_all(files: dict[int, str], workers: int | None, progress: ProgressCallback | None) -> Iterable[tuple[int, dict[str, Any]]]:
    items = sorted(files.items())
    total = len(items)
    if total <= _INLINE_LIMIT or workers == 1:
        for done, (index, path) in enumerate(items, 1):
            yield index, read_cell(path)
            if progress:
                progress(done, total)
        return
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        paths = [p for _, p in items]
        for done, (item, records) in enumerate(zip(items, pool.map(read_cell, paths, chunksize=64)), 1):
            yield item[0], records
            if progress and (done % 256 == 0 or done == total):
                progress(done, total)


def read_nats(location: NatsLocation, *, workers: int | None = None,
              progress: ProgressCallback | None = None) -> BenchmarkData:
    """Every record of an official NATS-Bench benchmark.

    Args:
        location: from `nasenergy.oracles.nats.locate_nats`.
        workers: processes reading fast-mode files (default: all cores).
        progress: called as files are read.

    Raises:
        CorruptBenchmarkError: a file cannot be read, or the architecture list is not the space's.
    """
    from nats_bench import pickle_load

    announce_pickles(location)
    try:
        if location.fast_mode:
            meta = pickle_load(str(location.path / META_FILE))
        else:
            meta = pickle_load(str(location.path))
        arch_strs = np.array([str(a) for a in meta["meta_archs"]])
    except Exception as exc:  # bz2 / pickle / key errors of a damaged file
        raise CorruptBenchmarkError(f"cannot read NATS-Bench at {location.path}: {typed_first_line(exc)}") from None
    space = get_space(location.space_name)
    official = np.array([str(a) for a in space.enumerate()])
    if arch_strs.shape != official.shape or not np.array_equal(arch_strs, official):
        raise CorruptBenchmarkError(
            f"the architecture list of {location.path} is not the official {location.space_name} order"
        )
    if location.fast_mode:
        records: Iterable[tuple[int, dict[str, Any]]] = _read_all(
            _cell_files(location, official.size), workers, progress)
    else:
        records = ((int(i), _records_of(states)) for i, states in sorted(meta["arch2infos"].items()))
    data = _assemble(location.space_name, arch_strs, records)
    data.provenance.update({
        "kind": "nats-bench",
        "source": str(location.path.resolve()),
        "fast_mode": location.fast_mode,
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    return data


def _assemble(space_name: str, arch_strs: np.ndarray,
              records: Iterable[tuple[int, dict[str, Any]]]) -> BenchmarkData:
    n = arch_strs.size
    runs: dict[tuple[str, str, str], dict[int, tuple[list[int], list[float]]]] = {}
    train: dict[tuple[str, str], dict[int, float]] = {}
    evals: dict[tuple[str, str], dict[int, float]] = {}
    n_records = 0
    for index, per_hp in records:
        n_records += 1
        for hp, per_dataset in per_hp.items():
            for nats_dataset, rec in per_dataset.items():
                for split, values in rec["acc"].items():
                    runs.setdefault((nats_dataset, split, hp), {})[index] = (rec["seeds"], values)
                if rec["train_s"] is not None:
                    train.setdefault((nats_dataset, hp), {})[index] = rec["train_s"]
                for split, seconds in rec["eval_s"].items():
                    evals.setdefault((nats_dataset, split), {}).setdefault(index, seconds)
    data = BenchmarkData(space_name=space_name, arch_strs=arch_strs)
    for key, by_index in runs.items():
        width = max(len(v[1]) for v in by_index.values())
        values = np.full((n, width), np.nan)
        seeds = np.full((n, width), -1, np.int64)
        means = np.full(n, np.nan)
        for index, (run_seeds, accs) in by_index.items():
            values[index, : len(accs)] = accs
            seeds[index, : len(run_seeds)] = run_seeds
            means[index] = sum(accs) / len(accs)  # NATS-Bench's mean (is_random=False)
        data.trials[key], data.trial_seeds[key], data.means[key] = values, seeds, means
    data.train_s.update(_by_architecture(train, n))
    data.eval_s.update(_by_architecture(evals, n))
    data.provenance["records"] = n_records
    data.validate()
    return data


def _by_architecture(values: dict[tuple[str, str], dict[int, float]], n: int) -> dict[tuple[str, str], np.ndarray]:
    """One ``float64[n]`` column per key from ``{key: {index: value}}`` (NaN where none)."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for key, by_index in values.items():
        array = np.full(n, np.nan)
        array[list(by_index)] = list(by_index.values())
        out[key] = array
    return out
