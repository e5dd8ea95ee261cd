"""`Registry`: named extension points (meters, filters, oracles) filled by one call each.

A registry maps a name to an entry (a small spec object). Built-in entries name their
implementation by a ``"module:attribute"`` string, resolved on first use (`resolve`), so filling a
registry imports nothing heavy and does no work at import time.

Plugins: a registry with a ``plugin_group`` also takes parts from installed packages. A package
declares an entry point in that group (e.g. ``nasenergy.filters``) naming a module, whose import
registers its parts, or a callable, called with no arguments, that registers them. The group's
entry points are loaded once, the first time the registry is asked for a name it does not hold (or
by `Registry.load_plugins`); an entry point named in several groups is loaded once. A plugin that
fails to load is logged and named in the registry's "unknown name" message.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import types
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from nasenergy.errors import UsageError

T = TypeVar("T")

logger = logging.getLogger(__name__)

__all__ = ["Choices", "Registry", "load_entry_points", "resolve"]

_LOADED_ENTRY_POINTS: dict[str, str | None] = {}
"""Each entry point loaded in this process (by its value, ``module:attribute``) -> ``None``, or
the one-line reason it failed."""


def resolve(target: Any) -> Any:
    """``target`` itself, or the object a ``"package.module:attribute"`` string names."""
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_entry_points(group: str) -> list[str]:
    """Load the installed entry points of ``group`` not loaded before in this process: import a
    module, or import and call a callable with no arguments.

    Returns:
        One line per entry point of ``group`` that failed to load (now or before).
    """
    failures: list[str] = []
    for entry_point in importlib.metadata.entry_points(group=group):
        key = entry_point.value
        if key not in _LOADED_ENTRY_POINTS:
            _LOADED_ENTRY_POINTS[key] = None  # before loading: a plugin that asks a registry does not recurse
            try:
                loaded = entry_point.load()
                if callable(loaded) and not isinstance(loaded, types.ModuleType):
                    loaded()
            except Exception as exc:  # a broken plugin must not break the registry; it is reported
                reason = f"plugin {entry_point.name!r} ({key}) did not load: {type(exc).__name__}: {exc}"
                _LOADED_ENTRY_POINTS[key] = reason.splitlines()[0]
                logger.warning("%s", _LOADED_ENTRY_POINTS[key])
        if _LOADED_ENTRY_POINTS[key] is not None:
            failures.append(str(_LOADED_ENTRY_POINTS[key]))
    return failures


class Registry(Generic[T]):
    """Named entries of one kind, in registration order.

    Args:
        kind: what the entries are, for messages (e.g. ``"hardware"``).
        plugin_group: the entry-point group whose plugins add entries (e.g. ``"nasenergy.filters"``),
            loaded the first time a name is missing; ``None``: no plugins.
    """

    def __init__(self, kind: str, *, plugin_group: str | None = None) -> None:
        self.kind = kind
        self.plugin_group = plugin_group
        self._entries: dict[str, T] = {}
        self._plugins_loaded = plugin_group is None
        self._plugin_failures: list[str] = []

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

    def load_plugins(self) -> None:
        """Load the plugins of `plugin_group` (once; later calls do nothing)."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        assert self.plugin_group is not None
        self._plugin_failures = load_entry_points(self.plugin_group)

    def get(self, name: str) -> T:
        """The entry called ``name`` (loading the plugins first when it is not registered).

        Raises:
            UsageError: no such entry; the message lists the registered names (and any plugin
                that failed to load).
        """
        if name in self:
            return self._entries[name]
        failed = f" ({'; '.join(self._plugin_failures)})" if self._plugin_failures else ""
        raise UsageError(f"unknown {self.kind} {name!r}; choose from {', '.join(self._entries)}{failed}")

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (plugins not loaded yet are not asked)."""
        return tuple(self._entries)

    def choices(self, *extra: str) -> Choices:
        """A live view of ``extra`` and the registered names, for argparse ``choices`` and
        validation: asking it about a missing name loads the plugins first."""
        return Choices(self, extra)

    def __contains__(self, name: object) -> bool:
        try:
            if name in self._entries:
                return True
        except TypeError:  # unhashable
            return False
        if not self._plugins_loaded and isinstance(name, str):
            self.load_plugins()
            return name in self._entries
        return False

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))


class Choices:
    """``extra`` names and a registry's names, read when asked (see `Registry.choices`)."""

    def __init__(self, registry: Registry[Any], extra: tuple[str, ...] = ()) -> None:
        self._registry = registry
        self._extra = extra

    def __contains__(self, name: object) -> bool:
        return name in self._extra or name in self._registry

    def __iter__(self) -> Iterator[str]:
        return iter((*self._extra, *self._registry.names()))

    def __len__(self) -> int:
        return len(self._extra) + len(self._registry.names())

    def __repr__(self) -> str:
        return f"Choices({', '.join(self)})"
