"""No trial of a finished study is left running, on every storage: a worker that died before
recording its candidate leaves a running trial, which the end of the run closes."""

from __future__ import annotations

import pytest
from fake_parts import fake_components

from nasenergy.run.files import REPORT_MD, load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.config import SearchConfig as Config
from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage


class StrayingOracle:
    """An oracle whose first evaluation leaves two running trials behind, as workers killed right
    after asking for a trial (one before naming itself, one after) would."""

    def __init__(self, oracle, config: Config) -> None:
        self._oracle, self._config, self._strayed = oracle, config, False

    def evaluate(self, arch, dataset, *, seed=None):
        if not self._strayed:
            self._strayed = True
            import optuna

            storage = open_optuna_storage(resolve_storage(self._config.storage, self._config.out_dir))
            study = optuna.load_study(study_name=self._config.resolved_study_name, storage=storage)
            study.ask()
            named = study.ask()
            named.set_user_attr("candidate", {"worker": "ghost:1:dead", "arch": str(arch), "canonical": "x",
                                              "arch_index": 0})
        return self._oracle.evaluate(arch, dataset, seed=seed)

    def report(self, arch, dataset):
        return self._oracle.report(arch, dataset)

    def describe(self) -> str:
        return self._oracle.describe()


def straying_components(config: Config):
    from dataclasses import replace

    parts = fake_components(config)
    return replace(parts, oracle=StrayingOracle(parts.oracle, config))


@pytest.mark.parametrize("kind", ["journal", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_finished_study_has_no_running_trial(kind, tmp_path, fake_env, unique_name, request):
    storage = {"journal": None, "sqlite": f"sqlite:///{tmp_path / 'study.db'}"}.get(kind)
    if kind == "postgresql":
        storage = request.getfixturevalue("pg_url")
    config = SearchConfig(budget=4, dvfs="none", filter="none", quiet=True, storage=storage,
                          study_name=unique_name, out=str(tmp_path / "run"))
    summary = run_search(config, components_factory=straying_components)
    assert summary.stop_reason == "budget" and summary.evaluated == 4
    rows = load_run(tmp_path / "run").rows
    assert [r["outcome"] for r in rows].count("abandoned") == 2
    assert not [r["trial_number"] for r in rows if r["state"] == "RUNNING"]
    report = (tmp_path / "run" / REPORT_MD).read_text()
    assert "running 0" in report and "abandoned 2" in report


@pytest.mark.parametrize("sampler", ["tpe", "nsga2", "random"])
def test_a_worker_of_the_largest_seed_samples_whatever_its_rank(sampler):
    """Worker k samples with ``seed + k`` modulo 2^32: the largest seed joins as any rank."""
    import optuna

    from nasenergy.search.sampling.study import create_or_load_study, load_worker_study

    config = Config(seed=2**32 - 1, sampler=sampler, quiet=True)
    storage = optuna.storages.InMemoryStorage()
    create_or_load_study(config, storage)
    for rank in (0, 1, 5):
        study = load_worker_study(config, storage, rank=rank)
        study.ask().suggest_int("x", 0, 3)
