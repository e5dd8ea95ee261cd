"""The exception hierarchy. Every error a user can cause is a `NasEnergyError` subclass.

Command-line entry points catch `NasEnergyError`, print its message as one line prefixed with
``error:`` and exit with status 2 (bad input) or 1 (a failure of the environment); they never show
a traceback for these.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# The base classes live in the lowest layer, so that search_spaces raises them without importing nasenergy.
from search_spaces._errors import ArchError, NasEnergyError, UsageError

__all__ = [
    "MALFORMED_INPUT_ERRORS",
    "ArchError",
    "CandidateError",
    "DataNotFoundError",
    "NasEnergyError",
    "OutputError",
    "UsageError",
    "first_line",
    "malformed_input",
    "typed_first_line",
    "writing",
]

MALFORMED_INPUT_ERRORS: tuple[type[Exception], ...] = (
    TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, ZeroDivisionError,
)
"""What Python raises when a loader meets values of the wrong type or shape."""


class DataNotFoundError(NasEnergyError, FileNotFoundError):
    """A data file or folder the user pointed to (or the default) does not exist."""

    exit_code = 2


class CandidateError(NasEnergyError):
    """An error that fails one candidate of a search, not the run (exit status 1 if it escapes).

    A measurement that failed (`nasenergy.hardware.MeterError`, an NVML or clock-control failure)
    or a figure a benchmark lacks for one network is recorded as that candidate's ``failed``
    outcome and the search goes on; every other `NasEnergyError` stops the run.
    """


class OutputError(UsageError):
    """A file a command was asked to write cannot be written there (a read-only place, a file
    where a folder is expected, a full disk, a file type the writer does not know)."""


@contextmanager
def writing(path: object) -> Iterator[None]:
    """Turn an `OSError` raised while writing ``path`` into `OutputError` with one line:
    ``cannot write <path>: <reason>``."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or first_line(exc)}") from None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type name when it has none."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def typed_first_line(exc: BaseException) -> str:
    """``<type name>: <first line of the message>`` (the type name alone when there is none)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


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
