"""Look-up of search spaces by name, and `register_space` for new ones."""

from __future__ import annotations

import functools
from collections.abc import Callable

from search_spaces._errors import UsageError
from search_spaces._space import SearchSpace
from search_spaces._sss_space import SSSSpace
from search_spaces._tss_space import TSSSpace

_SPACES: dict[str, Callable[[], SearchSpace]] = {"tss": TSSSpace, "sss": SSSSpace}
SPACE_NAMES: tuple[str, ...] = tuple(_SPACES)
"""The NATS-Bench spaces shipped with the package (`space_names` adds any registered later)."""


def register_space(name: str, factory: Callable[[], SearchSpace], *, replace: bool = False) -> None:
    """Make a search space available to `get_space` (and ``--space``) under ``name``.

    Args:
        name: its name (lower case).
        factory: builds it (a `SearchSpace` subclass or any callable); called once per process.
        replace: allow replacing a registered name.

    Raises:
        UsageError: ``name`` is taken (and ``replace`` is false) or not a lower-case string.
    """
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise UsageError(f"a search space name must be a non-empty lower-case string, got {name!r}")
    if name in _SPACES and not replace:
        raise UsageError(f"search space {name!r} is already registered")
    _SPACES[name] = factory
    _instance.cache_clear()


def space_names() -> tuple[str, ...]:
    """Every name `get_space` accepts, in registration order."""
    return tuple(_SPACES)


@functools.cache
def _instance(name: str) -> SearchSpace:
    return _SPACES[name]()


def get_space(name: str) -> SearchSpace:
    """The search space called `name` (``tss``, ``sss`` or a registered one, case-insensitive);
    one instance per process.

    Raises:
        UsageError: unknown name.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key not in _SPACES:
        raise UsageError(f"unknown search space {name!r}; expected one of {', '.join(_SPACES)}")
    return _instance(key)
