"""The cached TPE sampler proposes exactly what Optuna's TPE proposes."""

from __future__ import annotations

import pytest

optuna = pytest.importorskip("optuna")

from nasenergy.search.sampling.study import make_sampler  # noqa: E402
from nasenergy.search.sampling.tpe_cache import cached_tpe_sampler  # noqa: E402

OPS = ["none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"]


def _proposals(sampler, n_trials: int = 90) -> list[tuple]:
    """A seeded 3-objective ask-and-tell run with pruned trials, like a filtered search."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["maximize", "maximize", "minimize"], sampler=sampler)
    out = []
    for _ in range(n_trials):
        trial = study.ask()
        ops = tuple(trial.suggest_categorical(f"edge{i}", OPS) for i in range(6))
        x = trial.suggest_float("x", 0.0, 1.0)
        out.append((*ops, x))
        score = sum(OPS.index(o) for o in ops)
        if score % 3 == 0:  # a skipped candidate
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(trial, [score + x, -score * x, score / (1 + x)])
    return out


def test_cached_sampler_proposes_what_stock_tpe_proposes() -> None:
    stock = _proposals(optuna.samplers.TPESampler(seed=3, multivariate=True, n_startup_trials=10))
    cached = _proposals(cached_tpe_sampler(seed=3, multivariate=True, n_startup_trials=10))
    assert cached == stock


def test_cache_is_used_and_other_seeds_differ() -> None:
    sampler = cached_tpe_sampler(seed=3, multivariate=True, n_startup_trials=10)
    runs = _proposals(sampler, 40)
    assert type(sampler).__name__ == "CachedTPESampler"
    assert sum(len(c) for c in sampler._repr_cache.values()) > 0
    assert runs != _proposals(cached_tpe_sampler(seed=4, multivariate=True, n_startup_trials=10), 40)


def test_make_sampler_tpe_is_cached() -> None:
    from nasenergy.search.sampling.tpe_cache import cached_tpe_class

    assert isinstance(make_sampler("tpe", seed=0, budget=10), cached_tpe_class())  # the dedup sampler extends it
