"""`Registry`: named extension points (meters, filters, oracles) filled by one call each.

A registry maps a name to an entry (a small spec object). Built-in entries name their
implementation by a ``"module:attribute"`` string, resolved on first use (`resolve`), so filling a
registry imports nothing heavy and does no work at import time.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from nasenergy.errors import UsageError

T = TypeVar("T")

__all__ = ["Registry", "resolve"]


def resolve(target: Any) -> Any:
    """``target`` itself, or the object a ``"package.module:attribute"`` string names."""
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class Registry(Generic[T]):
    """Named entries of one kind, in registration order.

    Args:
        kind: what the entries are, for messages (e.g. ``"hardware"``).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Add ``entry`` under ``name``; returns it.

        Raises:
            UsageError: ``name`` is taken (pass ``replace=True`` to override it) or empty.
        """
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if name in self._entries and not replace:
            raise UsageError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (no error when absent)."""
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        """The entry called ``name``.

        Raises:
            UsageError: no such entry; the message lists the registered names.
        """
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise UsageError(f"unknown {self.kind} {name!r}; choose from {', '.join(self._entries)}") from None

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))
