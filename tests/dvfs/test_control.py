"""Clock control against the fake NVML: opt-in, snapping, restore on exceptions, signals and
crashes, permission errors, stale-lock recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nasenergy.dvfs.control import (ClockControl, ClockControlError, ClockControlRefused,
                                    ClockPermissionError, LockMarker, recover_stale_locks)
from nasenergy.errors import UsageError
from nasenergy.testing import FakeNvml

ROOT = Path(__file__).resolve().parents[2]


def _control(fake: FakeNvml, state_dir: Path, allow: bool = True) -> ClockControl:
    return ClockControl(0, allow=allow, nvml=fake, state_dir=state_dir)


def test_refuses_without_opt_in(tmp_path) -> None:
    fake = FakeNvml()
    cc = _control(fake, tmp_path, allow=False)
    with pytest.raises(ClockControlRefused, match="--allow-clock-control"):
        with cc.locked(sm_mhz=1410):
            pass
    assert "nvmlDeviceSetGpuLockedClocks" not in fake.call_names()
    assert ClockControlRefused.exit_code == 2


def test_locks_snapped_clock_and_restores(tmp_path) -> None:
    fake = FakeNvml()
    cc = _control(fake, tmp_path)
    with cc.locked(sm_mhz=1412) as mhz:
        assert mhz == 1410
        assert fake.locked_clocks_mhz() == (1410, 1410)
        assert cc.device.sm_clock_mhz() == 1410
        assert len(list(tmp_path.glob("*.json"))) == 1
    assert fake.locked_clocks_mhz() is None
    assert not list(tmp_path.glob("*.json"))
    assert cc.snap(352.5) == 345 and cc.snap(360) == 360
    with pytest.raises(UsageError, match="outside the supported range"):
        cc.snap(2500)


def test_restores_after_exception_and_restores_handlers(tmp_path) -> None:
    fake = FakeNvml()
    cc = _control(fake, tmp_path)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(RuntimeError, match="boom"):
        with cc.locked(sm_mhz=990):
            assert signal.getsignal(signal.SIGTERM) is not before[0]
            raise RuntimeError("boom")
    assert fake.locked_clocks_mhz() is None
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    assert [h["op"] for h in fake.lock_history()] == ["set", "reset"]


def test_permission_error_is_clear_and_leaves_nothing(tmp_path) -> None:
    fake = FakeNvml(permission_denied=True)
    cc = _control(fake, tmp_path)
    with pytest.raises(ClockPermissionError, match="root") as info:
        with cc.locked(sm_mhz=1410):
            pytest.fail("the block must not run without the lock")
    assert "DVFS model" in str(info.value)
    assert fake.locked_clocks_mhz() is None
    assert not list(tmp_path.glob("*.json"))


def test_failed_reset_keeps_marker_and_says_what_to_do(tmp_path) -> None:
    fake = FakeNvml(fail_on={"nvmlDeviceResetGpuLockedClocks": 999})
    cc = _control(fake, tmp_path)
    with pytest.raises(ClockControlError, match="nvidia-smi -i 0 -rgc"):
        with cc.locked(sm_mhz=1410):
            pass
    assert fake.locked_clocks_mhz() == (1410, 1410)
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_locks_do_not_nest(tmp_path) -> None:
    cc = _control(FakeNvml(), tmp_path)
    with cc.locked(sm_mhz=1410):
        with pytest.raises(UsageError, match="do not nest"):
            with cc.locked(sm_mhz=990):
                pass


# The child restores Python's usual SIGINT handler: a process started in the background by a
# non-interactive shell (as CI may run the tests) inherits SIGINT ignored, and ClockControl rightly
# leaves an ignored signal ignored.
_CHILD = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from nasenergy.dvfs.control import ClockControl
    from nasenergy.testing import FakeNvml
    fake = FakeNvml(state_file=sys.argv[1])
    with ClockControl(0, allow=True, nvml=fake, state_dir=sys.argv[2]).locked(sm_mhz=1410):
        print("LOCKED", flush=True)
        time.sleep(60)
""")


def _start_locked_child(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    state_file, state_dir = tmp_path / "gpu.json", tmp_path / "markers"
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(state_file), str(state_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert line.strip() == "LOCKED", proc.stderr.read()  # type: ignore[union-attr]
    assert FakeNvml(state_file=state_file).locked_clocks_mhz() == (1410, 1410)
    return proc, state_file, state_dir


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_child_resets_clocks_and_keeps_conventional_status(tmp_path, sig) -> None:
    proc, state_file, state_dir = _start_locked_child(tmp_path)
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == -sig      # died of the signal, after cleanup
    assert FakeNvml(state_file=state_file).locked_clocks_mhz() is None
    history = FakeNvml(state_file=state_file).lock_history()
    assert [h["op"] for h in history] == ["set", "reset"]
    assert all(h["pid"] == proc.pid for h in history)
    assert not list(state_dir.glob("*.json"))


def test_sigkill_leaves_marker_and_recovery_resets(tmp_path) -> None:
    proc, state_file, state_dir = _start_locked_child(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    fake = FakeNvml(state_file=state_file)
    assert fake.locked_clocks_mhz() == (1410, 1410)
    markers = list(state_dir.glob("*.json"))
    assert len(markers) == 1 and json.loads(markers[0].read_text())["pid"] == proc.pid
    with pytest.raises(ClockControlRefused):
        recover_stale_locks(nvml=fake, state_dir=state_dir)
    done = recover_stale_locks(allow=True, nvml=fake, state_dir=state_dir)
    assert [r.action for r in done] == ["reset"] and done[0].marker.pid == proc.pid
    assert fake.locked_clocks_mhz() is None
    assert not list(state_dir.glob("*.json"))
    assert recover_stale_locks(nvml=fake, state_dir=state_dir) == []


def test_next_control_repairs_a_stale_lock_before_locking(tmp_path) -> None:
    proc, state_file, state_dir = _start_locked_child(tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    fake = FakeNvml(state_file=state_file)
    with ClockControl(0, allow=True, nvml=fake, state_dir=state_dir).locked(sm_mhz=990):
        assert fake.locked_clocks_mhz() == (990, 990)
    assert fake.locked_clocks_mhz() is None
    assert [h["op"] for h in fake.lock_history()] == ["set", "reset", "set", "reset"]


def test_live_owner_is_left_alone(tmp_path) -> None:
    fake = FakeNvml()
    cc = _control(fake, tmp_path)
    marker = LockMarker(os.getppid(), __import__("socket").gethostname(), 0, cc.device.uuid,
                        (1410, 1410), time.time())
    marker.write(tmp_path / "held.json")
    done = recover_stale_locks(allow=True, nvml=fake, state_dir=tmp_path)
    assert done[0].action.startswith("skipped: owner process")
    LockMarker(os.getppid(), marker.hostname, 0, cc.device.uuid, (1410, 1410),
               time.time()).write(cc._marker_path())
    with pytest.raises(ClockControlError, match="locked by process"):
        with cc.locked(sm_mhz=990):
            pass
    assert "nvmlDeviceSetGpuLockedClocks" not in fake.call_names()
