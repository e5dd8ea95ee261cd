"""Utilization filters: decide from a cheap measurement whether a candidate deserves a full evaluation.

Works on any `torch.nn.Module` measured by a `nasenergy.hardware` meter (or any `Measurement`);
it knows nothing of a particular search space.

* `ThresholdFilter` (mode ``threshold``): admit when utilization ≥ τ, τ calibrated for a target
  recall of good candidates.
* `DominanceFilter` (mode ``dominance``): predict accuracy with conformal bounds and skip only
  candidates whose optimistic figures the current Pareto front already dominates.
* `PassThroughFilter` (mode ``none``): admit everything.

Extension: `CandidateFilter` (the protocol the search uses), `FilterKind` and `register_filter`
(`nasenergy.filter.registry`: a new mode is one registration). Extra features: `feature_set` joins
named feature providers (`nasenergy.filter.feature_providers`: the space's structure, zero-cost
proxies recorded or live; `register_feature_provider` adds one).

Optuna helpers: `filter_trial`, `apply_decision`, `FilteredObjective`, `CompleteTrialBudget`; a
decision is recorded on its trial by `record_decision` and read back by `decision_of` /
`measurement_of` (one ``cheap`` user attribute, shared with the search).
"""

from nasenergy.filter.base import MODES, PassThroughFilter, UtilizationFilter
from nasenergy.filter.threshold_calibration import ThresholdCalibration, calibrate_threshold, clopper_pearson_lower
from nasenergy.filter.conformal import ESTIMATORS, AccuracyInterval, CVPlusRegressor
from nasenergy.filter.dominance import AccuracyEstimate, DominanceFilter
from nasenergy.filter.energy_bound import (
    DEFAULT_ENERGY_FACTOR,
    EnergyBound,
    OptimisticFigures,
    ScaledBound,
)
from nasenergy.filter.feature_providers import (
    FeatureProviderKind,
    FeatureSet,
    feature_provider,
    feature_set,
    register_feature_provider,
)
from nasenergy.filter.features import CHEAP_FEATURE_NAMES, cheap_features
from nasenergy.filter.optuna_adapter import (
    DUPLICATE_ATTR,
    Candidate,
    CompleteTrialBudget,
    FilteredObjective,
    apply_decision,
    filter_trial,
)
from nasenergy.filter.protocol import CandidateFilter
from nasenergy.filter.records import DEFAULT_OBJECTIVES, OBJECTIVE_SENSES, Decision, FilterError, Observation
from nasenergy.filter.registry import FilterKind, register_filter
from nasenergy.filter.synthetic import synthetic_observations
from nasenergy.filter.threshold import ThresholdFilter, good_mask
from nasenergy.filter.trial_attrs import CHEAP_ATTR, decision_of, measurement_of, record_decision

__all__ = [
    "CHEAP_ATTR",
    "CHEAP_FEATURE_NAMES",
    "DEFAULT_ENERGY_FACTOR",
    "DEFAULT_OBJECTIVES",
    "DUPLICATE_ATTR",
    "ESTIMATORS",
    "MODES",
    "OBJECTIVE_SENSES",
    "AccuracyEstimate",
    "AccuracyInterval",
    "CandidateFilter",
    "CVPlusRegressor",
    "Candidate",
    "CompleteTrialBudget",
    "Decision",
    "DominanceFilter",
    "EnergyBound",
    "FeatureProviderKind",
    "FeatureSet",
    "FilterError",
    "FilterKind",
    "FilteredObjective",
    "Observation",
    "OptimisticFigures",
    "PassThroughFilter",
    "ScaledBound",
    "ThresholdCalibration",
    "ThresholdFilter",
    "UtilizationFilter",
    "apply_decision",
    "calibrate_threshold",
    "cheap_features",
    "decision_of",
    "feature_provider",
    "feature_set",
    "clopper_pearson_lower",
    "filter_trial",
    "good_mask",
    "measurement_of",
    "record_decision",
    "register_feature_provider",
    "register_filter",
    "synthetic_observations",
]
