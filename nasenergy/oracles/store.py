"""The local benchmark file: one compressed ``.npz`` (no pickles) holding a `BenchmarkData`.

Arrays are stored under names ``<kind>|<key parts joined by |>``:

=================================  ========================  ===================================
name                               dtype, shape              meaning
=================================  ========================  ===================================
``arch_strs``                      ``<U..``, ``[N]``         official strings in index order
``meta``                           ``<U..``, ``[]``          JSON: format, space, provenance
``mean|<nats_ds>|<split>|<hp>``    ``float64[N]``            mean accuracy over runs, %
``trials|<nats_ds>|<split>|<hp>``  ``float64[N, K]``         accuracy of each run, %
``seeds|<nats_ds>|<split>|<hp>``   ``int64[N, K]``           seed of each run, -1 unknown
``train_s|<nats_ds>|<hp>``         ``float64[N]``            total training seconds
``eval_s|<nats_ds>|<split>``       ``float64[N]``            seconds of one evaluation pass
``est_rate|train``                 ``float64[N]``            predicted train s per image-epoch
``est_rate|eval``                  ``float64[N]``            predicted evaluation s per image
=================================  ========================  ===================================

Writing is atomic (a temporary file renamed into place). Loading reads every array eagerly with
``allow_pickle=False``.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import tokenize
import zipfile
import zlib
from pathlib import Path

import numpy as np

from nasenergy.errors import malformed_input
from nasenergy.oracles.archs import SPACE_SIZES
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.errors import BenchmarkNotFoundError, CorruptBenchmarkError, GET_A_BENCHMARK
from nasenergy.oracles.provenance import check_provenance

FORMAT = "nasenergy-benchmark"
FORMAT_VERSION = 1
_SEP = "|"


TMP_PREFIX = ".tmp-"
"""A benchmark file being written is ``.tmp-<pid>-<random>.npz`` beside its target."""

ORPHAN_AGE_S = 3600.0
"""A temporary file whose writer cannot be told (no pid in its name) is stale after this long."""


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files (``.tmp-*.npz``) that writers killed mid-write left in ``folder``:
    those whose writer's process on this machine is gone, and nameless ones older than an hour.
    Returns the files removed (a file another process removes first is skipped)."""
    removed = []
    for tmp in folder.glob(f"{TMP_PREFIX}*.npz"):
        pid_text = tmp.name[len(TMP_PREFIX):].split("-", 1)[0]
        try:
            stale = not _alive(int(pid_text))
        except ValueError:
            try:
                stale = time.time() - tmp.stat().st_mtime > ORPHAN_AGE_S
            except FileNotFoundError:
                continue
        if stale:
            try:
                tmp.unlink()
            except FileNotFoundError:
                continue
            removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def save_benchmark(data: BenchmarkData, path: str | Path) -> Path:
    """Write `data` to `path` (``.npz``) atomically (first removing what killed writers left behind,
    `remove_stale_temporaries`).

    Returns:
        The path written.
    """
    data.validate()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "space": data.space_name,
            "provenance": data.provenance}
    arrays: dict[str, np.ndarray] = {
        "arch_strs": np.asarray(data.arch_strs, dtype=str),
        "meta": np.asarray(json.dumps(meta, sort_keys=True)),
    }
    for kind, table in (("mean", data.means), ("trials", data.trials), ("seeds", data.trial_seeds),
                        ("train_s", data.train_s), ("eval_s", data.eval_s)):
        for key, array in table.items():
            arrays[_SEP.join((kind, *key))] = array
    for name, rate in (("train", data.est_train_rate), ("eval", data.est_eval_rate)):
        if rate is not None:
            arrays[_SEP.join(("est_rate", name))] = rate
    remove_stale_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix=".npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]  # (numpy's stub types **kwds with allow_pickle)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())  # on disk before it replaces the installed file
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


# What numpy raises on a damaged .npz: a bad archive, a bad array, or an .npy header it cannot parse
# (the header is a Python literal: a damaged one raises SyntaxError or tokenize.TokenError).
_DAMAGED = (OSError, ValueError, KeyError, zipfile.BadZipFile, zlib.error, EOFError, RecursionError, SyntaxError,
            tokenize.TokenError)


def read_meta(path: str | Path) -> dict:
    """The JSON header of a benchmark file, without reading its arrays.

    Raises:
        BenchmarkNotFoundError: no such file.
        CorruptBenchmarkError: not a nasenergy benchmark file.
    """
    path = Path(path)
    if not path.is_file():
        raise BenchmarkNotFoundError(f"no benchmark file at {path}; {GET_A_BENCHMARK}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
    except _DAMAGED as exc:
        raise CorruptBenchmarkError(
            f"{path} is not a readable nasenergy benchmark file ({type(exc).__name__}); "
            f"re-create it with `python -m nasenergy.benchmark import`"
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
        raise CorruptBenchmarkError(
            f"{path} is not a version-{FORMAT_VERSION} nasenergy benchmark file; "
            f"re-create it with `python -m nasenergy.benchmark import`"
        )
    return meta


def load_benchmark(path: str | Path) -> BenchmarkData:
    """Read a benchmark file written by `save_benchmark`.

    Raises:
        BenchmarkNotFoundError: no such file.
        CorruptBenchmarkError: unreadable, truncated, or not a nasenergy benchmark file.
    """
    path = Path(path)
    meta = read_meta(path)
    tables: dict[str, dict[tuple[str, ...], np.ndarray]] = {
        "mean": {}, "trials": {}, "seeds": {}, "train_s": {}, "eval_s": {}, "est_rate": {}}
    try:
        with np.load(path, allow_pickle=False) as npz:
            arch_strs = npz["arch_strs"]
            for name in npz.files:
                kind, *key = name.split(_SEP)
                if kind in tables:
                    tables[kind][tuple(key)] = npz[name]
    except _DAMAGED as exc:
        raise CorruptBenchmarkError(
            f"{path} is damaged ({type(exc).__name__}); re-create it with "
            f"`python -m nasenergy.benchmark import`"
        ) from None
    damaged = f"{path} is damaged (re-create it with `python -m nasenergy.benchmark import`)"
    space_name = meta.get("space")
    if not isinstance(space_name, str) or space_name not in SPACE_SIZES:
        raise CorruptBenchmarkError(f"{damaged}: its header names no space tss or sss")
    provenance = check_provenance(meta.get("provenance", {}), damaged)
    if arch_strs.shape != (SPACE_SIZES[space_name],):
        raise CorruptBenchmarkError(
            f"{damaged}: it lists {arch_strs.size} architectures, {space_name} has {SPACE_SIZES[space_name]}"
        )
    for kind, table in tables.items():
        expected = "i" if kind == "seeds" else "f"
        for key, array in table.items():
            if array.dtype.kind != expected:
                raise CorruptBenchmarkError(f"{damaged}: array {_SEP.join((kind, *key))} holds {array.dtype}")
    with malformed_input(CorruptBenchmarkError, damaged):
        data = BenchmarkData(
            space_name=space_name,
            arch_strs=arch_strs,
            means=tables["mean"],  # type: ignore[arg-type]
            trials=tables["trials"],  # type: ignore[arg-type]
            trial_seeds=tables["seeds"],  # type: ignore[arg-type]
            train_s=tables["train_s"],  # type: ignore[arg-type]
            eval_s=tables["eval_s"],  # type: ignore[arg-type]
            est_train_rate=tables["est_rate"].get(("train",)),
            est_eval_rate=tables["est_rate"].get(("eval",)),
            provenance=dict(provenance),
        )
        data.validate()
    return data
