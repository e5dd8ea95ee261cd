"""A worker stopped (``SIGSTOP``) while it holds the study's budget row does not stall the others:
PostgreSQL ends its session after half a lease (`nasenergy.search.storage.db_timeouts`), the others keep
evaluating, and once it resumes the study still ends at exactly the budget with no duplicate."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from fake_parts import DELAY_ENV, STOP_IN_LOCK_ENV, start_search
from test_search_lost_claim import _study_exists
from test_search_workers import _check_exact, _study

from nasenergy.search.storage.claims import DONE, ClaimStore
from nasenergy.search.storage.storages import normalize_url

SAFETY_S = 300.0
LEASE_S = 10.0
PAUSE_S = 3 * LEASE_S
ALLOWED_STALL_S = LEASE_S + 10.0


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (state ``T`` in ``/proc/<pid>/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rpartition(")")[2].split()[0] in ("T", "t")


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + SAFETY_S
    while True:
        found = predicate()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _stalls(done_times: list[float], start: float, end: float, finished: bool) -> float:
    """The longest wait for a new finished evaluation within ``[start, end]`` (the tail after the
    last one counts only while the study was not finished)."""
    points = [start, *[t for t in done_times if start < t <= end]]
    gaps = [b - a for a, b in zip(points, points[1:])]
    if not finished:
        gaps.append(end - points[-1])
    return max(gaps, default=end - start)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_worker_stopped_inside_the_budget_lock_stalls_no_one(tmp_path, fake_env, pg_url, unique_name):
    budget = 70
    trigger = tmp_path / "stop-now"
    common = ["--budget", str(budget), "--storage", pg_url, "--study-name", unique_name, "--dvfs", "none",
              "--filter", "none", "--quiet", "--lease-s", f"{LEASE_S:g}"]
    env = {**fake_env, DELAY_ENV: "1.5"}
    procs = [
        start_search([*common, "--out", str(tmp_path / f"w{k}")], {**env, STOP_IN_LOCK_ENV: str(trigger)} if k == 0 else env)
        for k in range(4)
    ]
    paused = procs[0]
    watcher = None
    try:
        def done_cells() -> list:
            try:
                return [c for c in watcher.cells() if c.status == DONE]
            except Exception:  # noqa: BLE001 - the study's tables may not exist yet
                return []

        _wait_for(lambda: _study_exists(pg_url, unique_name), "the study")
        watcher = ClaimStore(normalize_url(pg_url), unique_name)
        # Every worker has finished an evaluation: all four run, then the first one stops.
        _wait_for(lambda: len({c.owner.split(":")[1] for c in done_cells()}) == 4, "all four workers to evaluate")
        trigger.touch()
        _wait_for(lambda: _stopped(paused.pid), "the first worker to stop inside the budget lock")
        stopped_at = time.monotonic()
        seen, done_times = len(done_cells()), []
        while time.monotonic() < stopped_at + PAUSE_S:
            now_done = len(done_cells())
            done_times += [time.monotonic()] * (now_done - seen)
            seen = now_done
            time.sleep(0.2)
        stall_s = _stalls(done_times, stopped_at, time.monotonic(), finished=seen >= budget)
        os.kill(paused.pid, signal.SIGCONT)
        outputs = [p.communicate(timeout=SAFETY_S) for p in procs]
    finally:
        if watcher is not None:
            watcher.close()
        for p in procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
                p.communicate()

    assert done_times, "no evaluation finished while the first worker was stopped"
    assert stall_s < ALLOWED_STALL_S, f"the other workers stalled {stall_s:.1f} s"
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err
        assert "Traceback" not in err, err
    study, url = _study(pg_url, unique_name)
    trials = study.get_trials()
    _check_exact(trials, budget)  # exactly the budget, no network evaluated twice
    assert not [t.number for t in trials if t.state.name == "RUNNING"]
    claims = ClaimStore(url, unique_name)
    try:
        status = claims.status()
    finally:
        claims.close()
    assert (status.done, status.running, status.claimed) == (budget, 0, budget)

