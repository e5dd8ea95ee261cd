"""The duplicate-aware TPE sampler: it honours ``is_seen``, stays seeded, falls back to TPE's own
choice when every candidate is seen, and the search pipeline wires it (fewer duplicates)."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

optuna = pytest.importorskip("optuna")

from nasenergy.run.files import load_run  # noqa: E402
from nasenergy.search import SearchConfig, run_search  # noqa: E402
from nasenergy.search.sampling import tpe_dedup  # noqa: E402
from nasenergy.search.sampling.study import make_sampler  # noqa: E402
from nasenergy.search.sampling.tpe_cache import cached_tpe_sampler  # noqa: E402
from nasenergy.search.sampling.tpe_dedup import SeenNetworks, dedup_tpe_sampler, watch_seen_networks  # noqa: E402

OPS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]
N_EDGES = 4  # 625 networks: a seeded run of 80 trials re-proposes some


def _run(sampler, n_trials: int = 80, is_seen=None) -> tuple[list[tuple], list[bool]]:
    """A seeded 3-objective ask-and-tell run with pruned trials (like a filtered search); returns
    the proposals and, per proposal, whether it was already proposed before. ``is_seen(params,
    told)`` (if given) becomes the sampler's callback, with ``told`` the proposals so far."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["maximize", "maximize", "minimize"], sampler=sampler)
    told: set[tuple] = set()
    if is_seen is not None:
        sampler.is_seen = lambda params: is_seen(params, told)
    out, repeats = [], []
    for _ in range(n_trials):
        trial = study.ask()
        ops = tuple(trial.suggest_categorical(f"edge{i}", OPS) for i in range(N_EDGES))
        out.append(ops)
        repeats.append(ops in told)
        told.add(ops)
        score = sum(OPS.index(o) for o in ops)
        if score % 3 == 0:  # a skipped candidate
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(trial, [score, -abs(score - 6), score / (1 + ops.count("none"))])
    return out, repeats


def _ops(params) -> tuple:
    return tuple(params[f"edge{i}"] for i in range(N_EDGES))


def _seen_if_told(params, told) -> bool:
    return _ops(params) in told


def _sampler(seed: int = 3, **kw):
    return dedup_tpe_sampler(seed=seed, multivariate=True, n_startup_trials=10, **kw)


def test_optuna_internals_the_hook_relies_on() -> None:
    """Fails when Optuna's TPE changes under the override: `_sample` must score its candidates
    with ``self._compute_acquisition_func`` (so a subclass sees them) and keep the argmax."""
    stock = optuna.samplers.TPESampler
    assert all(callable(getattr(stock, m, None)) for m in tpe_dedup.HOOKS)
    assert list(inspect.signature(stock._sample).parameters) == ["self", "study", "trial", "search_space"]
    assert list(inspect.signature(stock._compute_acquisition_func).parameters) == [
        "self", "samples", "mpe_below", "mpe_above"]
    source = inspect.getsource(stock._sample)
    assert "samples_below = mpe_below.sample(self._rng.rng, self._n_ei_candidates)" in source
    assert "self._compute_acquisition_func(samples_below" in source
    assert "_compare(samples_below, acq_func_vals)" in source
    assert "argmax" in inspect.getsource(stock._compare)
    assert type(_sampler()).__name__ == "DedupTPESampler"


def test_callback_is_honoured() -> None:
    """Most candidates are "seen" (proposed before): TPE's choice is redirected to an unseen one,
    and a proposal repeats an earlier one only when every candidate of its draw was seen."""
    sampler = _sampler()
    proposals, repeats = _run(sampler, is_seen=_seen_if_told)
    _, stock_repeats = _run(cached_tpe_sampler(seed=3, multivariate=True, n_startup_trials=10))
    assert sampler.stats["draws"] == 70  # every draw after the 10 random start-up trials
    assert sampler.stats["redirected"] > 0
    assert sum(repeats) <= sampler.stats["all_seen"]
    assert sum(repeats) < sum(stock_repeats)
    assert sum(stock_repeats) >= 5  # the toy study does make stock TPE repeat itself


def test_only_unseen_candidates_are_chosen_when_there_are_any() -> None:
    """A callback that sees every network with ``edge0`` other than ``none``: each proposal
    after the start-up has ``edge0 == none`` unless its whole draw was seen."""
    sampler = _sampler()
    proposals, _ = _run(sampler, is_seen=lambda params, _told: params["edge0"] != "none")
    after_startup = proposals[10:]
    with_none = sum(p[0] == "none" for p in after_startup)
    assert with_none == len(after_startup) - sampler.stats["all_seen"]
    assert with_none > len(after_startup) // 2


def test_seeded_proposals_are_deterministic() -> None:
    first, _ = _run(_sampler(3), is_seen=_seen_if_told)
    again, _ = _run(_sampler(3), is_seen=_seen_if_told)
    other, _ = _run(_sampler(4), is_seen=_seen_if_told)
    assert first == again
    assert first != other


def test_falls_back_to_tpe_when_every_candidate_is_seen_or_without_callback() -> None:
    stock, _ = _run(cached_tpe_sampler(seed=3, multivariate=True, n_startup_trials=10))
    all_seen = _sampler(extra_draws=0)
    assert _run(all_seen, is_seen=lambda params, _told: True)[0] == stock
    assert all_seen.stats["all_seen"] == all_seen.stats["draws"] == 70
    assert _run(_sampler())[0] == stock  # no callback: exactly the cached (= Optuna's) TPE


def test_when_every_candidate_is_seen_it_keeps_tpes_choice_of_the_first_batch() -> None:
    """Extra batches are drawn, but with nothing unseen in them TPE's choice of its own batch
    stands: the first proposal after the start-up equals stock TPE's (later ones differ, since
    the extra batches advance the random generator)."""
    stock, _ = _run(cached_tpe_sampler(seed=3, multivariate=True, n_startup_trials=10), 11)
    sampler = _sampler(extra_draws=3)
    proposals, _ = _run(sampler, 11, is_seen=lambda params, _told: True)
    assert proposals == stock
    assert sampler.stats["all_seen"] == sampler.stats["draws"] == 1


def test_extra_batches_find_an_unseen_network_when_the_first_has_none() -> None:
    """A callback that sees everything in the first batch of each draw (it answers "seen" for
    its first 24 questions per draw): the proposal comes from an extra batch, unseen."""
    calls = {"n": 0}
    unseen: list[tuple] = []

    def seen(params, _told) -> bool:
        calls["n"] += 1
        if calls["n"] <= 24:
            return True
        unseen.append(_ops(params))
        return False

    sampler = _sampler(extra_draws=2)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler)
    for i in range(12):
        calls["n"] = 0
        unseen.clear()
        sampler.is_seen = lambda params: seen(params, None)
        trial = study.ask()
        ops = tuple(trial.suggest_categorical(f"edge{j}", OPS) for j in range(N_EDGES))
        if i >= 10:  # after the start-up: drawn by TPE, from the extra batch
            assert ops in unseen
        study.tell(trial, [float(sum(OPS.index(o) for o in ops)), float(ops.count("none"))])
    assert sampler.stats["redirected_extra"] == 2 and sampler.stats["all_seen"] == 0


def test_without_the_hooked_methods_it_is_the_plain_sampler(monkeypatch) -> None:
    tpe_dedup.dedup_tpe_class.cache_clear()
    try:
        monkeypatch.delattr(optuna.samplers.TPESampler, "_compute_acquisition_func")
        sampler = dedup_tpe_sampler(seed=0, multivariate=True)
        assert type(sampler).__name__ == "CachedTPESampler"
        assert isinstance(watch_seen_networks(sampler, None), tpe_dedup._NoView)
    finally:
        monkeypatch.undo()
        tpe_dedup.dedup_tpe_class.cache_clear()
    assert type(dedup_tpe_sampler(seed=0)).__name__ == "DedupTPESampler"


def test_make_sampler_wires_dedup_only_into_tpe() -> None:
    assert type(make_sampler("tpe", seed=0, budget=10)).__name__ == "DedupTPESampler"
    for name in ("nsga2", "random"):
        sampler = make_sampler(name, seed=0, budget=10)
        assert not hasattr(sampler, "is_seen")
        assert isinstance(watch_seen_networks(sampler, None), tpe_dedup._NoView)


def _trial(number: int, canonical: str | None, outcome: str | None, finished: bool = True):
    attrs = {}
    if canonical is not None:
        attrs["candidate"] = {"canonical": canonical, "arch": canonical, "worker": "w", "arch_index": 0}
    if outcome is not None:
        attrs["outcome"] = outcome
    return SimpleNamespace(number=number, user_attrs=attrs, state=SimpleNamespace(is_finished=lambda: finished))


def test_seen_classes_follow_the_study_trials() -> None:
    from search_spaces import get_space

    space = get_space("tss")
    view = SeenNetworks(space)
    a, b = space.arch_at(1), space.arch_at(2)
    ca, cb = str(space.canonical(a)), str(space.canonical(b))
    view.update([
        _trial(0, ca, "filtered"),
        _trial(1, "X", "abandoned"),  # no cell: not seen
        _trial(2, "Y", "over_budget"),
        _trial(3, cb, None, finished=False),  # in progress: seen while it is
        _trial(4, None, None, finished=False),  # has not named its network yet
    ])
    params_a = dict(zip(space.param_choices(), a.ops))
    assert space.arch_from_params(params_a) == a
    assert view(params_a) and not view(dict(zip(space.param_choices(), space.arch_at(3).ops)))
    assert ca in view and cb in view and "X" not in view and "Y" not in view
    view.update([_trial(3, cb, "abandoned")])
    assert cb not in view and ca in view
    assert not view({"nonsense": 1})  # not a network of the space: never "seen"


def test_networks_a_partial_profile_lacks_count_as_seen() -> None:
    from search_spaces import get_space

    space = get_space("tss")
    a, b = space.arch_at(5), space.arch_at(6)
    view = SeenNetworks(space, covers=lambda arch: arch == a)
    assert not view(dict(zip(space.param_choices(), a.ops)))
    assert view(dict(zip(space.param_choices(), b.ops)))
    assert not SeenNetworks(space)(dict(zip(space.param_choices(), b.ops)))


def test_the_search_wires_it_fewer_duplicates(tmp_path, fake_env, monkeypatch) -> None:
    """Small fake-meter searches with the dominance filter, seeds 0-2: with the hook, fewer
    duplicates than the same seeded searches with the hook turned off (then exactly the cached
    TPE). Summed over three seeds, as one seed's count of duplicates is a matter of luck."""
    from fake_parts import fake_components

    def duplicates(name: str) -> tuple[int, int]:
        dup = rows_seen = 0
        for seed in range(3):
            config = SearchConfig(budget=40, seed=seed, dvfs="none", out=str(tmp_path / f"{name}{seed}"), quiet=True,
                                  filter="dominance", max_candidates=2000, patience=0)
            run_search(config, components_factory=fake_components)
            rows = load_run(tmp_path / f"{name}{seed}").rows
            dup += sum(r["outcome"] == "duplicate" for r in rows)
            rows_seen += len(rows)
        return dup, rows_seen

    with_hook, candidates = duplicates("dedup")
    monkeypatch.setattr(tpe_dedup, "watch_seen_networks", lambda sampler, space, key_of=None, covers=None: tpe_dedup._NoView())
    import nasenergy.search.loop.worker_context as worker_context  # where the worker calls it

    monkeypatch.setattr(worker_context, "watch_seen_networks",
                        lambda sampler, space, key_of=None, covers=None: tpe_dedup._NoView())
    without_hook, stock_candidates = duplicates("stock")
    assert without_hook >= 10
    assert with_hook < without_hook / 2
    assert candidates < stock_candidates
