"""The exception hierarchy. Every error a user can cause is a `NasEnergyError` subclass.

Command-line entry points catch `NasEnergyError`, print its message as one line prefixed with
``error:`` and exit with status 2 (bad input) or 1 (a failure of the environment); they never show
a traceback for these.
"""

from __future__ import annotations


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
