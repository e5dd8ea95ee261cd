"""The study's journal file: Optuna's journal format, appended without a disk flush per log.

Optuna's own file backend forces every appended log to disk (``fsync``), which costs milliseconds
per log on many disks, and a candidate writes about a dozen logs. `JournalFile` writes the same
format (one JSON log per line, so optuna-dashboard and Optuna's own backend read it) under an
exclusive ``flock`` of the file, and forces it to disk at most every `SYNC_INTERVAL_S` seconds.

Durability is that of the claims database (SQLite with ``synchronous=NORMAL``): a process that
dies, ``kill -9`` included, loses nothing, since the kernel already holds every written byte; only
a crash of the machine itself may lose the last second of logs.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from optuna.storages.journal import BaseJournalBackend

SYNC_INTERVAL_S = 1.0
"""Longest time between two flushes of the journal to disk, seconds."""


class JournalFile(BaseJournalBackend):
    """Optuna's journal format in one file, appended under ``flock``, synced at most every second.

    Import this module only where Optuna is wanted (it imports Optuna).

    Args:
        path: the journal file (created if missing).
    """

    def __init__(self, path: str) -> None:
        self.path = str(path)
        with open(self.path, "ab"):
            pass
        self._offsets: dict[int, int] = {0: 0}  # log number -> byte offset of its line
        self._last_sync = 0.0

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
                    yield json.loads(line)
                number += 1

    def _last_known(self, log_number: int) -> int:
        """The largest log number at most ``log_number`` whose offset is known (rarely needed:
        Optuna asks from the end of what it has read)."""
        return max((n for n in self._offsets if n <= log_number), default=0)

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        """Append ``logs`` as whole lines in one write, holding the file's exclusive lock."""
        data = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs).encode("utf-8")
        with open(self.path, "ab") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                f.write(data)
                f.flush()
                now = time.monotonic()
                if now - self._last_sync >= SYNC_INTERVAL_S:
                    os.fsync(f.fileno())
                    self._last_sync = now
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
