"""``--filter-features``: which features the search's accuracy model reads (the dominance filter's
and the screener's).

Groups, in the order their columns are laid out:

* ``measured``: utilization, log10 throughput and log10 energy per image of the cheap measurement;
* ``size``: log10 FLOPs and log10 parameters of the deployed network (free: nothing measured);
* ``structure``: the space's structural features (`SearchSpace.features`);
* ``proxies``: the zero-cost proxies (synflow, jacov, NASWOT, snip, grad_norm) of the recorded
  table of the run's dataset (`nasenergy.proxies.features.RecordedProxyFeatures`). The table is
  partial: a network without a row gets NaN, which the accuracy models impute with the median of
  the evaluated networks' values (`nasenergy.filter.conformal.make_estimator`); a dataset without
  any row is refused before the search starts;
* ``proxies-live``: the same proxies computed on each candidate's deployed network (on the GPU
  with ``--hardware cuda``, else on the CPU: seconds per candidate), once per network.

The default, ``size,structure``, reads only what is known before anything is measured. It was
chosen on the tuning seeds of ``experiments/search_quality.py`` by a rule declared before the runs
(``results/search_quality_tuning/DECISION.md``): adding the ``measured`` group did not raise the
deploy quality on any of the three datasets. Until then the default was ``measured,size,structure``
(`UNNAMED_FILTER_FEATURES`): studies made with it keep their names and settings, and any other set
adds ``-feat.GROUPS`` to the default study name, the new default included, so that a study is never
resumed with another accuracy model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.filter.feature_providers import FeatureSet, feature_provider
from nasenergy.filter.features import CHEAP_FEATURE_GROUPS, CHEAP_FEATURE_NAMES
from nasenergy.filter.records import FilterError
from nasenergy.hardware.registry import METERS
from search_spaces import SpaceProtocol

FEATURE_GROUPS: tuple[str, ...] = ("measured", "size", "structure", "proxies", "proxies-live")
"""The groups of ``--filter-features``, in the order their columns are laid out."""

DEFAULT_FILTER_FEATURES: tuple[str, ...] = ("size", "structure")
"""The default groups: the sizes and the structure (nothing measured)."""
UNNAMED_FILTER_FEATURES: tuple[str, ...] = ("measured", "size", "structure")
"""The groups a study name leaves unsaid (the default before ``size,structure``): the cheap
measurement, the sizes and the structure."""

PROXY_FEATURES: tuple[str, ...] = ("synflow", "jacov", "naswot", "snip", "grad_norm")
"""The proxies of the ``proxies`` groups (FLOPs and params are the ``size`` group)."""

FeatureFn = Callable[[Any], np.ndarray]
"""An architecture (object or string) -> its extra feature vector."""


def check_filter_features(groups: Sequence[str]) -> tuple[str, ...]:
    """``groups`` in `FEATURE_GROUPS` order.

    Raises:
        UsageError: none, an unknown group, one given twice, or both proxy groups.
    """
    if isinstance(groups, str):
        groups = [groups]
    names = [str(g).strip().lower() for g in groups]
    if not names:
        raise UsageError(f"--filter-features needs at least one of {', '.join(FEATURE_GROUPS)}")
    for name in names:
        if name not in FEATURE_GROUPS:
            raise UsageError(f"--filter-features: {name!r} is not one of {', '.join(FEATURE_GROUPS)}")
    if len(set(names)) != len(names):
        raise UsageError(f"--filter-features lists a group twice: {','.join(names)}")
    if "proxies" in names and "proxies-live" in names:
        raise UsageError("--filter-features: proxies and proxies-live are the same features (recorded or "
                         "computed); choose one")
    return tuple(g for g in FEATURE_GROUPS if g in names)


def parse_filter_features(text: str) -> tuple[str, ...]:
    """``"size,proxies"`` -> ``("size", "proxies")`` (see `check_filter_features`)."""
    return check_filter_features([p for p in str(text).split(",") if p.strip()])


def cheap_columns(groups: Sequence[str]) -> tuple[str, ...]:
    """The cheap measurement columns of ``groups``, in `CHEAP_FEATURE_NAMES` order."""
    wanted = {c for g in groups for c in CHEAP_FEATURE_GROUPS.get(g, ())}
    return tuple(c for c in CHEAP_FEATURE_NAMES if c in wanted)


def suffix(groups: Sequence[str]) -> str:
    """The study name's part for ``groups``: empty for `UNNAMED_FILTER_FEATURES`, else
    ``-feat.size.structure``."""
    groups = check_filter_features(groups)
    return "" if groups == UNNAMED_FILTER_FEATURES else "-feat." + ".".join(groups)


class _OncePerNetwork:
    """A feature function computed once per architecture string (live proxies cost a forward and
    backward pass; the search asks for a network's features when it is measured and again when
    its evaluation is learnt)."""

    def __init__(self, fn: FeatureFn, space: SpaceProtocol) -> None:
        self.fn, self.space = fn, space
        self.names = getattr(fn, "names", ())
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, candidate: Any) -> np.ndarray:
        key = str(self.space.parse(candidate))
        if key not in self._cache:
            self._cache[key] = np.asarray(self.fn(candidate), dtype=float)
        return self._cache[key]


def extra_features(groups: Sequence[str], space: SpaceProtocol, dataset: str, hardware: str,
                   announce: Callable[[str], None] | None = None) -> FeatureFn | None:
    """The extra feature function of ``groups`` (the structure and proxy groups, joined in order),
    or ``None`` when they hold none (only cheap columns).

    Args:
        groups: the ``--filter-features`` groups.
        space: the search space.
        dataset: the run's dataset (the proxies' input shape and class count).
        hardware: the resolved meter (``cuda`` computes live proxies on the GPU).
        announce: receives one line on the recorded table's coverage.

    Raises:
        UsageError: the recorded proxy table has no row for ``dataset``, or a provider refuses.
        DataNotFoundError: no recorded proxy table for the space.
    """
    groups = check_filter_features(groups)
    providers = []
    try:
        if "structure" in groups:
            providers.append(feature_provider("structure", space=space, dataset=dataset))
        if "proxies" in groups:
            try:
                recorded = feature_provider("proxies", space=space, dataset=dataset, proxies=PROXY_FEATURES,
                                            missing="nan")
            except DataNotFoundError as exc:
                raise DataNotFoundError(f"--filter-features proxies: {exc}") from None
            rows = recorded.table.count(dataset)  # type: ignore[attr-defined]
            if rows == 0:
                raise UsageError(f"--filter-features proxies: the recorded proxy table {recorded.table.name} "  # type: ignore[attr-defined]
                                 f"has no row for {dataset}; use proxies-live, or build the table with "
                                 "experiments/proxies_table.py")
            if announce is not None:
                announce(f"--filter-features proxies: the recorded table holds the proxies of {rows} deployed "
                         f"networks on {dataset}; other networks' proxy features are missing and the accuracy "
                         "models impute them (median of the evaluated networks)")
            providers.append(recorded)
        if "proxies-live" in groups:
            device = "cuda" if METERS.get(hardware).uses_gpu else "cpu"
            live = feature_provider("proxies-live", space=space, dataset=dataset, device=device,
                                    proxies=PROXY_FEATURES)
            providers.append(_OncePerNetwork(live, space))
    except FilterError as exc:
        raise UsageError(f"--filter-features: {exc}") from None
    return FeatureSet(providers) if providers else None
