"""The study's journal file: Optuna's journal format, appended without a disk flush per log.

Optuna's own file backend forces every appended log to disk (``fsync``), which costs milliseconds
per log on many disks, and a candidate writes about a dozen logs. `JournalFile` writes the same
format (one JSON log per line, so optuna-dashboard and Optuna's own backend read it) under an
exclusive ``flock`` of the file, and forces it to disk at most every `SYNC_INTERVAL_S` seconds.

Durability is that of the claims database (SQLite with ``synchronous=NORMAL``): a process that
dies, ``kill -9`` included, loses nothing, since the kernel already holds every written byte; only
a crash of the machine itself may lose the last second of logs.

A torn last line (a write cut short by a crash: no final newline) holds a log that never took
effect. Opening the file, and every append, first moves such a tail into a side file
``<journal>.torn-<UTC time>``, reports it in one line and truncates the journal at its last whole
line; an append therefore never lands on a partial line, and the study resumes without that log.
A whole line that is not JSON (damage elsewhere in the file) is refused with a `JournalDamagedError`;
a write that fails (a full disk) is an `OutputError` of one line.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from optuna.storages.journal import BaseJournalBackend

from nasenergy.errors import NasEnergyError, OutputError

logger = logging.getLogger(__name__)

SYNC_INTERVAL_S = 1.0
"""Longest time between two flushes of the journal to disk, seconds."""

TORN_SUFFIX = ".torn-"
"""A torn tail set aside goes to ``<journal>.torn-<UTC time>``."""

_SCAN_BYTES = 1 << 16


class JournalDamagedError(NasEnergyError):
    """A whole line of the journal is not a JSON log."""


def _warn(message: str) -> None:
    logger.warning("warning: %s", message)


class JournalFile(BaseJournalBackend):
    """Optuna's journal format in one file, appended under ``flock``, synced at most every second.

    Import this module only where Optuna is wanted (it imports Optuna).

    Args:
        path: the journal file (created if missing).
        report: called with one line when a torn tail is set aside (default: a warning on stderr).
    """

    def __init__(self, path: str, *, report: Callable[[str], None] = _warn) -> None:
        self.path = str(path)
        self._report = report
        self._offsets: dict[int, int] = {0: 0}  # log number -> byte offset of its line
        self._last_sync = 0.0
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._set_aside_torn_tail(fd)
        finally:
            os.close(fd)  # closing drops the lock

    def read_logs(self, log_number_from: int) -> Iterator[dict[str, Any]]:
        """The logs numbered ``log_number_from`` and later (a line still being written is left out)."""
        known = log_number_from if log_number_from in self._offsets else self._last_known(log_number_from)
        with open(self.path, "rb") as f:
            f.seek(self._offsets[known])
            number, offset = known, self._offsets[known]
            for line in f:
                if not line.endswith(b"\n"):
                    return  # another process is appending it
                offset += len(line)
                self._offsets[number + 1] = offset
                if number >= log_number_from:
                    yield self._parse(line, number)
                number += 1

    def _parse(self, line: bytes, number: int) -> dict[str, Any]:
        try:
            log = json.loads(line)
        except ValueError:
            log = None
        if not isinstance(log, dict):
            raise JournalDamagedError(
                f"{self.path}: line {number + 1} is not a JSON log (the file is damaged); restore it from a copy "
                "or start a new study (--study-name or --out)"
            )
        return log

    def _last_known(self, log_number: int) -> int:
        """The largest log number at most ``log_number`` whose offset is known (rarely needed:
        Optuna asks from the end of what it has read)."""
        return max((n for n in self._offsets if n <= log_number), default=0)

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        """Append ``logs`` as whole lines in one write, holding the file's exclusive lock (after
        setting aside a torn tail another process left)."""
        data = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs).encode("utf-8")
        try:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._set_aside_torn_tail(fd)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                now = time.monotonic()
                if now - self._last_sync >= SYNC_INTERVAL_S:
                    os.fsync(fd)
                    self._last_sync = now
            finally:
                os.close(fd)  # closing drops the lock
        except OSError as exc:  # a full disk, a read-only file: a part written is a torn tail, set aside later
            raise OutputError(
                f"cannot append to {self.path}: {exc.strerror or exc}; its complete records are kept: make room "
                "and run the same command again to resume"
            ) from None

    def _open(self) -> int:
        return os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)

    def _set_aside_torn_tail(self, fd: int) -> Path | None:
        """Move the bytes after the last newline into a side file and truncate; call under the
        exclusive lock (no writer is then mid-line). Returns the side file, if any."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return None
        start = _line_start(fd, size)
        tail = os.pread(fd, size - start, start)
        side = self._side_file()
        with open(side, "xb") as f:
            f.write(tail)
            f.flush()
            os.fsync(f.fileno())
        os.ftruncate(fd, start)
        os.fsync(fd)
        self._report(
            f"{self.path} ended in a partial record ({len(tail)} bytes, a write cut short by a crash); set aside in "
            f"{side.name}; the study resumes without it"
        )
        return side

    def _side_file(self) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        side = Path(f"{self.path}{TORN_SUFFIX}{stamp}")
        k = 1
        while side.exists():
            k += 1
            side = Path(f"{self.path}{TORN_SUFFIX}{stamp}-{k}")
        return side


def _line_start(fd: int, size: int) -> int:
    """The offset just after the last newline before ``size`` (0 if there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - _SCAN_BYTES)
        chunk = os.pread(fd, end - begin, begin)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return begin + at + 1
        end = begin
    return 0
