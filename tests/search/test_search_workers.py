"""Several workers share one study: exactly the budget, no canonical network evaluated twice."""

from __future__ import annotations

from collections import Counter

import pytest
from fake_parts import DELAY_ENV, dashboard_get, fake_components, start_search

SLOW_EVAL_S = "0.3"
"""Seconds per full evaluation in these tests: a worker that starts late on a loaded machine still
finds work left (the budget would otherwise be spent before every process has started)."""
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search


def _study(url: str, name: str):
    import optuna

    from nasenergy.search.storage.storages import normalize_url, open_optuna_storage, resolve_storage

    storage = open_optuna_storage(resolve_storage(url, None)) if url else None
    return optuna.load_study(study_name=name, storage=storage), normalize_url(url)


def _check_exact(trials, budget: int) -> None:
    evaluated = [t for t in trials if t.user_attrs.get("outcome") == "evaluated"]
    assert len(evaluated) == budget
    assert all(t.state.name == "COMPLETE" for t in evaluated)
    canonicals = Counter(t.user_attrs["candidate"]["network"] for t in evaluated)
    assert max(canonicals.values()) == 1, canonicals.most_common(3)


@pytest.mark.postgres
def test_three_processes_share_a_postgres_study_exactly(tmp_path, fake_env, pg_url, unique_name):
    budget = 15
    procs = [
        start_search(
            ["--budget", str(budget), "--storage", pg_url, "--study-name", unique_name, "--dvfs", "none",
             "--filter", "none", "--quiet", "--out", str(tmp_path / f"w{k}"), "--lease-s", "20"],
            {**fake_env, DELAY_ENV: SLOW_EVAL_S},
        )
        for k in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err

    study, url = _study(pg_url, unique_name)
    trials = study.get_trials()
    _check_exact(trials, budget)
    workers = {t.user_attrs["candidate"]["worker"] for t in trials if t.user_attrs.get("outcome") == "evaluated"}
    assert len(workers) >= 2  # the work really was shared
    seeds = sorted(v["seed"] for k, v in study.user_attrs.items() if k.startswith("worker:"))
    assert seeds == [0, 1, 2]  # each worker sampled with its own seed

    from nasenergy.search.storage.claims import ClaimStore

    claims = ClaimStore(url, unique_name)
    status = claims.status()
    assert (status.done, status.running, status.claimed) == (budget, 0, budget)
    claims.close()

    # Every worker's run folder holds the whole study's result.
    for k in range(3):
        rows = load_run(tmp_path / f"w{k}").rows
        assert sum(r["outcome"] == "evaluated" for r in rows) == budget

    # optuna-dashboard opens the database storage.
    studies = dashboard_get(url, "/api/studies")["study_summaries"]
    assert unique_name in [s["study_name"] for s in studies]


def test_worker_processes_share_the_local_journal(tmp_path, fake_env, monkeypatch):
    monkeypatch.setenv(DELAY_ENV, SLOW_EVAL_S)  # the worker processes inherit it
    budget = 16
    config = SearchConfig(budget=budget, workers=2, dvfs="none", filter="none", quiet=True, out=str(tmp_path / "run"))
    summary = run_search(config, components_factory=fake_components)
    assert summary.stop_reason == "budget" and summary.evaluated == budget
    rows = load_run(tmp_path / "run").rows
    evaluated = [r for r in rows if r["outcome"] == "evaluated"]
    assert len(evaluated) == budget and len({r["network"] for r in evaluated}) == budget
    assert len({r["worker"] for r in rows}) == 2
    assert not [r for r in rows if r["state"] == "RUNNING"]


@pytest.mark.slow
def test_a_worker_process_killed_mid_claim_still_ends_with_status_0_once_the_budget_is_spent(
    tmp_path, fake_env, monkeypatch
):
    import os
    import signal
    import threading
    import time

    from nasenergy.search.command.cli import main
    from nasenergy.search.storage.claims import RUNNING, ClaimStore

    monkeypatch.setenv(DELAY_ENV, "0.5")
    out, name, budget = tmp_path / "run", "killed-child", 10
    killed: list[int] = []

    def kill_one_claim_holder() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            time.sleep(0.05)
            if not (out / "claims.sqlite").exists():
                continue
            store = ClaimStore(f"sqlite:///{out / 'claims.sqlite'}", name)
            try:
                owners = [c.owner for c in store.cells() if c.status == RUNNING]
            except Exception:  # noqa: BLE001 - the tables may not exist yet
                owners = []
            finally:
                store.close()
            pids = [int(o.split(":")[1]) for o in owners if int(o.split(":")[1]) != os.getpid()]
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

    killer = threading.Thread(target=kill_one_claim_holder, daemon=True)
    killer.start()
    code = main(["--budget", str(budget), "--workers", "3", "--dvfs", "none", "--filter", "none", "--quiet",
                 "--lease-s", "5", "--study-name", name, "--out", str(out)], components_factory=fake_components)
    killer.join(timeout=10)
    assert killed, "no worker process was killed"
    assert code == 0
    rows = load_run(out).rows
    evaluated = [r for r in rows if r["outcome"] == "evaluated"]
    assert len(evaluated) == budget and len({r["network"] for r in evaluated}) == budget
    assert not [r for r in rows if r["state"] == "RUNNING"]


def test_the_reason_of_worker_exits():
    from nasenergy.search.command.exit_codes import EXIT_DATABASE
    from nasenergy.search.workers.runner import reason_of_exits

    assert reason_of_exits([0, 0]) == "budget"
    assert reason_of_exits([0, -9]) == "worker_failed"
    assert reason_of_exits([EXIT_DATABASE, 1]) == "database"
