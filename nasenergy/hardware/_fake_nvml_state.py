"""The fake NVML's locked-clock state, shared between processes through a JSON file.

One job: where `FakeNvml` keeps which clocks are locked and the history of lock and reset calls:
in memory, or, with ``state_file``, in a JSON file that several processes (each with its own
`FakeNvml` on the same file) read and update under an exclusive lock, so they see one GPU and a
parent can check whether a killed child left clocks locked.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["SharedClockState"]


class SharedClockState:
    """`FakeNvml`'s part that reads and writes the locked-clock state (``state_file`` or memory)."""

    state_file: Path | None
    _mem_state: dict[str, Any]

    def lock_history(self) -> list[dict[str, Any]]:
        """Set/reset calls recorded in the state file (or in memory), oldest first."""
        return list(self._read_state().get("history", []))

    def _read_state(self) -> dict[str, Any]:
        if self.state_file is None:
            return self._mem_state
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return {"gpus": {}, "history": []}

    @contextlib.contextmanager
    def _locked_state(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write the state, holding an exclusive lock across processes."""
        if self.state_file is None:
            yield self._mem_state
            return
        lock_path = self.state_file.with_name(self.state_file.name + ".lock")
        with open(lock_path, "a+") as lock:
            try:
                import fcntl  # lazy: POSIX only
                fcntl.flock(lock, fcntl.LOCK_EX)
            except ImportError:  # non-POSIX: best effort
                pass
            state = self._read_state()
            yield state
            fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".fake_nvml.")
            with os.fdopen(fd, "w") as f:
                json.dump(state, f)
            os.replace(tmp, self.state_file)

    def _locked(self, index: int) -> tuple[int, int] | None:
        entry = self._read_state().get("gpus", {}).get(str(index))
        if not entry or entry.get("locked_mhz") is None:
            return None
        lo, hi = entry["locked_mhz"]
        return int(lo), int(hi)
