"""The sampler registry: every ``--sampler`` choice is one registered `SamplerKind`.

A sampler kind builds a seeded Optuna sampler for a run. A new one is one function plus one call::

    import optuna
    from nasenergy.search.sampling.samplers import SamplerKind, register_sampler

    def my_sampler(*, seed: int, budget: int) -> optuna.samplers.BaseSampler:
        return optuna.samplers.QMCSampler(seed=seed)

    register_sampler(SamplerKind("qmc", my_sampler))  # then: --sampler qmc

An installed package adds its samplers through the ``nasenergy.samplers`` entry-point group
(`nasenergy._registry`). The run wraps whatever the kind builds as it wraps the built-in ones
(one seeded random stream per trial, `nasenergy.search.sampling.study`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nasenergy._registry import Registry, resolve

SamplerFactory = Callable[..., Any]
"""``(*, seed: int, budget: int) -> optuna.samplers.BaseSampler``: the run's seed (per worker) and
its budget of full evaluations."""

__all__ = ["SAMPLER_KINDS", "SamplerFactory", "SamplerKind", "register_sampler"]


@dataclass(frozen=True)
class SamplerKind:
    """One ``--sampler`` choice.

    Attributes:
        name: the ``--sampler`` value.
        factory: ``(*, seed, budget) -> sampler`` (or a ``"module:attribute"`` string naming it).
    """

    name: str
    factory: SamplerFactory | str

    def create(self, *, seed: int, budget: int) -> Any:
        """The seeded sampler of this kind for a run with ``budget`` full evaluations."""
        return resolve(self.factory)(seed=seed, budget=budget)


SAMPLER_KINDS: Registry[SamplerKind] = Registry("sampler", plugin_group="nasenergy.samplers")
"""The registered samplers by ``--sampler`` name."""


def register_sampler(kind: SamplerKind, *, replace: bool = False) -> SamplerKind:
    """Make ``kind`` selectable (``--sampler``, `SearchConfig.sampler`)."""
    return SAMPLER_KINDS.register(kind.name, kind, replace=replace)


def tpe_sampler(*, seed: int, budget: int) -> Any:
    """Multivariate TPE that prefers networks the study has not seen (`nasenergy.search.sampling.tpe_dedup`):
    the edges of a cell interact, and one joint draw reads the study's trials once per candidate
    instead of once per parameter; its conversion of finished trials' parameters is cached
    (`nasenergy.search.sampling.tpe_cache`)."""
    from nasenergy.search.sampling.tpe_dedup import dedup_tpe_sampler  # lazy: imports optuna

    return dedup_tpe_sampler(seed=seed, multivariate=True)


def nsga2_sampler(*, seed: int, budget: int) -> Any:
    """NSGA-II with a population of ``budget // 4`` clamped to 8..50, so that a small budget still
    sees several generations."""
    import optuna  # lazy: optuna is heavy

    return optuna.samplers.NSGAIISampler(seed=seed, population_size=max(8, min(50, budget // 4)))


def random_sampler(*, seed: int, budget: int) -> Any:
    """Uniform random search."""
    import optuna  # lazy: optuna is heavy

    return optuna.samplers.RandomSampler(seed=seed)


register_sampler(SamplerKind("tpe", f"{__name__}:tpe_sampler"))
register_sampler(SamplerKind("nsga2", f"{__name__}:nsga2_sampler"))
register_sampler(SamplerKind("random", f"{__name__}:random_sampler"))
