"""A worker paused past its lease finds its claim taken over: it discards its result with one line
and goes on; the budget stays exact and the network is counted once."""

from __future__ import annotations

import os
import signal
import time

import pytest
from fake_parts import DELAY_ENV, start_search
from test_search_workers import _check_exact, _study

from nasenergy.search.storage.claims import DONE, RUNNING, ClaimStore
from nasenergy.search.storage.storages import normalize_url

SAFETY_S = 240.0


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + SAFETY_S
    while True:
        found = predicate()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_paused_past_its_lease_discards_its_result_and_goes_on(tmp_path, fake_env, pg_url, unique_name):
    budget = 8
    procs = [
        start_search(
            ["--budget", str(budget), "--storage", pg_url, "--study-name", unique_name, "--dvfs", "none",
             "--filter", "none", "--quiet", "--out", str(tmp_path / f"w{k}"), "--lease-s", "5"],
            {**fake_env, DELAY_ENV: "2"},
        )
        for k in range(2)
    ]
    paused, other = procs
    watcher = None
    try:
        def cells():
            try:
                return watcher.cells()
            except Exception:  # noqa: BLE001 - the study's tables may not exist yet
                return []

        _wait_for(lambda: _study_exists(pg_url, unique_name), "the study")
        watcher = ClaimStore(normalize_url(pg_url), unique_name)
        mine = f":{paused.pid}:"
        held = _wait_for(lambda: next((c for c in cells() if c.status == RUNNING and mine in c.owner), None),
                         "a claim of the first worker")
        os.kill(paused.pid, signal.SIGSTOP)  # in the middle of its evaluation (2 s)
        try:
            _wait_for(lambda: any(c.canonical == held.canonical and c.status == DONE and mine not in c.owner
                                  for c in cells()), "the other worker to adopt and finish the claim")
        finally:
            os.kill(paused.pid, signal.SIGCONT)
        outputs = [p.communicate(timeout=SAFETY_S) for p in procs]
    finally:
        if watcher is not None:
            watcher.close()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()

    for p, (_, err) in zip(procs, outputs):
        assert p.returncode == 0, err
        assert "Traceback" not in err, err
    lines = [line for line in outputs[0][1].splitlines() if line.strip()]
    assert len(lines) == 1 and "another worker took over the claim" in lines[0] and held.canonical in lines[0], lines

    study, url = _study(pg_url, unique_name)
    trials = study.get_trials()
    _check_exact(trials, budget)  # the class is evaluated (counted) once, the budget is exact
    assert not [t.number for t in trials if t.state.name == "RUNNING"]
    claims = ClaimStore(url, unique_name)
    status = claims.status()
    claims.close()
    assert (status.done, status.running) == (budget, 0)


def _study_exists(pg_url: str, name: str) -> bool:
    store = ClaimStore(normalize_url(pg_url), name)
    try:
        return store.status().budget > 0
    finally:
        store.close()
