"""How a filter decision is recorded on an Optuna trial: one representation for every caller.

A candidate's cheap measurement and the filter's decision are stored together in one JSON user
attribute (one write to the storage)::

    trial.user_attrs["cheap"] == {"measurement": Measurement.to_dict(), "decision": Decision.to_dict()}

Both `nasenergy.filter.FilteredObjective` (and `filter_trial` / `apply_decision`) and the search
pipeline (`nasenergy.search`) write it with `record_decision`; `decision_of` and `measurement_of`
read it back. Trials recorded by earlier versions of the Optuna helpers, with flat
``filter_<field>`` and ``measurement`` attributes, are still read.

Works with any trial object that has ``set_user_attr`` (writing) or ``user_attrs`` (reading);
Optuna itself is not imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nasenergy.filter.records import Decision
from nasenergy.measurement import Measurement

if TYPE_CHECKING:
    from optuna.trial import Trial

__all__ = ["CHEAP_ATTR", "cheap_attr", "decision_of", "measurement_of", "record_decision"]

CHEAP_ATTR = "cheap"
"""The user attribute holding ``{"measurement": ..., "decision": ...}``."""

LEGACY_DECISION_PREFIX = "filter_"
"""Prefix of the flat decision attributes of earlier versions (``filter_admit``, ...), still read."""
LEGACY_MEASUREMENT_ATTR = "measurement"
"""The flat measurement attribute of earlier versions, still read."""


def cheap_attr(measurement: Measurement | None, decision: Decision) -> dict[str, Any]:
    """The ``cheap`` attribute's value (``measurement`` is ``None`` when there is none)."""
    return {"measurement": None if measurement is None else measurement.to_dict(), "decision": decision.to_dict()}


def record_decision(trial: Trial, decision: Decision, measurement: Measurement | None = None) -> Decision:
    """Store a decision and the measurement behind it as the trial's ``cheap`` user attribute.

    Args:
        trial: anything with ``set_user_attr`` (an Optuna trial).
        decision: the filter's decision.
        measurement: the cheap measurement it was made from, if any.

    Returns:
        ``decision``, unchanged.
    """
    trial.set_user_attr(CHEAP_ATTR, cheap_attr(measurement, decision))
    return decision


def _attrs(trial_or_attrs: Any) -> Mapping[str, Any]:
    return trial_or_attrs if isinstance(trial_or_attrs, Mapping) else trial_or_attrs.user_attrs


def decision_of(trial_or_attrs: Any) -> dict[str, Any] | None:
    """The stored decision (a `Decision.to_dict`) of a trial or of its user attributes, if any.

    Reads the ``cheap`` attribute, else the flat ``filter_<field>`` attributes of earlier versions.
    """
    attrs = _attrs(trial_or_attrs)
    cheap = attrs.get(CHEAP_ATTR)
    if isinstance(cheap, Mapping) and cheap.get("decision") is not None:
        return dict(cheap["decision"])
    legacy = {k[len(LEGACY_DECISION_PREFIX):]: v for k, v in attrs.items() if k.startswith(LEGACY_DECISION_PREFIX)}
    return legacy or None


def measurement_of(trial_or_attrs: Any) -> dict[str, Any] | None:
    """The stored cheap measurement (a `Measurement.to_dict`) of a trial or its user attributes.

    Reads the ``cheap`` attribute, else the flat ``measurement`` attribute of earlier versions.
    """
    attrs = _attrs(trial_or_attrs)
    cheap = attrs.get(CHEAP_ATTR)
    if isinstance(cheap, Mapping) and "decision" in cheap:
        return cheap.get("measurement")
    legacy = attrs.get(LEGACY_MEASUREMENT_ATTR)
    return dict(legacy) if isinstance(legacy, Mapping) else None
