"""Who may use a run folder: an advisory ``flock`` on ``<run>/run.lock``.

The command that starts a run takes the lock exclusively (so it knows no worker of an earlier,
killed run is alive), does its start-up repairs, then holds it shared; every worker process it
starts holds it shared too. The kernel drops a lock when its process dies, ``kill -9`` included,
so a stale lock never blocks a resume.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from nasenergy.errors import UsageError

LOCK_FILE = "run.lock"


class RunInUseError(UsageError):
    """Another search is using the run folder."""


class RunFolderLock:
    """The lock of one run folder (created if missing).

    Args:
        run_dir: the run folder.

    Raises:
        UsageError: the folder cannot be created or written (one line naming ``--out``).
    """

    def __init__(self, run_dir: Path) -> None:
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out: cannot create the run folder {run_dir}: {exc.strerror or exc}") from None
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise UsageError(
                    f"--out: cannot write in the run folder {self.path.parent}: {exc.strerror or exc}"
                ) from None
        return self._fd

    def acquire_exclusive(self) -> None:
        """Take the lock alone, without waiting.

        Raises:
            RunInUseError: another process holds it.
        """
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.path.read_text().strip() or "unknown"
            raise RunInUseError(
                f"run folder {self.path.parent} is in use by another search (pid {holder}); wait for it to end "
                "(or stop it: Ctrl-C, then run the same command to resume), or give this search another --out; "
                "to have more workers on one study, start it with --workers N, or keep it in a database "
                "(--storage postgresql://...) that commands on other run folders and machines can join"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)

    def acquire_shared(self) -> None:
        """Hold the lock shared (blocks while another process holds it exclusively)."""
        fcntl.flock(self._open(), fcntl.LOCK_SH)

    def release(self) -> None:
        """Drop the lock."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunFolderLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
