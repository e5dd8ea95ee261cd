"""The error classes at the bottom of the hierarchy, shared with `nasenergy.errors`.

`search_spaces` is the lowest layer: it imports nothing of `nasenergy`. The base classes of the
error hierarchy live here so that a bad space name or architecture string raised here is the very
`nasenergy.errors.UsageError` / `ArchError` that command-line entry points turn into exit status 2.
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


class UnknownDatasetError(UsageError, ValueError):
    """A dataset name no spelling of which is known, or a split or schedule name the accuracy
    benchmarks do not know (`nasenergy.oracles` raises it for those)."""
