"""The study's network key: one deployed network is one key, whichever of its cells is proposed."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fake_parts import fake_components

from nasenergy.hardware.coverage import CLASS_UNIT, Coverage
from nasenergy.run.files import load_run
from nasenergy.run.network_key import DEPLOYED_UNIT, measured_form, network_key_fn
from nasenergy.search import SearchConfig, run_search
from nasenergy.testing import FakeMeter
from search_spaces import get_space

TSS = get_space("tss")
# One NAS-Bench-201 class, two deployed networks (101,306 and 129,306 deployed params).
A = TSS.parse("|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|")
B = TSS.parse("|nor_conv_1x1~0|+|avg_pool_3x3~0|skip_connect~1|+|avg_pool_3x3~0|skip_connect~1|skip_connect~2|")
# Two NAS-Bench-201 classes (cells 22 and 11355), one deployed network.
C = TSS.parse("|avg_pool_3x3~0|+|avg_pool_3x3~0|none~1|+|nor_conv_3x3~0|avg_pool_3x3~1|nor_conv_1x1~2|")
D = TSS.parse("|avg_pool_3x3~0|+|avg_pool_3x3~0|none~1|+|nor_conv_3x3~0|nor_conv_1x1~1|avg_pool_3x3~2|")
# A cell whose output does not depend on its input: its network cannot learn.
Z = TSS.parse("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|none~0|none~1|none~2|")


def test_the_key_is_the_deployed_network():
    assert TSS.canonical(A) == TSS.canonical(B) and TSS.canonical(C) != TSS.canonical(D)
    deployed, as_built = network_key_fn(TSS, "deployed"), network_key_fn(TSS, "as_built")
    assert deployed(A) != deployed(B) and deployed(C) == deployed(D) == TSS.deployed_key(C)
    assert as_built(A) == as_built(B) == str(TSS.canonical(A)) and as_built(C) != as_built(D)
    assert (deployed.unit, as_built.unit) == (DEPLOYED_UNIT, CLASS_UNIT)
    assert deployed.deployed and not as_built.deployed


def test_the_key_counts_6040_tss_networks_and_every_sss_configuration_once():
    key = network_key_fn(TSS)
    assert len({key(a) for a in TSS.enumerate()}) == 6040
    sss = get_space("sss")
    arch = sss.arch_at(123)
    assert network_key_fn(sss)(arch) == str(arch) and sss.deployed_members(arch) == (arch,)


def test_members_and_learners():
    assert [TSS.index(a) for a in TSS.deployed_members(D)] == [22, 11355]
    assert TSS.deployed_members(C) == TSS.deployed_members(D)
    assert not TSS.output_depends_on_input(Z) and TSS.output_depends_on_input(C)
    assert sum(not TSS.output_depends_on_input(a) for a in TSS.enumerate()) == 341


def test_the_meter_decides_the_form():
    assert measured_form(FakeMeter()) == "deployed"

    class AsBuiltProfile:
        network_form = "as_built"

    assert measured_form(AsBuiltProfile()) == "as_built"


def test_coverage_of_older_runs_reads_without_a_unit():
    d = Coverage("p.csv.gz", "H200", "tss", "fp16", 1, 6466, 2, 15625).to_dict()
    d.pop("unit")
    old = Coverage.from_dict(d)
    assert old.unit == CLASS_UNIT and "of 6,466 canonical tss classes" in old.summary()
    networks = dataclasses.replace(old, unit=DEPLOYED_UNIT, total_classes=6040)
    assert "of 6,040 tss deployed networks" in networks.summary()


class _Scripted:
    """A space that proposes the given architectures in turn (everything else is the TSS space)."""

    def __init__(self, space: Any, archs: list[Any]) -> None:
        self._space, self._archs = space, list(archs)

    def suggest(self, trial: Any) -> Any:
        self._space.suggest(trial)
        return self._archs.pop(0) if self._archs else self._space.arch_at(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._space, name)


def _scripted_run(tmp_path, archs, **options):
    def parts(config: SearchConfig):
        built = fake_components(config)
        return dataclasses.replace(built, space=_Scripted(built.space, archs))

    settings = dict(budget=2, dvfs="none", out=str(tmp_path / "run"), quiet=True, filter="none",
                    sampler="random", max_candidates=len(archs), patience=0)
    settings.update(options)
    run_search(SearchConfig(**settings), components_factory=parts)
    return load_run(tmp_path / "run").rows


def test_one_deployed_network_is_one_evaluation_and_one_front_row(tmp_path, fake_env):
    rows = _scripted_run(tmp_path, [C, D, A, B])
    outcomes = [r["outcome"] for r in rows]
    assert outcomes == ["evaluated", "duplicate", "evaluated", "duplicate"][:len(outcomes)] or \
        outcomes[:2] == ["evaluated", "duplicate"]
    first, second = rows[0], rows[1]
    assert first["canonical"] != second["canonical"] and first["network"] == second["network"]
    assert second["duplicate_of"] == first["trial_number"]
    keys = [r["network"] for r in rows if r["on_front"]]
    assert len(keys) == len(set(keys))


def test_the_accuracy_of_a_network_is_the_mean_over_its_cells():
    from nasenergy.oracles import load_oracle
    from nasenergy.oracles.network import NetworkOracle

    base = load_oracle(None, TSS, seed=0)
    oracle = NetworkOracle(base, TSS)
    e = oracle.evaluate(D, "cifar10", seed=7)
    assert e.cell_indices == (22, 11355) and len(e.cell_accuracies_pct) == 2
    assert e.accuracy_pct == pytest.approx(sum(e.cell_accuracies_pct) / 2)
    by_cell = [base.evaluate(a, "cifar10", seed=None).accuracy_pct for a in TSS.deployed_members(D)]
    assert sorted(e.cell_accuracies_pct) == pytest.approx(sorted(by_cell))  # one figure per cell in these tables
    assert e.arch == str(D) and e.arch_index == 11355 and e.trial == "cells:2"
    assert e == oracle.evaluate(D, "cifar10", seed=7)  # seeded: the same answer again
    assert oracle.evaluate(C, "cifar10", seed=7).accuracy_pct == e.accuracy_pct  # whichever cell is proposed
    single = oracle.evaluate(A, "cifar10", seed=7)
    if len(TSS.deployed_members(A)) == 1:
        assert single.cell_indices == () and single == base.evaluate(A, "cifar10", seed=7)
    assert "cell_indices" in e.as_dict() and "cell_indices" not in base.evaluate(A, "cifar10").as_dict()


def test_a_network_that_cannot_learn_is_never_evaluated(tmp_path, fake_env):
    rows = _scripted_run(tmp_path, [Z, Z, C, A], max_candidates=6)
    assert rows[0]["outcome"] == "infeasible" and rows[1]["outcome"] == "duplicate"
    assert not any(r["on_front"] for r in rows[:2])
    assert [r["outcome"] for r in rows].count("evaluated") == 2


def test_min_accuracy_keeps_networks_below_it_off_the_front_and_tells_the_sampler(tmp_path, fake_env):
    import optuna

    rows = _scripted_run(tmp_path, [C, A, B, D], budget=3, max_candidates=4, min_accuracy=99.0)
    evaluated = [r for r in rows if r["outcome"] == "evaluated"]
    assert evaluated and all(r["accuracy_pct"] < 99.0 for r in evaluated)
    assert not any(r["on_front"] for r in rows)
    (run_dir,) = [tmp_path / "run"]
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(run_dir / "study.journal")))
    (summary,) = optuna.get_all_study_summaries(storage)
    study = optuna.load_study(study_name=summary.study_name, storage=storage)
    done = [t for t in study.get_trials() if t.state == optuna.trial.TrialState.COMPLETE]
    assert done and all(t.constraints.get("min_accuracy", 0) > 0 for t in done)
