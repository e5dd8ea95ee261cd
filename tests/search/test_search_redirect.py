"""A proposal of a known network is turned into an unseen network near it, deterministically."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.network_key import network_key_fn
from nasenergy.search.loop.pipeline import stall_cause
from nasenergy.search.loop.redirect import REDIRECTED_FROM, nearby_unseen, redirect_rng
from search_spaces import get_space


def _params(space, arch):
    return dict(zip(space.param_choices(), arch.ops))


def test_the_walk_reaches_an_unseen_network_one_change_at_a_time():
    space = get_space("tss")
    key_of = network_key_fn(space, "deployed")
    start = space.arch_at(1234)
    seen = {key_of(space.arch_at(i)) for i in range(0, space.size, 2)}  # about half the networks

    def is_new(params):
        return key_of(space.arch_from_params(params)) not in seen

    found = nearby_unseen(space.param_choices(), _params(space, start), is_new, redirect_rng(0, 7))
    assert found is not None and is_new(found)
    again = nearby_unseen(space.param_choices(), _params(space, start), is_new, redirect_rng(0, 7))
    assert again == found  # the same seed and trial: the same network
    assert nearby_unseen(space.param_choices(), _params(space, start), lambda p: False, redirect_rng(0, 7),
                         walk_steps=20, uniform_draws=20) is None


def test_the_first_unseen_step_is_a_neighbour():
    space = get_space("tss")
    start = _params(space, space.arch_at(0))
    found = nearby_unseen(space.param_choices(), start, lambda p: p != start, redirect_rng(3, 1))
    assert sum(found[n] != start[n] for n in start) == 1


def _trial(outcome):
    return SimpleNamespace(user_attrs={tr.OUTCOME: outcome})


def test_the_stall_cause_names_the_commonest_outcome_and_what_to_change():
    trials = [_trial(oc.EVALUATED)] + [_trial(oc.FILTERED)] * 3 + [_trial(oc.DUPLICATE)]
    assert stall_cause(trials).startswith("3 filtered, 1 duplicate: the filter rejected")
    trials = [_trial(oc.FILTERED)] * 5 + [_trial(oc.EVALUATED)] + [_trial(oc.DUPLICATE)] * 2
    assert stall_cause(trials).startswith("2 duplicate: the sampler kept proposing")


class _StuckUnlessEnqueued:
    """The real space, except that a trial the sampler proposed is one of three fixed networks (a
    converged sampler); a trial the worker enqueued (redirected) proposes its own parameters."""

    def __init__(self, space):
        self._space = space
        self._archs = [space.arch_at(i) for i in (0, 1, 2)]

    def suggest(self, trial):
        arch = self._space.suggest(trial)
        if REDIRECTED_FROM in trial.user_attrs:
            return arch
        return self._archs[trial.number % len(self._archs)]

    def __getattr__(self, name):
        return getattr(self._space, name)


def _stuck_components(config):
    import dataclasses

    from fake_parts import fake_components

    parts = fake_components(config)
    return dataclasses.replace(parts, space=_StuckUnlessEnqueued(parts.space))


@pytest.mark.parametrize("redirect_after, fills", [(2, True), (0, False)])
def test_a_converged_sampler_is_redirected_only_when_asked(tmp_path, fake_env, redirect_after, fills):
    from nasenergy.search import SearchConfig, run_search

    config = SearchConfig(budget=12, dvfs="none", filter="none", out=str(tmp_path / "run"), quiet=True,
                          patience=40, redirect_after=redirect_after)
    summary = run_search(config, components_factory=_stuck_components)
    distinct_stuck = len({str(get_space("tss").canonical(get_space("tss").arch_at(i))) for i in (0, 1, 2)})
    if fills:
        assert (summary.stop_reason, summary.evaluated) == ("budget", 12)
    else:
        assert summary.stop_reason == "stalled" and summary.evaluated <= distinct_stuck


def test_the_stall_cause_names_a_mechanism_that_was_off():
    trials = [_trial(oc.EVALUATED)] + [_trial(oc.DUPLICATE)] * 3
    assert "--redirect-after 2" in stall_cause(trials, redirect_after=0)
    assert "--redirect-after" not in stall_cause(trials, redirect_after=2)
    assert "--filter-yield-after" in stall_cause([_trial(oc.FILTERED)] * 2, filter_yield_after=0)
