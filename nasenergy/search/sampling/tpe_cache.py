"""Optuna's TPE sampler with the finished trials' parameters converted once, not on every draw.

TPE turns the parameters of every finished trial into its internal representation twice per
draw (for the "below" and "above" estimators). A filtered search asks for several times as many
candidates as it evaluates (skipped networks and duplicates are trials too), so that conversion
grows with the square of the number of candidates and becomes most of the search's CPU time.
`CachedTPESampler` keeps each finished trial's converted values (finished trials never change)
and gives TPE exactly the arrays it would have built: same values, same dtypes, same order, so a
seeded search proposes the same networks with or without the cache (tested).

Only the conversion is cached; how TPE splits and weights trials is untouched. Where Optuna's
TPE no longer has the method this overrides, the sampler leaves the work to Optuna.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optuna import Study
    from optuna.samplers import TPESampler
    from optuna.trial import FrozenTrial


def cached_tpe_sampler(**kwargs: Any) -> TPESampler:
    """A `CachedTPESampler` (Optuna's `TPESampler` arguments)."""
    import optuna

    cls = cached_tpe_class()
    return cls(**kwargs) if cls is not None else optuna.samplers.TPESampler(**kwargs)


@functools.cache
def cached_tpe_class() -> type[TPESampler] | None:
    """The `CachedTPESampler` class (a subclass of Optuna's `TPESampler`), or ``None`` where
    Optuna's TPE lacks the methods it overrides."""
    import optuna

    class CachedTPESampler(optuna.samplers.TPESampler):
        """`optuna.samplers.TPESampler` with a cache of finished trials' internal parameter values."""

        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            self._repr_cache: dict[tuple[Any, ...], dict[int, tuple[Any, ...] | None]] = {}

        def _get_internal_repr(self, trials: list[FrozenTrial], search_space: dict[str, Any], study: Study) -> dict[str, Any]:
            import numpy as np

            names = list(search_space)
            cache = self._repr_cache.setdefault(tuple((n, repr(d)) for n, d in search_space.items()), {})
            rows = []
            for trial in trials:
                finished = trial.state.is_finished()
                row: tuple[Any, ...] | None
                if finished and trial._trial_id in cache:
                    row = cache[trial._trial_id]
                else:
                    params = self._get_params(trial, study)
                    row = (tuple(search_space[n].to_internal_repr(params[n]) for n in names)
                           if search_space.keys() <= params.keys() else None)
                    if finished:
                        cache[trial._trial_id] = row
                if row is not None:
                    rows.append(row)
            return {n: np.asarray([r[j] for r in rows]) for j, n in enumerate(names)}

    stock = optuna.samplers.TPESampler
    if not (hasattr(stock, "_get_internal_repr") and hasattr(stock, "_get_params")):
        return None  # an Optuna without the hook: no cache
    return CachedTPESampler
