"""Look-up of search spaces by name."""

from __future__ import annotations

import functools

from search_spaces._errors import UsageError
from search_spaces._space import SearchSpace
from search_spaces._sss_space import SSSSpace
from search_spaces._tss_space import TSSSpace

_SPACES: dict[str, type[SearchSpace]] = {"tss": TSSSpace, "sss": SSSSpace}
SPACE_NAMES: tuple[str, ...] = tuple(_SPACES)
"""The names `get_space` accepts."""


@functools.cache
def _instance(name: str) -> SearchSpace:
    return _SPACES[name]()


def get_space(name: str) -> SearchSpace:
    """The search space called `name` (``tss`` or ``sss``, case-insensitive); one instance per process.

    Raises:
        UsageError: unknown name.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key not in _SPACES:
        raise UsageError(f"unknown search space {name!r}; expected one of {', '.join(SPACE_NAMES)}")
    return _instance(key)
