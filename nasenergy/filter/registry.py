"""The filter registry: every filter mode (``--filter``, `UtilizationFilter.create`) is one
registered `FilterKind`.

A new filter is one module plus one call::

    from nasenergy.filter.registry import FilterKind, register_filter
    register_filter(FilterKind("myfilter", MyFilter, search_options=("target_recall", "objectives")))

An installed package adds its filters through the ``nasenergy.filters`` entry-point group
(`nasenergy._registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nasenergy._registry import Registry, resolve
from nasenergy.filter.records import FilterError

if TYPE_CHECKING:
    from nasenergy.filter.protocol import CandidateFilter

SEARCH_OPTIONS: tuple[str, ...] = ("target_recall", "objectives", "seed", "energy_bound", "cheap_columns")
"""The options the search can pass a filter: the run's target recall, its objectives (names in
canonical order), its seed, the optimistic energy bound of its DVFS step and the cheap measurement
columns its accuracy model reads (``--filter-features``, `nasenergy.filter.features.CHEAP_FEATURE_GROUPS`)."""

__all__ = ["FILTERS", "SEARCH_OPTIONS", "FilterKind", "filter_kind", "register_filter", "takes_target_recall"]


@dataclass(frozen=True)
class FilterKind:
    """One filter mode.

    Attributes:
        mode: its name (``--filter``).
        factory: the filter class or a callable building one from keyword options (or a
            ``"module:attribute"`` string naming it); the result follows
            `nasenergy.filter.protocol.CandidateFilter`.
        search_options: which of `SEARCH_OPTIONS` the search passes it.
        default_target_recall: its target recall when ``--target-recall`` is not given.
        needs_accuracy: whether it predicts accuracy (then accuracy must be an objective).
    """

    mode: str
    factory: Callable[..., CandidateFilter] | str
    search_options: tuple[str, ...] = ("target_recall", "objectives")
    default_target_recall: float = 0.95
    needs_accuracy: bool = True

    @property
    def takes_target_recall(self) -> bool:
        """Whether the search passes it a target recall (``target_recall`` in `search_options`)."""
        return "target_recall" in self.search_options

    def __post_init__(self) -> None:
        unknown = [o for o in self.search_options if o not in SEARCH_OPTIONS]
        if unknown:
            raise FilterError(f"filter {self.mode!r}: unknown search options {unknown}; choose from {SEARCH_OPTIONS}")

    def create(self, **options: Any) -> CandidateFilter:
        """A filter of this mode with ``options``.

        Raises:
            FilterError: an option its factory does not take.
        """
        try:
            return resolve(self.factory)(**options)
        except TypeError as exc:
            raise FilterError(f"bad option for the {self.mode!r} filter: {exc}") from None


FILTERS: Registry[FilterKind] = Registry("filter mode", plugin_group="nasenergy.filters")
"""The registered filter modes."""


def register_filter(kind: FilterKind, *, replace: bool = False) -> FilterKind:
    """Make ``kind`` selectable (``--filter``, `SearchConfig.filter`, `UtilizationFilter.create`)."""
    return FILTERS.register(kind.mode, kind, replace=replace)


def filter_kind(mode: str) -> FilterKind:
    """The registered `FilterKind` of ``mode``.

    Raises:
        FilterError: no such mode.
    """
    if mode not in FILTERS:
        raise FilterError(f"unknown filter mode {mode!r}; choose one of {FILTERS.names()}")
    return FILTERS.get(mode)


def takes_target_recall(mode: str) -> bool:
    """Whether the filter ``mode`` takes a target recall, so that runs name and report one with it
    (an unknown mode: ``True``, as runs of it were named before it was known)."""
    return FILTERS.get(mode).takes_target_recall if mode in FILTERS else True


# Both filters default to a target recall of 0.95: see `nasenergy.search.command.config_defaults.default_target_recall`
# for the study behind it.
register_filter(FilterKind("dominance", "nasenergy.filter.dominance:DominanceFilter", search_options=SEARCH_OPTIONS,
                           default_target_recall=0.95))
register_filter(FilterKind("threshold", "nasenergy.filter.threshold:ThresholdFilter", default_target_recall=0.95))
register_filter(FilterKind("none", "nasenergy.filter.base:PassThroughFilter", search_options=(),
                           default_target_recall=0.95, needs_accuracy=False))
