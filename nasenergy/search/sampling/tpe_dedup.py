"""TPE that prefers, among the candidates it drew, a network the study has not seen yet.

A filtered search asks TPE for several times as many candidates as it evaluates, and about half
of them are *duplicates*: networks the study has already seen (same network key, evaluated,
filtered, not recorded, failed). The pipeline answers a duplicate from its earlier trial and
tells it ``PRUNED`` (`nasenergy.search.loop.pipeline`), but each one still costs a full TPE proposal
and an Optuna trial, and TPE's cost per proposal grows with the number of trials.

How TPE proposes (Optuna 5, ``TPESampler._sample``): it draws ``n_ei_candidates`` (24) samples
from the "below" (good) estimator, scores each with the acquisition function (log-likelihood
ratio of the below and above estimators) and returns the best. On a categorical space the good
estimator puts most of its mass on the good networks already seen, so the best of the 24 is
often a network the study has seen, while an unseen one scored almost as well.

`DedupTPESampler` changes only that last choice: given ``is_seen(params) -> bool`` (set by the
worker, see `watch_seen_networks`), it returns the best-scoring candidate whose network is
unseen. When every candidate is seen (late in a search, when the good estimator has narrowed
onto the evaluated networks), it draws up to `EXTRA_DRAWS` more batches from the same estimator
and takes the best unseen candidate of the first batch that has one; failing that, TPE's own
choice stands. The first batch is TPE's own draw, and extra batches come from the sampler's own
random generator, so a seeded search is still deterministic; a trial still means what it meant
(the pipeline's duplicate handling stays as the safety net, e.g. for a class another worker took
while this one was drawing: a stale view only costs a duplicate).

The override hooks two private methods of Optuna's TPE (``_sample``, to learn the search space
of the draw, and ``_compute_acquisition_func``, to mask the seen candidates and to extend the
candidates in place with extra batches). Where Optuna's TPE lacks either, `dedup_tpe_sampler`
returns the plain (cached) TPE sampler; the tests check that Optuna still calls the hook from
``_sample`` and still picks the argmax.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.network_key import network_key_fn
from nasenergy.search.sampling.tpe_cache import cached_tpe_class, cached_tpe_sampler
from search_spaces import SpaceProtocol

SEEN_OUTCOMES = frozenset({oc.EVALUATED, oc.FILTERED, oc.DUPLICATE, oc.NOT_RECORDED, oc.INFEASIBLE, oc.FAILED})
"""Outcomes after which the pipeline answers the candidate's class as a duplicate (its cell is in
the claims store). ``over_budget`` and ``abandoned`` leave no cell."""

EXTRA_DRAWS = 4
"""When every candidate of a draw is seen, `DedupTPESampler` draws up to this many more batches of
``n_ei_candidates`` from the same estimator before it leaves TPE's own choice (a seen network)."""

HOOKS = ("_sample", "_compute_acquisition_func")
"""Optuna `TPESampler` methods `DedupTPESampler` overrides."""


class SeenNetworks:
    """The networks a study has seen, by network key (`nasenergy.run.network_key`), from its
    trials' ``candidate`` attributes.

    Callable as ``is_seen(params)`` for `DedupTPESampler`: whether the network named by Optuna
    parameters (as `SpaceProtocol.suggest` creates them) has been seen. `update` reads the study's
    trials (any worker's); the network of a trial still in progress counts as seen while it is
    in progress (it is about to be claimed or recorded).

    A network a partial recorded profile cannot answer (``covers`` says no) counts as seen too:
    the pipeline would record it ``not_recorded`` at once, so TPE is steered to the recorded
    networks among its draws instead of spending a trial on it.

    Args:
        space: the search space (`param_choices`, `arch_from_params`, `canonical`).
        key_of: the study's network key of an architecture (default: its canonical class).
        covers: whether the run's meter can measure an architecture (``None``: every one).
    """

    def __init__(self, space: SpaceProtocol, key_of: Callable[[Any], str] | None = None,
                 covers: Callable[[Any], bool] | None = None) -> None:
        self.space = space
        self.key_of = key_of or network_key_fn(space, "as_built")  # the canonical class alone
        self.covers = covers
        self._outside: dict[tuple[Any, ...], bool] = {}
        self._names = tuple(space.param_choices())
        self._keys: dict[tuple[Any, ...], str] = {}
        self._settled: set[str] = set()
        self._pending: set[str] = set()
        self._closed: set[int] = set()

    def update(self, trials: Iterable[Any]) -> None:
        """Take in the study's trials (``study.get_trials(deepcopy=False)``)."""
        pending: set[str] = set()
        for t in trials:
            if t.number in self._closed:
                continue
            candidate = t.user_attrs.get(tr.CANDIDATE)
            outcome = t.user_attrs.get(tr.OUTCOME)
            if candidate is None or outcome is None:
                if t.state.is_finished():
                    self._closed.add(t.number)  # closed before it named its network
                elif candidate is not None:
                    pending.add(tr.network_of(candidate))
                continue
            self._closed.add(t.number)
            if outcome in SEEN_OUTCOMES:
                self._settled.add(tr.network_of(candidate))
        self._pending = pending

    def network(self, params: Mapping[str, Any]) -> str:
        """The key of the network named by ``params`` (memoized)."""
        values = tuple(params[n] for n in self._names)
        found = self._keys.get(values)
        if found is None:
            found = self._keys[values] = self.key_of(self.space.arch_from_params(params))
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._settled or key in self._pending

    def outside(self, params: Mapping[str, Any]) -> bool:
        """Whether the network named by ``params`` is outside the meter's reach (memoized)."""
        if self.covers is None:
            return False
        values = tuple(params[n] for n in self._names)
        found = self._outside.get(values)
        if found is None:
            found = self._outside[values] = not self.covers(self.space.arch_from_params(params))
        return found

    def __call__(self, params: Mapping[str, Any]) -> bool:
        try:
            return self.network(params) in self or self.outside(params)
        except (KeyError, ValueError, LookupError):  # not a full network of this space
            return False


class _NoView:
    """What `watch_seen_networks` gives for a sampler without the hook: updates cost nothing."""

    def update(self, trials: Iterable[Any]) -> None:
        pass


def watch_seen_networks(sampler: Any, space: SpaceProtocol, key_of: Callable[[Any], str] | None = None,
                        covers: Callable[[Any], bool] | None = None) -> SeenNetworks | _NoView:
    """Give ``sampler`` (when it is a `DedupTPESampler`) a `SeenNetworks` view of ``space`` (networks
    keyed by ``key_of``, those ``covers`` refuses counted as seen) as its ``is_seen`` callback; the
    caller keeps it current with `SeenNetworks.update`. Any other sampler is left alone (NSGA-II
    and random search propose as before)."""
    if not hasattr(sampler, "is_seen"):
        return _NoView()
    view = SeenNetworks(space, key_of, covers)
    sampler.is_seen = view
    return view


def dedup_tpe_sampler(*, is_seen: Callable[[dict[str, Any]], bool] | None = None, **kwargs: Any) -> Any:
    """A `DedupTPESampler` (Optuna's `TPESampler` arguments, plus ``is_seen``), or the cached TPE
    sampler of `nasenergy.search.sampling.tpe_cache` where Optuna's TPE lacks the hooked methods."""
    cls = dedup_tpe_class()
    if cls is None:
        return cached_tpe_sampler(**kwargs)
    return cls(is_seen=is_seen, **kwargs)


@functools.cache
def dedup_tpe_class() -> Any:
    """The `DedupTPESampler` class, or ``None`` where Optuna's TPE lacks a method of `HOOKS`."""
    import numpy as np
    import optuna

    if not all(callable(getattr(optuna.samplers.TPESampler, m, None)) for m in HOOKS):
        return None
    base = cached_tpe_class() or optuna.samplers.TPESampler

    class DedupTPESampler(base):  # type: ignore[misc, valid-type]
        """TPE choosing the best-scoring of its EI candidates whose network is not yet seen.

        Attributes:
            is_seen: ``is_seen(params) -> bool`` or ``None`` (then exactly Optuna's TPE).
            extra_draws: see `EXTRA_DRAWS` (0: no extra batches).
            stats: counters: ``draws`` (draws checked), ``redirected`` (TPE's choice was seen and
                an unseen candidate was taken), ``redirected_extra`` (every candidate was seen; an
                unseen one of an extra batch was taken), ``all_seen`` (every candidate of every
                batch was seen: TPE's choice stands).
        """

        def __init__(
            self,
            *,
            is_seen: Callable[[dict[str, Any]], bool] | None = None,
            extra_draws: int = EXTRA_DRAWS,
            **kw: Any,
        ) -> None:
            super().__init__(**kw)
            self.is_seen = is_seen
            self.extra_draws = int(extra_draws)
            self.stats: Counter[str] = Counter()
            self._draw = threading.local()

        def _sample(self, study: Any, trial: Any, search_space: dict[str, Any]) -> dict[str, Any]:
            self._draw.space = search_space
            try:
                return super()._sample(study, trial, search_space)
            finally:
                self._draw.space = None

        def _compute_acquisition_func(self, samples: dict[str, Any], mpe_below: Any, mpe_above: Any) -> Any:
            values = super()._compute_acquisition_func(samples, mpe_below, mpe_above)
            space = getattr(self._draw, "space", None)
            if self.is_seen is None or not space or not space.keys() <= samples.keys():
                return values
            seen = self._seen_mask(samples, space, len(values))
            self.stats["draws"] += 1
            if seen.all():
                return self._draw_more(samples, space, values, mpe_below, mpe_above)
            if seen[int(np.argmax(values))]:
                self.stats["redirected"] += 1
            return np.where(seen, -np.inf, values)

        def _draw_more(self, samples: dict[str, Any], space: dict[str, Any], values: Any, mpe_below: Any,
                       mpe_above: Any) -> Any:
            """Every candidate is seen: draw up to `extra_draws` more batches from the same
            estimator; the best unseen one of the first batch holding one wins. ``samples`` is
            extended in place (Optuna's `_sample` picks from that very dict). With no unseen
            candidate, TPE's own choice (the best of the first batch) stands."""
            n = len(values)
            for _ in range(self.extra_draws):
                more = mpe_below.sample(self._rng.rng, n)
                seen = self._seen_mask(more, space, n)
                if seen.all():
                    continue
                more_values = np.where(seen, -np.inf, super()._compute_acquisition_func(more, mpe_below, mpe_above))
                for name in samples:
                    samples[name] = np.concatenate([samples[name], more[name]])
                self.stats["redirected_extra"] += 1
                return np.concatenate([np.full(n, -np.inf), more_values])
            self.stats["all_seen"] += 1
            return values

        def _seen_mask(self, samples: dict[str, Any], space: dict[str, Any], n: int) -> Any:
            names = list(space)
            columns = [samples[name] for name in names]
            known: dict[tuple[Any, ...], bool] = {}
            mask = np.zeros(n, dtype=bool)
            for i in range(n):
                key = tuple(c[i].item() for c in columns)
                if key not in known:
                    params = {name: space[name].to_external_repr(v) for name, v in zip(names, key)}
                    known[key] = bool(self.is_seen(params))  # type: ignore[misc]
                mask[i] = known[key]
            return mask

    return DedupTPESampler
