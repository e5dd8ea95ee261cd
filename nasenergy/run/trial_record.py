"""How a candidate is stored on its Optuna trial (user attributes) and read back as a CSV row.

User attributes of a candidate's trial (few, since each is one write to the storage; all JSON):

* ``candidate``: ``{"worker", "arch", "canonical", "arch_index", "network"}``: who handles it and
  what it is (``network``: the study's key of its network, `nasenergy.run.network_key`; older
  studies lack it, and their key is ``canonical``).
* ``cheap``: ``{"measurement": Measurement.to_dict(), "decision": Decision.to_dict()}``: the
  cheap measurement at the default clock and the filter's decision, written by
  `nasenergy.filter.trial_attrs.record_decision` (the representation the filter's Optuna helpers
  use too).
* ``result``: ``{"evaluation": Evaluation.as_dict(), "scored": {...}, "dvfs": {...}}``: the full
  evaluation, the objective figures told to Optuna (by column, with their sources) and the
  energy-optimal clock (`dvfs_attrs`; absent with ``--dvfs none``).
* ``outcome``: see `nasenergy.run.outcomes`; ``duplicate_of``: the trial whose
  result a duplicate repeats; ``error``: one line, for failed candidates.

optuna-dashboard shows them, and any process can rebuild the rows from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nasenergy.filter.trial_attrs import CHEAP_ATTR
from nasenergy.filter.trial_attrs import measurement_of as _stored_measurement
from nasenergy.run import outcomes as oc
from nasenergy.run.candidate_schema import CANDIDATE_SCHEMA
from search_spaces import Arch

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

    from nasenergy.dvfs.points import OptimalClock
    from nasenergy.oracles.evaluation import Evaluation
    from nasenergy.run.record import ScoredFigures

CANDIDATE, CHEAP, RESULT = "candidate", CHEAP_ATTR, "result"
OUTCOME, DUPLICATE_OF, ERROR = "outcome", "duplicate_of", "error"
IDENTITY_ATTRS: tuple[str, ...] = (CANDIDATE, OUTCOME, DUPLICATE_OF)
"""Attributes of the candidate itself; a duplicate copies every other attribute of the trial it
repeats."""


def candidate_attr(worker: str, arch: Arch, canonical: str, arch_index: int, network: str | None = None) -> dict[str, Any]:
    """The ``candidate`` attribute (``network`` defaults to ``canonical``)."""
    return {"worker": worker, "arch": str(arch), "canonical": canonical, "arch_index": int(arch_index),
            "network": canonical if network is None else network}


def network_of(candidate: dict[str, Any]) -> str:
    """The network key of a ``candidate`` attribute (its canonical class in older studies)."""
    return candidate.get("network") or candidate["canonical"]


def result_attr(
    evaluation: Evaluation, scored: ScoredFigures, clock: OptimalClock | None, *, seed: int | None = None, final: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``result`` attribute (``clock``: an `OptimalClock` or ``None``; ``final``: the oracle's
    final reported `Evaluation.as_dict`, or ``{"error": ...}``)."""
    out = {"evaluation": evaluation.as_dict(), "seed": seed, "final": final or {}, "scored": scored.as_attr()}
    if clock is not None:
        out["dvfs"] = dvfs_attrs(clock)
    return out


def worker_of(trial: "FrozenTrial") -> str | None:
    """The id of the worker handling ``trial``, if it has said."""
    return (trial.user_attrs.get(CANDIDATE) or {}).get("worker")


def measurement_of(trial: "FrozenTrial") -> dict[str, Any] | None:
    """The stored cheap measurement of ``trial`` (a `Measurement.to_dict`), if any."""
    return _stored_measurement(trial)


def scored_of(trial: "FrozenTrial") -> dict[str, Any]:
    """The objective figures told for ``trial`` (empty if none)."""
    return (trial.user_attrs.get(RESULT) or {}).get("scored") or {}


def dvfs_attrs(clock: OptimalClock) -> dict[str, Any]:
    """The stored form of a `nasenergy.dvfs.OptimalClock`.

    Keys: ``source``, ``mode``, ``optimal_sm_clock_mhz``, ``default_sm_clock_mhz``,
    ``throughput_img_per_s`` and ``energy_j_per_img`` (at the optimal clock),
    ``default_energy_j_per_img``, ``energy_saving_pct``, ``n_probes``, ``caveat``, ``label``
    (``measured``, ``modelled (calibrated)``, ``modelled (generic)``, ...) and
    ``energy_saving_low_pct`` / ``energy_saving_high_pct`` (the model's band; ``None`` if none).
    """
    band = getattr(clock, "saving_band_frac", None)
    return {
        "source": str(clock.source),
        "mode": str(clock.mode),
        "optimal_sm_clock_mhz": float(clock.best.sm_clock_mhz),
        "default_sm_clock_mhz": float(clock.default.sm_clock_mhz),
        "throughput_img_per_s": float(clock.best.throughput_img_per_s),
        "energy_j_per_img": float(clock.best.energy_j_per_img),
        "default_energy_j_per_img": float(clock.default.energy_j_per_img),
        "energy_saving_pct": 100.0 * float(clock.energy_saving_frac),
        "n_probes": int(clock.n_probes),
        "caveat": clock.caveat or None,
        "label": str(getattr(clock, "label", clock.source)),
        "energy_saving_low_pct": None if band is None else 100.0 * float(band[0]),
        "energy_saving_high_pct": None if band is None else 100.0 * float(band[1]),
    }


def row_from_trial(trial: "FrozenTrial") -> dict[str, Any]:
    """The ``candidates.csv`` row of one trial, by `nasenergy.run.candidate_schema.CANDIDATE_SCHEMA`
    (the ``run`` columns are ``None`` until the run's files are written)."""
    a = trial.user_attrs
    cheap = a.get(CHEAP) or {}
    result = a.get(RESULT) or {}
    dvfs = result.get("dvfs") or {}
    state = trial.state.name
    sections: dict[str, Mapping[str, Any]] = {
        "attrs": a,
        "candidate": a.get(CANDIDATE) or {},
        "measurement": cheap.get("measurement") or {},
        "decision": cheap.get("decision") or {},
        "result": result,
        "evaluation": result.get("evaluation") or {},
        "dvfs": dvfs,
        "scored": result.get("scored") or {},
        "final": result.get("final") or {},
    }
    derived = {
        "trial_number": trial.number,
        "state": state,
        "outcome": a.get(OUTCOME) or (oc.RUNNING if state == "RUNNING" else oc.ABANDONED),
        "dvfs_label": dvfs.get("label") or dvfs.get("source"),
        "datetime_start": trial.datetime_start.isoformat() if trial.datetime_start else None,
        "datetime_complete": trial.datetime_complete.isoformat() if trial.datetime_complete else None,
    }
    row: dict[str, Any] = {}
    for column in CANDIDATE_SCHEMA:
        if column.section == "derived":
            row[column.name] = derived[column.name]
        elif column.section == "run":
            row[column.name] = None
        else:
            row[column.name] = sections[column.section].get(column.source_key)
    return row
