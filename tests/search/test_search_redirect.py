"""A proposal of a known network is turned into an unseen network near it, deterministically."""

from __future__ import annotations

from types import SimpleNamespace

from nasenergy.search import outcomes as oc
from nasenergy.search import trial_record as tr
from nasenergy.search.pipeline import stall_cause
from nasenergy.search.redirect import nearby_unseen, redirect_rng
from nasenergy.search.network_key import network_key_fn
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
