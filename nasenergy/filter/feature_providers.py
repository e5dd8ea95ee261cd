"""Feature providers: named sources of the extra feature vector a filter reads beside the cheap
measurement (`DominanceFilter.admit(..., features=)`, the search's screening, a user's own filter).

A provider is built from keyword options (the search space and dataset at least) and maps an
architecture to a float vector laid out as its ``names``. `feature_set` joins several into one
vector, in the order named::

    from nasenergy.filter.feature_providers import feature_set
    features = feature_set(["structure", "proxies"], space=get_space("tss"), dataset="cifar10")
    flt.admit(measurement, front, features=features(arch))

Built in: ``structure`` (the space's structural features, `SearchSpace.features`), ``proxies``
(the zero-cost proxies of the recorded table, `nasenergy.proxies.features.RecordedProxyFeatures`)
and ``proxies-live`` (the same proxies computed for each architecture,
`nasenergy.proxies.features.LiveProxyFeatures`). A new provider is one class plus one call::

    register_feature_provider(FeatureProviderKind("mine", "mypackage.features:MyFeatures"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nasenergy._registry import Registry, resolve
from nasenergy.filter.records import FilterError
from search_spaces import SpaceProtocol

__all__ = ["FEATURE_PROVIDERS", "FeatureProvider", "FeatureProviderKind", "FeatureSet", "StructureFeatures",
           "feature_provider", "feature_set", "register_feature_provider"]


@runtime_checkable
class FeatureProvider(Protocol):
    """Maps an architecture (or any candidate its maker understands) to a feature vector."""

    names: tuple[str, ...]

    def __call__(self, candidate: Any) -> np.ndarray: ...


@dataclass(frozen=True)
class FeatureProviderKind:
    """One feature provider the filters can take features from.

    Attributes:
        name: its name (``feature_set([...])``).
        factory: builds the provider from keyword options (``space``, ``dataset`` and its own), or a
            ``"module:attribute"`` string naming it.
        description: one line for listings.
    """

    name: str
    factory: Callable[..., FeatureProvider] | str
    description: str = ""

    def create(self, **options: Any) -> FeatureProvider:
        """A provider of this kind.

        Raises:
            FilterError: an option its factory does not take.
        """
        try:
            return resolve(self.factory)(**options)
        except TypeError as exc:
            raise FilterError(f"bad option for the {self.name!r} features: {exc}") from None


FEATURE_PROVIDERS: Registry[FeatureProviderKind] = Registry("feature provider",
                                                          plugin_group="nasenergy.feature_providers")
"""The registered feature providers by name."""


def register_feature_provider(kind: FeatureProviderKind, *, replace: bool = False) -> FeatureProviderKind:
    """Make ``kind`` selectable by name in `feature_provider` and `feature_set`."""
    return FEATURE_PROVIDERS.register(kind.name, kind, replace=replace)


def feature_provider(name: str, **options: Any) -> FeatureProvider:
    """The provider called `name`, built with `options`.

    Raises:
        FilterError: an unknown name or a bad option.
    """
    if name not in FEATURE_PROVIDERS:
        raise FilterError(f"unknown feature provider {name!r}; choose from {', '.join(FEATURE_PROVIDERS.names())}")
    return FEATURE_PROVIDERS.get(name).create(**options)


class FeatureSet:
    """Several providers' vectors joined, in order.

    Args:
        providers: the providers.
    """

    def __init__(self, providers: Sequence[FeatureProvider]) -> None:
        self.providers = tuple(providers)
        self.names: tuple[str, ...] = tuple(n for p in self.providers for n in p.names)

    def __call__(self, candidate: Any) -> np.ndarray:
        parts = [np.asarray(p(candidate), dtype=float).ravel() for p in self.providers]
        return np.concatenate(parts) if parts else np.empty(0)


def feature_set(names: Sequence[str], *, options: Mapping[str, Mapping[str, Any]] | None = None,
                **shared: Any) -> FeatureSet:
    """The providers `names`, each built with the `shared` options (e.g. ``space``, ``dataset``)
    plus its own from ``options[name]``.

    Raises:
        FilterError: an unknown name, a name given twice, or a bad option.
    """
    if len(set(names)) != len(names):
        raise FilterError(f"feature providers named twice: {list(names)}")
    own = dict(options or {})
    return FeatureSet([feature_provider(n, **shared, **dict(own.get(n, {}))) for n in names])


class StructureFeatures:
    """The space's own structural features of an architecture (`SearchSpace.features`; for TSS the
    one-hot operations, structural counts and path summaries the search passes the filter).

    Args:
        space: the search space.
        dataset: unused (the structure is the same on every dataset).
    """

    def __init__(self, space: SpaceProtocol, dataset: str = "cifar10") -> None:
        self.space = space
        self.names = tuple(getattr(space, "feature_names", ()))

    def __call__(self, candidate: Any) -> np.ndarray:
        return np.asarray(self.space.features(candidate), dtype=float)


register_feature_provider(FeatureProviderKind("structure", "nasenergy.filter.feature_providers:StructureFeatures",
                                              "the space's structural features (SearchSpace.features)"))
register_feature_provider(FeatureProviderKind("proxies", "nasenergy.proxies.features:RecordedProxyFeatures",
                                              "zero-cost proxies from the recorded table"))
register_feature_provider(FeatureProviderKind("proxies-live", "nasenergy.proxies.features:LiveProxyFeatures",
                                              "zero-cost proxies computed for each architecture"))
