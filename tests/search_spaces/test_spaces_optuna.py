"""`suggest` with real Optuna trials, and the mapping of parameters back to architectures."""

from __future__ import annotations

import optuna
import pytest

from nasenergy.errors import ArchError
from search_spaces import SSS_CHANNELS, TSS_EDGES, TSS_OPS, SSSSpace, get_space


@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_suggest_with_real_trials_maps_back(space_name):
    space = get_space(space_name)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = []

    def objective(trial: optuna.Trial) -> float:
        arch = space.suggest(trial)
        assert space.arch_from_params(trial.params) == arch
        seen.append(arch)
        return float(space.index(arch))

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(objective, n_trials=20)
    assert len(set(seen)) > 1
    for trial, arch in zip(study.trials, seen):
        assert space.arch_from_params(trial.params) == arch
        assert set(trial.params) == set(space.param_choices())


def test_parameter_names_and_choices():
    tss, sss = get_space("tss"), get_space("sss")
    assert list(tss.param_choices()) == ["edge_1<-0", "edge_2<-0", "edge_2<-1", "edge_3<-0", "edge_3<-1", "edge_3<-2"]
    assert all(choices == TSS_OPS for choices in tss.param_choices().values())
    assert list(sss.param_choices()) == [f"channels_{i}" for i in range(1, 6)]
    assert all(choices == SSS_CHANNELS for choices in sss.param_choices().values())


def test_fixed_trial_and_extra_params():
    tss = get_space("tss")
    arch = tss.arch_at(123)
    params = {f"edge_{edge}": op for edge, op in zip(TSS_EDGES, arch.ops)}
    assert tss.suggest(optuna.trial.FixedTrial(params)) == arch
    assert tss.arch_from_params({**params, "clock_mhz": 1200}) == arch


def test_bad_params():
    tss, sss = get_space("tss"), get_space("sss")
    with pytest.raises(ArchError, match="missing tss parameter"):
        tss.arch_from_params({"edge_1<-0": "none"})
    params = {name: "none" for name in tss.param_choices()} | {"edge_2<-1": "conv"}
    with pytest.raises(ArchError, match="unknown op 'conv' on edge 2<-1"):
        tss.arch_from_params(params)
    with pytest.raises(ArchError, match="bad channel width 12 at position 4"):
        sss.arch_from_params({"channels_1": 8, "channels_2": 8, "channels_3": 8, "channels_4": 12, "channels_5": 8})


def test_sss_widths_are_categorical_unless_asked_as_ordered_integers(monkeypatch):
    """By default each SSS width is an 8-way categorical; with `SSSSpace.ordinal_widths` an integer
    8..64 step 8, whose values name the same configurations (`arch_from_params` unchanged)."""
    space = get_space("sss")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for ordinal, kind in ((False, optuna.distributions.CategoricalDistribution),
                          (True, optuna.distributions.IntDistribution)):
        monkeypatch.setattr(SSSSpace, "ordinal_widths", ordinal)
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        study.optimize(lambda trial: float(space.index(space.suggest(trial))), n_trials=10)
        for trial in study.trials:
            assert all(isinstance(d, kind) for d in trial.distributions.values())
            assert all(v in SSS_CHANNELS for v in trial.params.values())
            assert space.index(space.arch_from_params(trial.params)) == trial.value
    monkeypatch.setattr(SSSSpace, "ordinal_widths", True)
    assert space.suggest(optuna.trial.FixedTrial({f"channels_{p}": 8 * p for p in range(1, 6)})).channels == (
        8, 16, 24, 32, 40)
