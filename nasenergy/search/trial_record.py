"""How a candidate is stored on its Optuna trial (user attributes) and read back as a CSV row.

User attributes of a candidate's trial (few, since each is one write to the storage; all JSON):

* ``candidate``: ``{"worker", "arch", "canonical", "arch_index"}``: who handles it and what it is.
* ``cheap``: ``{"measurement": Measurement.to_dict(), "decision": Decision.to_dict()}``: the
  cheap measurement at the default clock and the filter's decision.
* ``result``: ``{"evaluation": Evaluation.as_dict(), "scored": {...}, "dvfs": {...}}``: the full
  evaluation, the objective figures told to Optuna (by column, with their sources) and the
  energy-optimal clock (`dvfs_attrs`; absent with ``--dvfs none``).
* ``outcome``: see `nasenergy.search.run_files.OUTCOMES`; ``duplicate_of``: the trial whose
  result a duplicate repeats; ``error``: one line, for failed candidates.

optuna-dashboard shows them, and any process can rebuild the rows from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasenergy.measurement import COUNTER_FIELDS

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

    from nasenergy.measurement import Measurement

CANDIDATE, CHEAP, RESULT = "candidate", "cheap", "result"
OUTCOME, DUPLICATE_OF, ERROR = "outcome", "duplicate_of", "error"
IDENTITY_ATTRS: tuple[str, ...] = (CANDIDATE, OUTCOME, DUPLICATE_OF)
"""Attributes of the candidate itself; a duplicate copies every other attribute of the trial it
repeats."""


def candidate_attr(worker: str, arch: Any, canonical: str, arch_index: int) -> dict[str, Any]:
    """The ``candidate`` attribute."""
    return {"worker": worker, "arch": str(arch), "canonical": canonical, "arch_index": int(arch_index)}


def cheap_attr(measurement: "Measurement", decision: Any) -> dict[str, Any]:
    """The ``cheap`` attribute."""
    return {"measurement": measurement.to_dict(), "decision": decision.to_dict()}


def result_attr(
    evaluation: Any, scored: dict[str, Any], clock: Any, *, seed: int | None = None, final: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``result`` attribute (``clock``: an `OptimalClock` or ``None``; ``final``: the oracle's
    final reported `Evaluation.as_dict`, or ``{"error": ...}``)."""
    out = {"evaluation": evaluation.as_dict(), "seed": seed, "final": final or {}, "scored": scored}
    if clock is not None:
        out["dvfs"] = dvfs_attrs(clock)
    return out


def worker_of(trial: "FrozenTrial") -> str | None:
    """The id of the worker handling ``trial``, if it has said."""
    return (trial.user_attrs.get(CANDIDATE) or {}).get("worker")


def measurement_of(trial: "FrozenTrial") -> dict[str, Any] | None:
    """The stored cheap measurement of ``trial`` (a `Measurement.to_dict`), if any."""
    return (trial.user_attrs.get(CHEAP) or {}).get("measurement")


def scored_of(trial: "FrozenTrial") -> dict[str, Any]:
    """The objective figures told for ``trial`` (empty if none)."""
    return (trial.user_attrs.get(RESULT) or {}).get("scored") or {}


def dvfs_attrs(clock: Any) -> dict[str, Any]:
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
    """The ``candidates.csv`` row of one trial (see `nasenergy.search.run_files.CANDIDATE_COLUMNS`)."""
    a = trial.user_attrs
    who = a.get(CANDIDATE) or {}
    cheap = a.get(CHEAP) or {}
    m, d = cheap.get("measurement") or {}, cheap.get("decision") or {}
    result = a.get(RESULT) or {}
    e, c, s = result.get("evaluation") or {}, result.get("dvfs") or {}, result.get("scored") or {}
    f = result.get("final") or {}
    state = trial.state.name
    outcome = a.get(OUTCOME) or ("running" if state == "RUNNING" else "abandoned")
    return {
        "trial_number": trial.number,
        "state": state,
        "outcome": outcome,
        "duplicate_of": a.get(DUPLICATE_OF),
        "arch": who.get("arch"),
        "canonical": who.get("canonical"),
        "arch_index": who.get("arch_index"),
        "accuracy_pct": s.get("accuracy_pct"),
        "throughput_img_per_s": s.get("throughput_img_per_s"),
        "energy_j_per_img": s.get("energy_j_per_img"),
        "throughput_source": s.get("throughput_source"),
        "energy_source": s.get("energy_source"),
        "accuracy_source": e.get("source"),
        "accuracy_split": e.get("split"),
        "accuracy_schedule": e.get("schedule"),
        "accuracy_trial": e.get("trial"),
        "eval_seed": result.get("seed"),
        "eval_cost_s": e.get("cost_s"),
        "eval_cost_source": e.get("cost_source"),
        "final_accuracy_pct": f.get("accuracy_pct"),
        "final_split": f.get("split"),
        "final_schedule": f.get("schedule"),
        "final_trial": f.get("trial"),
        "final_source": f.get("source"),
        "final_error": f.get("error"),
        "measure_throughput_img_per_s": m.get("throughput_img_per_s"),
        "measure_energy_j_per_img": m.get("energy_j_per_img"),
        "measure_energy_basis": m.get("energy_basis"),
        "utilization": m.get("utilization"),
        "measured_network": m.get("network_form"),
        "flops_per_img_measured": m.get("flops_per_img"),
        "params_measured": m.get("params"),
        "flops_per_img_official": m.get("flops_per_img_official"),
        "params_official": m.get("params_official"),
        "memory_format": m.get("memory_format"),
        "counters_kind": m.get("counters_kind"),
        **{name: m.get(name) for name in COUNTER_FIELDS},
        "measure_device": m.get("device_name"),
        "measure_precision": m.get("precision"),
        "measure_batch_size": m.get("batch_size"),
        "measure_sm_clock_mhz": m.get("sm_clock_mhz"),
        "measure_cost_s": m.get("measure_cost_s"),
        "measure_source": m.get("source"),
        "filter_mode": d.get("mode"),
        "filter_admit": d.get("admit"),
        "filter_reason": d.get("reason"),
        "dvfs_source": c.get("source"),
        "optimal_sm_clock_mhz": c.get("optimal_sm_clock_mhz"),
        "default_sm_clock_mhz": c.get("default_sm_clock_mhz"),
        "default_energy_j_per_img": c.get("default_energy_j_per_img"),
        "energy_saving_pct": c.get("energy_saving_pct"),
        "dvfs_n_probes": c.get("n_probes"),
        "dvfs_caveat": c.get("caveat"),
        "dvfs_label": c.get("label") or c.get("source"),
        "energy_saving_low_pct": c.get("energy_saving_low_pct"),
        "energy_saving_high_pct": c.get("energy_saving_high_pct"),
        "worker": who.get("worker"),
        "datetime_start": trial.datetime_start.isoformat() if trial.datetime_start else None,
        "datetime_complete": trial.datetime_complete.isoformat() if trial.datetime_complete else None,
        "error": a.get(ERROR),
    }
