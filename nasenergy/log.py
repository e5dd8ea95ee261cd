"""The library's logging: every module logs to ``logging.getLogger(__name__)``, under ``nasenergy``.

Like Optuna's, the library's root logger ``nasenergy`` has a default handler that writes each
message as it is (``%(message)s``, no level or time stamp) to the standard error current at the
time of the message, at level INFO, and does not propagate to the root logger. The command-line
tools therefore print the library's notes and warnings on stderr without configuring anything.

An application that configures logging itself may turn the default handler off and let the
records propagate::

    import nasenergy.log

    nasenergy.log.disable_default_handler()
    nasenergy.log.enable_propagation()

The default handler is attached by `configure_library_logger` (called once when ``nasenergy`` is
imported; it only creates a handler object).
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

__all__ = [
    "LIBRARY_LOGGER",
    "configure_library_logger",
    "disable_default_handler",
    "disable_propagation",
    "enable_default_handler",
    "enable_propagation",
    "set_verbosity",
]

LIBRARY_LOGGER = "nasenergy"
"""The name of the library's root logger."""


class _CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler writing to whatever ``sys.stderr`` is when a record is emitted (so
    redirections and test captures of stderr see the messages)."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__()
        self.setLevel(level)

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


_default_handler: logging.Handler | None = None


def _root() -> logging.Logger:
    return logging.getLogger(LIBRARY_LOGGER)


def configure_library_logger() -> None:
    """Attach the default handler to the ``nasenergy`` logger once (level INFO, no propagation)."""
    global _default_handler
    if _default_handler is not None:
        return
    _default_handler = _CurrentStderrHandler()
    _default_handler.setFormatter(logging.Formatter("%(message)s"))
    root = _root()
    root.addHandler(_default_handler)
    root.setLevel(logging.INFO)
    root.propagate = False


def enable_default_handler() -> None:
    """Write the library's messages to stderr (the default)."""
    configure_library_logger()
    assert _default_handler is not None
    if _default_handler not in _root().handlers:
        _root().addHandler(_default_handler)


def disable_default_handler() -> None:
    """Stop writing the library's messages to stderr (configure your own handlers instead)."""
    configure_library_logger()
    _root().removeHandler(_default_handler)  # type: ignore[arg-type]


def enable_propagation() -> None:
    """Pass the library's records on to the root logger's handlers too."""
    _root().propagate = True


def disable_propagation() -> None:
    """Keep the library's records from the root logger's handlers (the default)."""
    _root().propagate = False


def set_verbosity(level: int) -> None:
    """The least severe level the library logs (default ``logging.INFO``)."""
    configure_library_logger()
    _root().setLevel(level)
