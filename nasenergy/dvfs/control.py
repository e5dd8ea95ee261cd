"""Locking the GPU's SM clock through NVML, with the previous clocks restored whatever happens.

`ClockControl.locked` locks the SM clock to one supported value for the duration of a ``with``
block and resets it (``nvmlDeviceResetGpuLockedClocks``) on normal exit, on an exception and on
SIGINT/SIGTERM (handlers are installed for the duration of the block in the main thread and the
previous ones restored; after the reset the signal is delivered again, so the process ends with
the conventional status). Before locking it writes a marker file (JSON) naming the process and the
GPU; the marker is removed once the clocks are reset. If the process is killed outright
(``kill -9``) between lock and reset, the marker stays, and `recover_stale_locks` (or the next
`ClockControl` on that GPU) resets the clocks.

Nothing changes clocks without an explicit opt-in: ``ClockControl(..., allow=True)`` (on command
lines ``--allow-clock-control``). Changing clocks needs root (or CAP_SYS_ADMIN).

Markers live in ``$NASENERGY_CLOCK_STATE_DIR``, else ``$XDG_CACHE_HOME/nasenergy/clock_locks``,
else ``~/.cache/nasenergy/clock_locks``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Iterator

from nasenergy.errors import CandidateError, UsageError
from nasenergy.hardware.nvml import NvmlDevice, NvmlError, NvmlNoPermission, open_device

STATE_DIR_ENV = "NASENERGY_CLOCK_STATE_DIR"
OPT_IN_HINT = "pass allow=True (on the command line: --allow-clock-control)"
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class ClockControlError(CandidateError):
    """Clocks could not be locked or restored."""


class ClockControlRefused(UsageError):
    """Clock control was asked for without the explicit opt-in."""


class ClockPermissionError(ClockControlError):
    """The process may not change GPU clocks (not root, no CAP_SYS_ADMIN)."""


class ClockControlInterrupted(ClockControlError):
    """A signal ended a locked block; the clocks were restored."""


class _ClockSignal(BaseException):
    """Raised by the temporary signal handler to unwind the locked block."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def default_state_dir() -> Path:
    """Where lock markers are kept (see the module docstring)."""
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache else Path.home() / ".cache"
    return base / "nasenergy" / "clock_locks"


@dataclass(frozen=True)
class LockMarker:
    """The record a locking process leaves while clocks are locked.

    Attributes:
        pid: the locking process.
        hostname: the machine it ran on.
        device_index: NVML index of the GPU.
        device_uuid: the GPU's UUID.
        locked_mhz: the locked ``(min, max)`` SM clock, MHz.
        since_unix_s: when the lock was taken, seconds since the epoch.
    """

    pid: int
    hostname: str
    device_index: int
    device_uuid: str
    locked_mhz: tuple[int, int]
    since_unix_s: float

    @classmethod
    def read(cls, path: Path) -> "LockMarker":
        d = json.loads(path.read_text())
        return cls(int(d["pid"]), str(d["hostname"]), int(d["device_index"]),
                   str(d["device_uuid"]), (int(d["locked_mhz"][0]), int(d["locked_mhz"][1])),
                   float(d["since_unix_s"]))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".marker.")
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(self), f)
        os.replace(tmp, path)


@dataclass(frozen=True)
class RecoveredLock:
    """What `recover_stale_locks` did with one marker.

    Attributes:
        marker: the marker found.
        action: ``reset`` (clocks reset, marker removed), ``skipped: ...`` (left alone, with the
            reason) or ``failed: ...``.
    """

    marker: LockMarker
    action: str


def _marker_path(state_dir: Path, uuid: str) -> Path:
    return state_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", uuid) + ".json")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed but unreaped child still answers kill(0): treat zombies as dead
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _owner_state(marker: LockMarker) -> str | None:
    """Why a marker must be left alone (owner alive / other host), or ``None`` if it is stale."""
    if marker.hostname != socket.gethostname():
        return f"skipped: locked from host {marker.hostname}"
    if marker.pid == os.getpid() or _pid_alive(marker.pid):
        return f"skipped: owner process {marker.pid} is alive"
    return None


def _refuse(action: str) -> None:
    raise ClockControlRefused(f"refusing to {action}: changing GPU clocks needs an explicit "
                              f"opt-in; {OPT_IN_HINT}")


def recover_stale_locks(*, allow: bool = False, nvml: Any = None,
                        state_dir: str | Path | None = None) -> list[RecoveredLock]:
    """Reset the clocks of GPUs left locked by processes that died without restoring them.

    Args:
        allow: the explicit opt-in to touching GPU clocks.
        nvml: the NVML binding (e.g. ``FakeNvml``); ``None`` imports ``pynvml``.
        state_dir: the marker folder (default `default_state_dir`).

    Returns:
        One `RecoveredLock` per marker found (empty when there are none; NVML is then not used).

    Raises:
        ClockControlRefused: ``allow`` is false and there is a stale marker to act on.
    """
    d = Path(state_dir) if state_dir is not None else default_state_dir()
    out: list[RecoveredLock] = []
    for path in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            marker = LockMarker.read(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out.append(RecoveredLock(LockMarker(-1, "?", -1, path.stem, (0, 0), 0.0),
                                     f"skipped: unreadable marker {path} ({exc})"))
            continue
        reason = _owner_state(marker)
        if reason is not None:
            out.append(RecoveredLock(marker, reason))
            continue
        if not allow:
            _refuse(f"reset GPU {marker.device_index} left locked at {marker.locked_mhz[1]} MHz "
                    f"by dead process {marker.pid}")
        try:
            with open_device(marker.device_index, nvml=nvml) as dev:
                if dev.uuid != marker.device_uuid:
                    out.append(RecoveredLock(marker, f"skipped: GPU {marker.device_index} is now "
                                                     f"{dev.uuid}, not {marker.device_uuid}"))
                    continue
                dev.reset_locked_clocks()
            path.unlink(missing_ok=True)
            out.append(RecoveredLock(marker, "reset"))
        except NvmlError as exc:
            out.append(RecoveredLock(marker, f"failed: {exc}"))
    return out


class ClockControl:
    """Locks one GPU's SM clock for the duration of a ``with`` block (see the module docstring).

    Args:
        device: an open `NvmlDevice`, or the NVML index of the GPU to open.
        allow: the explicit opt-in; without it `locked` and recovery refuse.
        nvml: the NVML binding used when `device` is an index (e.g. ``FakeNvml``).
        state_dir: the marker folder (default `default_state_dir`).

    Example::

        with ClockControl(0, allow=True) as clocks, clocks.locked(sm_mhz=1410):
            run_workload()
    """

    def __init__(self, device: NvmlDevice | int = 0, *, allow: bool = False, nvml: Any = None,
                 state_dir: str | Path | None = None) -> None:
        self.allow = bool(allow)
        self._nvml = nvml
        self._owns_device = not isinstance(device, NvmlDevice)
        self.device: NvmlDevice = device if isinstance(device, NvmlDevice) else open_device(int(device), nvml=nvml)
        self.state_dir = Path(state_dir) if state_dir is not None else default_state_dir()
        self._clocks: tuple[int, ...] | None = None
        self._active = False

    # ------------------------------------------------------------------ queries (read-only)
    def supported_clocks_mhz(self) -> tuple[int, ...]:
        """The SM clocks the GPU supports at its highest memory clock, MHz, ascending."""
        if self._clocks is None:
            self._clocks = tuple(self.device.supported_graphics_clocks_mhz())
        return self._clocks

    def default_clock_mhz(self) -> int:
        """The GPU's default SM clock, MHz."""
        return self.device.default_sm_clock_mhz()

    def snap(self, sm_mhz: float) -> int:
        """The supported clock nearest to `sm_mhz` (ties go to the lower clock).

        Raises:
            UsageError: `sm_mhz` lies outside the supported range.
        """
        clocks = self.supported_clocks_mhz()
        if not clocks:
            raise ClockControlError(f"GPU {self.device.index} reports no supported SM clocks")
        if not clocks[0] <= sm_mhz <= clocks[-1]:
            raise UsageError(f"SM clock {sm_mhz:g} MHz is outside the supported range "
                             f"{clocks[0]}-{clocks[-1]} MHz of GPU {self.device.index}")
        return min(clocks, key=lambda c: (abs(c - sm_mhz), c))

    # ------------------------------------------------------------------ locking
    def _marker_path(self) -> Path:
        return _marker_path(self.state_dir, self.device.uuid or f"gpu{self.device.index}")

    def _check_marker(self) -> None:
        """Repair a stale lock of this GPU; refuse if a live process holds one."""
        path = self._marker_path()
        if not path.exists():
            return
        try:
            marker = LockMarker.read(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ClockControlError(f"unreadable clock-lock marker {path} ({exc}); check that no "
                                    "other process is changing this GPU's clocks, then delete it"
                                    ) from None
        reason = _owner_state(marker)
        if reason is not None:
            raise ClockControlError(
                f"GPU {self.device.index} clocks are locked by process {marker.pid} on "
                f"{marker.hostname} (marker {path}); not taking them over")
        self.device.reset_locked_clocks()
        path.unlink(missing_ok=True)

    def _install_handlers(self, caught: list[int], cleaning: list[bool]) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}

        def handler(signum: int, frame: FrameType | None) -> None:
            caught.append(signum)
            if len(caught) == 1 and not cleaning:
                raise _ClockSignal(signum)

        previous: dict[int, Any] = {}
        for sig in _SIGNALS:
            old = signal.getsignal(sig)
            if old is signal.SIG_IGN or old is None:
                continue
            previous[sig] = old
            signal.signal(sig, handler)
        return previous

    def _reset(self, target: int) -> None:
        try:
            self.device.reset_locked_clocks()
        except NvmlError as exc:
            idx = self.device.index
            raise ClockControlError(
                f"could not reset the clocks of GPU {idx} ({exc}); they may still be locked at "
                f"{target} MHz: run 'nvidia-smi -i {idx} -rgc' as root or "
                f"nasenergy.dvfs.recover_stale_locks(allow=True)") from None
        self._marker_path().unlink(missing_ok=True)

    @contextlib.contextmanager
    def locked(self, sm_mhz: float) -> Iterator[int]:
        """Lock the SM clock at the supported clock nearest `sm_mhz` for the ``with`` block.

        Yields:
            The clock actually locked, MHz.

        Raises:
            ClockControlRefused: no opt-in (``allow=False``).
            ClockPermissionError: the process may not change clocks.
            ClockControlError: another live process holds a lock on this GPU, or the reset failed.
            ClockControlInterrupted: a SIGINT/SIGTERM whose previous handler did not end the
                process arrived inside the block (clocks were restored).
            UsageError: `sm_mhz` is outside the supported range, or the block is nested.
        """
        if not self.allow:
            _refuse(f"lock the SM clock of GPU {self.device.index} at {sm_mhz:g} MHz")
        if self._active:
            raise UsageError("clocks are already locked by this ClockControl; locks do not nest")
        target = self.snap(sm_mhz)
        self._check_marker()
        caught: list[int] = []
        cleaning: list[bool] = []        # non-empty once cleanup starts: signals only recorded
        previous = self._install_handlers(caught, cleaning)
        self._active = True
        attempted = False
        try:
            LockMarker(os.getpid(), socket.gethostname(), self.device.index,
                       self.device.uuid or f"gpu{self.device.index}", (target, target),
                       time.time()).write(self._marker_path())
            attempted = True
            try:
                self.device.set_locked_clocks(target, target)
            except NvmlNoPermission as exc:
                attempted = False
                raise ClockPermissionError(
                    f"cannot lock the SM clock of GPU {self.device.index}: {exc}. Without that "
                    "privilege, leave clock control off and use the DVFS model instead") from None
            except NvmlError:
                attempted = False
                raise
            yield target
        finally:
            cleaning.append(True)
            try:
                if attempted:
                    self._reset(target)
                else:
                    self._marker_path().unlink(missing_ok=True)
            finally:
                self._active = False
                for sig, old in previous.items():
                    signal.signal(sig, old)
                if caught:
                    signal.raise_signal(caught[0])
                    raise ClockControlInterrupted(
                        f"interrupted by {signal.Signals(caught[0]).name}; GPU clocks were "
                        "restored") from None

    def recover_stale_locks(self) -> list[RecoveredLock]:
        """`recover_stale_locks` with this object's opt-in, binding and marker folder."""
        return recover_stale_locks(allow=self.allow, nvml=self._nvml, state_dir=self.state_dir)

    def close(self) -> None:
        """Close the NVML device if this object opened it (idempotent)."""
        if self._owns_device:
            self.device.close()

    def __enter__(self) -> "ClockControl":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
