"""The settings of one search run: `SearchConfig`, the public face of their defaults, fields,
validation and study identity.

A `SearchConfig` is what the command line builds and what `run_search` consumes. It is written to
``config.json`` in the run folder; a resumed run (or a second worker joining through a shared
storage) must agree with the stored settings in every field of `STUDY_DEFINING` (the ones that
change what the objective values mean), and may raise, never lower, the budget.

The parts, each with one job: `nasenergy.search.command.config_defaults` (defaults and fixed choices),
`nasenergy.search.command.config_values` (reading one value), `nasenergy.search.command.config_fields` (the
fields, `SearchSettings`), `nasenergy.search.command.config_checks` (validation) and
`nasenergy.search.command.study_identity` (the study the settings name). Their public names are
importable from here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy.filter.registry import FILTERS
from nasenergy.hardware.registry import hardware_choices
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.search.command.config_checks import check_run_folder, check_settings
from nasenergy.search.command.config_defaults import (
    DEFAULT_PATIENCE,
    DEFAULT_SEARCH_METRIC,
    ESTIMATES,
    MAX_CANDIDATES_PER_EVALUATION,
    MAX_SCREEN,
    SAMPLERS,
    default_target_recall,
    default_target_recalls,
)
from nasenergy.search.command.config_fields import BUDGET_KEEPING, SearchSettings
from nasenergy.search.command.config_values import parse_objectives, parse_search_metric
from nasenergy.search.command.filter_features import UNNAMED_FILTER_FEATURES
from nasenergy.search.command.study_identity import (
    STUDY_DEFINING,
    default_study_name,
    profile_digest,
    resolved_study_name,
    run_folder,
    settings_dict,
    study_defining,
)
from nasenergy.search.storage.credentials import mask_url
from search_spaces import space_names

__all__ = [
    "BUDGET_KEEPING", "DEFAULT_PATIENCE", "DEFAULT_SEARCH_METRIC", "ESTIMATES", "MAX_CANDIDATES_PER_EVALUATION",
    "MAX_SCREEN", "OBJECTIVE_NAMES", "SAMPLERS", "STUDY_DEFINING", "SearchConfig", "SearchSettings",
    "check_run_folder", "default_target_recall", "parse_objectives", "parse_search_metric", "profile_digest",
]

_REGISTERED: dict[str, Any] = {"SPACES": space_names, "HARDWARE": hardware_choices, "FILTERS": FILTERS.names}
"""``SPACES``, ``HARDWARE`` and ``FILTERS`` are read from their registries when asked for (module
``__getattr__``), so a space, meter or filter registered later is a valid choice."""


def __getattr__(name: str) -> Any:
    """``SPACES``, ``HARDWARE``, ``FILTERS`` and ``DEFAULT_TARGET_RECALL``, read from the registries."""
    if name in _REGISTERED:
        return _REGISTERED[name]()
    if name == "DEFAULT_TARGET_RECALL":
        return default_target_recalls()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class SearchConfig(SearchSettings):
    """Everything one search run needs to know: the settings (`SearchSettings`, whose fields and
    defaults it has, documented there), with the study they name, their validation and their
    ``config.json`` form. A dataclass of its own (no fields added), so that it is as frozen as its
    fields are."""

    @property
    def resolved_study_name(self) -> str:
        """The study name: ``study_name`` when given, else `default_study_name`."""
        return resolved_study_name(self)

    @property
    def default_study_name(self) -> str:
        """A name made of the settings that define the study (`STUDY_DEFINING`), the sampler and the
        seed (`nasenergy.search.command.study_identity.default_study_name`): runs that differ in any of them
        never share a default study (or run folder)."""
        return default_study_name(self)

    @property
    def out_dir(self) -> Path:
        """The run folder."""
        return run_folder(self)

    def validate(self) -> "SearchConfig":
        """Check every value; return ``self``.

        Raises:
            UsageError: a value out of range or a bad combination, with a one-line message.
            DataNotFoundError: ``benchmark`` names a path that does not exist.
        """
        check_settings(self)
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict with the derived names filled in (``max_candidates`` stays
        ``None`` when not given: the effective cap depends on the meter, see
        `nasenergy.search.command.coverage.candidate_cap`)."""
        return settings_dict(self)

    def public_dict(self) -> dict[str, Any]:
        """`to_dict` with the storage URL's password masked: what ``config.json`` holds."""
        d = self.to_dict()
        d["storage"] = mask_url(self.storage)
        return d

    def study_defining(self) -> dict[str, Any]:
        """The fields of `STUDY_DEFINING` as a dict (objectives as a list)."""
        return study_defining(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SearchConfig":
        """Inverse of `to_dict`; unknown keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if "objectives" in kw:
            kw["objectives"] = tuple(kw["objectives"])
        if isinstance(kw.get("filter_features"), list):
            kw["filter_features"] = tuple(kw["filter_features"])
        kw.setdefault("filter_features", UNNAMED_FILTER_FEATURES)  # stored before the flag existed
        return cls(**kw)
