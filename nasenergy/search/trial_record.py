"""How a candidate is stored on its Optuna trial (user attributes) and read back as a CSV row.

User attributes of a candidate's trial:

* ``worker``: the worker id that asked for it; ``arch``, ``canonical``, ``arch_index``.
* ``outcome``: see `nasenergy.search.run_files.OUTCOMES`; ``duplicate_of``: the trial whose
  result a duplicate repeats.
* ``measurement``: `Measurement.to_dict()` of the cheap measurement at the default clock.
* ``decision``: the filter's `Decision.to_dict()`.
* ``evaluation``: the accuracy oracle's `Evaluation.as_dict()`.
* ``dvfs``: the energy-optimal clock (`dvfs_attrs`), absent with ``--dvfs none``.
* ``scored``: the objective figures told to Optuna, by column, with their sources.
* ``error``: one line, for failed candidates.

The attributes are all JSON, so optuna-dashboard shows them and any process can rebuild the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

WORKER, ARCH, CANONICAL, ARCH_INDEX = "worker", "arch", "canonical", "arch_index"
OUTCOME, DUPLICATE_OF, ERROR = "outcome", "duplicate_of", "error"
MEASUREMENT, DECISION, EVALUATION, DVFS, SCORED = "measurement", "decision", "evaluation", "dvfs", "scored"
RESULT_ATTRS: tuple[str, ...] = (MEASUREMENT, DECISION, EVALUATION, DVFS, SCORED, ERROR)
"""The attributes a duplicate copies from the trial it repeats."""


def dvfs_attrs(clock: Any) -> dict[str, Any]:
    """The stored form of a `nasenergy.dvfs` optimal-clock result.

    Keys: ``source``, ``optimal_sm_clock_mhz``, ``default_sm_clock_mhz``,
    ``throughput_img_per_s`` and ``energy_j_per_img`` (at the optimal clock),
    ``default_energy_j_per_img``, ``energy_saving_pct``, ``n_probes``, ``caveat``.
    """
    best, default = clock.best, clock.default
    return {
        "source": str(clock.source),
        "optimal_sm_clock_mhz": float(best.sm_clock_mhz),
        "default_sm_clock_mhz": None if default is None else float(default.sm_clock_mhz),
        "throughput_img_per_s": float(best.throughput_img_per_s),
        "energy_j_per_img": float(best.energy_j_per_img),
        "default_energy_j_per_img": None if default is None else float(default.energy_j_per_img),
        "energy_saving_pct": _saving_pct(clock),
        "n_probes": int(clock.n_probes),
        "caveat": clock.caveat or None,
    }


def _saving_pct(clock: Any) -> float | None:
    best, default = clock.best, clock.default
    if default is None or not default.energy_j_per_img:
        return None
    return 100.0 * (1.0 - float(best.energy_j_per_img) / float(default.energy_j_per_img))


def row_from_trial(trial: "FrozenTrial") -> dict[str, Any]:
    """The ``candidates.csv`` row of one trial (see `nasenergy.search.run_files.CANDIDATE_COLUMNS`)."""
    a = trial.user_attrs
    m = a.get(MEASUREMENT) or {}
    d = a.get(DECISION) or {}
    e = a.get(EVALUATION) or {}
    c = a.get(DVFS) or {}
    s = a.get(SCORED) or {}
    state = trial.state.name
    outcome = a.get(OUTCOME) or ("running" if state == "RUNNING" else "abandoned")
    return {
        "trial_number": trial.number,
        "state": state,
        "outcome": outcome,
        "duplicate_of": a.get(DUPLICATE_OF),
        "arch": a.get(ARCH),
        "canonical": a.get(CANONICAL),
        "arch_index": a.get(ARCH_INDEX),
        "accuracy_pct": s.get("accuracy_pct"),
        "throughput_img_per_s": s.get("throughput_img_per_s"),
        "energy_j_per_img": s.get("energy_j_per_img"),
        "throughput_source": s.get("throughput_source"),
        "energy_source": s.get("energy_source"),
        "accuracy_source": e.get("source"),
        "accuracy_split": e.get("split"),
        "accuracy_schedule": e.get("schedule"),
        "accuracy_trial": e.get("trial"),
        "eval_cost_s": e.get("cost_s"),
        "eval_cost_source": e.get("cost_source"),
        "measure_throughput_img_per_s": m.get("throughput_img_per_s"),
        "measure_energy_j_per_img": m.get("energy_j_per_img"),
        "measure_energy_basis": m.get("energy_basis"),
        "utilization": m.get("utilization"),
        "flops_per_img": m.get("flops_per_img"),
        "params": m.get("params"),
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
        "worker": a.get(WORKER),
        "datetime_start": trial.datetime_start.isoformat() if trial.datetime_start else None,
        "datetime_complete": trial.datetime_complete.isoformat() if trial.datetime_complete else None,
        "error": a.get(ERROR),
    }
