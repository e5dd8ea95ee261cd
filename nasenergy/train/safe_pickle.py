"""Reading pickled data files without running the code a pickle can name.

A pickle is a program: unpickling may call any function it names (``os.system`` included). The
CIFAR datasets are distributed as pickles of plain data (dicts, lists, byte strings, numbers and
numpy arrays), so `load_pickle` admits only the few numpy functions that rebuild an array or a
numpy scalar and refuses every other global before it is looked up, hence before it can run. The
loaded payload is then walked: anything but plain data is refused as well.
"""

from __future__ import annotations

import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import UsageError, first_line

__all__ = ["ALLOWED_GLOBALS", "RestrictedUnpickler", "load_pickle"]

_NUMPY_CORES = ("numpy.core", "numpy._core")
_NUMPY_CORE = "numpy._core" if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else "numpy.core"
ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {(f"{core}.multiarray", name) for core in _NUMPY_CORES for name in ("_reconstruct", "scalar")}
    | {(f"{core}.numeric", "_frombuffer") for core in _NUMPY_CORES}
    | {("numpy", "ndarray"), ("numpy", "dtype")}
)
"""``(module, name)`` of every global a data pickle may name: numpy's array and scalar rebuilders
(under both spellings of numpy's core package, 1.x and 2.x), the array type and the dtype type.
``_codecs.encode`` is answered by `_latin1_bytes` instead (see there)."""

_PLAIN = (str, bytes, bytearray, int, float, complex, bool, type(None))


def _latin1_bytes(text: str, encoding: str) -> bytes:
    """What ``_codecs.encode`` means in a pickle of protocol 0-2 written by Python 3: a byte
    string spelt as Latin-1 text (``bytes`` and array buffers are pickled so)."""
    return text.encode("latin1")


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals of `ALLOWED_GLOBALS` (and ``_codecs.encode``
    as `_latin1_bytes`).

    Args:
        file: the open binary file.
        what: how error messages name the file (e.g. its path).
        error: the exception class raised on a refused global.
    """

    def __init__(self, file: Any, *, what: str, error: type[UsageError] = UsageError) -> None:
        super().__init__(file, encoding="bytes")
        self._what = what
        self._error = error

    def find_class(self, module: str, name: str) -> Any:
        """The global ``module.name`` if it is admitted; else the error, before any import."""
        if (module, name) == ("_codecs", "encode"):
            return self._codecs_encode
        if (module, name) not in ALLOWED_GLOBALS:
            raise self._error(f"refused: {self._what} holds a {module}.{name}, not data")
        if module.startswith(_NUMPY_CORES):  # numpy 2 renamed numpy.core to numpy._core
            module = _NUMPY_CORE + module[module.index(".", len("numpy.")):]
        return super().find_class(module, name)

    def _codecs_encode(self, text: object, encoding: object = "utf-8") -> bytes:
        """``_codecs.encode`` as a pickle of plain data uses it: Latin-1 text to bytes; else refused."""
        if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
            raise self._error(f"refused: {self._what} holds a _codecs.encode of a {type(text).__name__} "
                              f"to {encoding!r}, not data")
        return _latin1_bytes(text, encoding)


def _check_plain(value: object, what: str, error: type[UsageError], depth: int = 0) -> None:
    """Raise ``error`` unless ``value`` is plain data: dicts, lists, tuples, strings, bytes,
    numbers, numpy scalars and numpy arrays of a non-object dtype, nested to any depth."""
    if depth > 100:
        raise error(f"refused: {what} nests its data more than 100 levels deep")
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise error(f"refused: {what} holds an array of Python objects, not data")
        return
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, what, error, depth + 1)
            _check_plain(item, what, error, depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_plain(item, what, error, depth + 1)
        return
    kind = type(value)
    raise error(f"refused: {what} holds a {kind.__module__}.{kind.__qualname__}, not data")


def load_pickle(path: Path, *, error: type[UsageError] = UsageError) -> object:
    """Read a pickle of plain data (a CIFAR batch or meta file) with `RestrictedUnpickler`.

    Byte strings of Python 2 pickles stay ``bytes`` (the keys of the CIFAR dicts read
    ``b"data"``, ``b"labels"``).

    Args:
        path: the pickle file.
        error: the exception class for every problem (a `UsageError` subclass).

    Returns:
        The payload: dicts, lists, tuples, strings, bytes, numbers and numpy arrays.

    Raises:
        error: one line when the file cannot be read, is truncated or corrupt, or names any
            global outside `ALLOWED_GLOBALS` or holds anything but plain data (``refused: ...``).
    """
    try:
        with open(path, "rb") as f:
            payload: object = RestrictedUnpickler(f, what=str(path), error=error).load()
    except UsageError:
        raise
    except OSError as exc:
        raise error(f"{path}: cannot be read: {first_line(exc)}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, ImportError, struct.error, OverflowError, MemoryError, RecursionError) as exc:
        raise error(f"{path}: not a readable pickle (truncated or corrupt): "
                    f"{type(exc).__name__}: {first_line(exc)}") from None
    _check_plain(payload, str(path), error)
    return payload
