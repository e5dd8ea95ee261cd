"""A PostgreSQL server stopped for ten seconds mid-run: the same workers ride out the outage and
finish the exact budget, with one line each and no traceback."""

from __future__ import annotations

import time

import pytest
from fake_parts import DELAY_ENV, start_search
from test_search_workers import _check_exact, _study

from nasenergy.search.storage.claims import ClaimStore
from nasenergy.search.storage.storages import normalize_url

OUTAGE_S = 10.0
SAFETY_S = 240.0


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + SAFETY_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.mark.postgres
@pytest.mark.slow
def test_workers_ride_out_a_server_restart(tmp_path, fake_env, pg_url, pg_server, unique_name):
    budget = 12
    procs = [
        start_search(
            ["--budget", str(budget), "--storage", pg_url, "--study-name", unique_name, "--dvfs", "none",
             "--filter", "none", "--quiet", "--out", str(tmp_path / f"w{k}"), "--lease-s", "60",
             "--db-retry-s", "120"],
            {**fake_env, DELAY_ENV: "0.5"},
        )
        for k in range(2)
    ]
    try:
        url = normalize_url(pg_url)
        watcher = ClaimStore(url, unique_name)

        def started() -> bool:  # both workers past their start-up, some work done
            try:
                status = watcher.status()
            except Exception:  # noqa: BLE001 - the study's tables may not exist yet
                return False
            return status.live_workers == 2 and status.done >= 2

        _wait_for(started, "both workers and the first evaluations")
        watcher.close()
        pg_server.stop()
        time.sleep(OUTAGE_S)  # the outage itself
        pg_server.start()
        outputs = [p.communicate(timeout=SAFETY_S) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()

    warned = 0
    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err
        assert "Traceback" not in err, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert all(line.startswith("warning: the database ") and "unreachable" in line for line in lines), lines
        assert len(lines) <= 1, lines  # one line per outage, not one per retry
        warned += len(lines)
    assert warned >= 1  # the outage really hit the workers

    study, url = _study(pg_url, unique_name)
    trials = study.get_trials()
    _check_exact(trials, budget)
    assert not [t.number for t in trials if t.state.name == "RUNNING"]
    claims = ClaimStore(url, unique_name)
    status = claims.status()
    claims.close()
    assert (status.done, status.running, status.claimed) == (budget, 0, budget)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_gives_up_on_a_long_outage_with_one_line_and_its_status(tmp_path, fake_env, pg_url, pg_server,
                                                                         unique_name):
    proc = start_search(
        ["--budget", "50", "--storage", pg_url, "--study-name", unique_name, "--dvfs", "none", "--filter", "none",
         "--quiet", "--out", str(tmp_path / "w"), "--db-retry-s", "2"],
        {**fake_env, DELAY_ENV: "0.3"},
    )
    try:
        watcher = ClaimStore(normalize_url(pg_url), unique_name)

        def started() -> bool:
            try:
                return watcher.status().done >= 1
            except Exception:  # noqa: BLE001 - the study's tables may not exist yet
                return False

        _wait_for(started, "the first evaluation")
        watcher.close()
        pg_server.stop()
        _, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 6, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2, lines
    assert lines[0].startswith("warning: the database ") and "unreachable" in lines[0]
    assert lines[1].startswith("error: the database ") and "giving up" in lines[1] and "--db-retry-s" in lines[1]
