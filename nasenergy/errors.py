"""The exception hierarchy. Every error a user can cause is a `NasEnergyError` subclass.

Command-line entry points catch `NasEnergyError`, print its message as one line prefixed with
``error:`` and exit with status 2 (bad input) or 1 (a failure of the environment); they never show
a traceback for these.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

MALFORMED_INPUT_ERRORS: tuple[type[Exception], ...] = (
    TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, ZeroDivisionError,
)
"""What Python raises when a loader meets values of the wrong type or shape."""


class NasEnergyError(Exception):
    """Base class of every error nasenergy raises on purpose. Its message is one clear line."""

    exit_code: int = 1


class UsageError(NasEnergyError):
    """A bad argument, flag value or input file supplied by the user (exit status 2)."""

    exit_code = 2


class ArchError(UsageError, ValueError):
    """A malformed or unknown architecture string."""


class DataNotFoundError(NasEnergyError, FileNotFoundError):
    """A data file or folder the user pointed to (or the default) does not exist."""

    exit_code = 2


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type name when it has none."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


@contextmanager
def malformed_input(
    error: type[NasEnergyError], what: str, *, also: tuple[type[Exception], ...] = ()
) -> Iterator[None]:
    """Turn a Python error raised while reading ``what`` into ``error`` with one line.

    A loader wraps the code that interprets the file's content in it: a value of the wrong type
    or shape then reads ``<what>: <first line of the Python error>`` instead of a traceback.
    A `NasEnergyError` passes through unchanged. ``also``: more exception types that mean
    malformed input there (e.g. a library's ``AssertionError`` on a record it cannot replay).
    """
    try:
        yield
    except NasEnergyError:
        raise
    except (*MALFORMED_INPUT_ERRORS, *also) as exc:
        raise error(f"{what}: {type(exc).__name__}: {first_line(exc)}") from None
