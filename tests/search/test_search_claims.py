"""The claims: one atomic step per budget slot, no canonical network twice, orphans adopted."""

from __future__ import annotations

import multiprocessing
import random

import pytest

from nasenergy.search.storage.claims import DONE, FAILED, FILTERED, RUNNING, BudgetMismatchError, ClaimStore

SETTINGS = {"space": "tss", "objectives": ["accuracy", "energy"]}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'claims.sqlite'}"
    return request.getfixturevalue("pg_url")


def _store(url, study, **kw):
    from nasenergy.search.storage.storages import normalize_url

    return ClaimStore(normalize_url(url), study, **kw)


def test_claim_exists_budget_full_and_release(db_url, unique_name):
    s = _store(db_url, unique_name)
    assert s.ensure_study(2, SETTINGS) == 2
    s.register_worker()
    a = s.claim("A", "a1", 0)
    assert a.kind == "claimed" and a.cell.status == RUNNING
    again = s.claim("A", "a2", 1)
    assert again.kind == "exists" and again.cell.trial_number == 0 and again.cell.arch == "a1"
    assert s.claim("B", "b", 2).kind == "claimed"
    assert s.claim("C", "c", 3).kind == "budget_full"
    assert s.release("B")  # an interrupted evaluation gives its slot back
    assert s.claim("C", "c", 3).kind == "claimed"
    assert s.finish("A", DONE)
    assert s.finish("C", FAILED)  # a failure frees its slot too
    assert s.record("F", "f", 4, FILTERED) and not s.record("F", "f", 5, FILTERED)
    assert s.record("G", "g", 6, FAILED) and s.lookup("G").status == FAILED
    st = s.status()
    assert (st.budget, st.claimed, st.done, st.failed, st.filtered, st.running) == (2, 1, 1, 2, 1, 0)
    assert not st.complete
    assert s.claim("D", "d", 7).kind == "claimed" and s.finish("D", DONE)
    assert s.status().complete
    s.close()


def test_a_filtered_network_is_reopened_once_within_the_budget(db_url, unique_name):
    s = _store(db_url, unique_name)
    s.ensure_study(2, SETTINGS)
    s.register_worker()
    assert s.record("F", "f", 0, FILTERED) and s.record("G", "g", 1, FILTERED) and s.record("H", "h", 2, FILTERED)
    assert s.reopen("X", 3).kind == "exists" and s.reopen("X", 3).cell is None  # never seen: not a reopen
    first = s.reopen("F", 4)
    assert first.kind == "claimed" and (first.cell.status, first.cell.trial_number) == (RUNNING, 4)
    assert s.reopen("F", 4).kind == "claimed"  # a retried reopen finds its own write
    assert s.reopen("F", 5).kind == "exists"  # another trial: the network is running now
    assert s.reopen("G", 6).kind == "claimed" and s.finish("G", DONE, 6)
    assert s.reopen("H", 7).kind == "budget_full" and s.lookup("H").status == FILTERED
    st = s.status()
    assert (st.claimed, st.done, st.running, st.filtered) == (2, 1, 1, 1)
    s.close()


def test_ensure_study_checks_settings_and_only_raises_budget(db_url, unique_name):
    s = _store(db_url, unique_name)
    s.ensure_study(5, SETTINGS)
    assert s.ensure_study(8, SETTINGS) == 8  # extend
    with pytest.raises(BudgetMismatchError, match="--budget 8"):
        s.ensure_study(3, SETTINGS)
    with pytest.raises(BudgetMismatchError, match="objectives"):
        s.ensure_study(8, {**SETTINGS, "objectives": ["accuracy"]})
    s.close()


def test_dead_workers_claims_are_adopted_and_keep_their_slot(db_url, unique_name):
    dead = _store(db_url, unique_name, lease_s=30)
    dead.ensure_study(1, SETTINGS)
    dead.register_worker()
    assert dead.claim("A", "a", 0).kind == "claimed"
    alive = _store(db_url, unique_name, lease_s=30)
    alive.register_worker()
    assert alive.adopt_orphan() is None  # the owner's lease is still valid
    assert alive.status().orphans == 0
    assert alive.claim("B", "b", 1).kind == "budget_full"  # the orphan keeps its slot
    alive.expire_all_leases()  # what a run holding its folder exclusively does at start-up
    alive.heartbeat()
    assert alive.status().orphans == 1
    cell = alive.adopt_orphan()
    assert cell is not None and cell.canonical == "A" and cell.owner == alive.worker_id
    assert not dead.finish("A", DONE)  # the dead worker lost it
    assert alive.finish("A", DONE)
    assert alive.status().complete
    dead.close()
    alive.close()


def _claim_many(url, study, seed, out):
    s = ClaimStore(url, study, lease_s=30)
    s.register_worker()
    rng = random.Random(seed)
    mine = []
    for i in range(60):
        cell = f"cell{rng.randrange(40)}"
        if s.claim(cell, cell, seed * 1000 + i).kind == "claimed":
            mine.append(cell)
            s.finish(cell, DONE)
    out.put(mine)
    s.close()


def test_concurrent_processes_never_exceed_the_budget_nor_repeat_a_cell(db_url, unique_name):
    from nasenergy.search.storage.storages import normalize_url

    url = normalize_url(db_url)
    s = ClaimStore(url, unique_name)
    s.ensure_study(15, SETTINGS)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_claim_many, args=(url, unique_name, k, out)) for k in range(3)]
    for p in procs:
        p.start()
    claimed = [c for _ in procs for c in out.get(timeout=120)]
    for p in procs:
        p.join(timeout=60)
    assert len(claimed) == 15
    assert len(set(claimed)) == 15
    assert s.status().done == 15
    s.close()


def test_reconcile_counts_only_stored_results(db_url, unique_name):
    from nasenergy.search.storage.claims import StoredTrial

    s = _store(db_url, unique_name)
    s.ensure_study(5, SETTINGS)
    s.register_worker()
    for key, number in (("A", 0), ("B", 1), ("C", 2), ("D", 3)):
        assert s.claim(key, key.lower(), number).kind == "claimed"
        assert s.finish(key, DONE)
    assert s.record("F", "f", 4, FILTERED) and s.record("G", "g", 5, FILTERED)
    stored = {
        0: StoredTrial("COMPLETE", "A"),  # stored: kept
        1: StoredTrial("RUNNING", "B"),  # its result was lost: evaluated again
        2: StoredTrial("RUNNING", "C", measured=False),  # lost before its measurement: unseen again
        # 3 (D) is missing altogether: unseen again
        4: StoredTrial("PRUNED", "F"),  # stored: kept
        5: StoredTrial("RUNNING", "G"),  # its outcome was lost: unseen again
    }
    # While other workers may live, only a done cell with a stored, unfinished trial changes.
    first = s.reconcile(stored, everyone_dead=False)
    assert (first.forgotten, first.reopened) == (0, 1)
    assert s.lookup("B").status == RUNNING and s.lookup("D").status == DONE
    done = s.reconcile(stored, everyone_dead=True)
    assert (done.forgotten, done.reopened) == (3, 0)
    assert {c.canonical: c.status for c in s.cells()} == {"A": DONE, "B": RUNNING, "F": FILTERED}
    st = s.status()
    assert (st.done, st.running, st.orphans) == (1, 1, 1)  # B has no owner: a worker adopts it
    assert s.adopt_orphan().canonical == "B"
    assert not s.reconcile(stored, everyone_dead=True).changed
    s.close()
