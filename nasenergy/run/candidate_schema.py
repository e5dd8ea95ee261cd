"""The candidate schema: the one declaration of the columns of ``candidates.csv`` and
``pareto_front.csv``, their types and where each value is stored on the candidate's trial.

A column's ``section`` names where `nasenergy.run.trial_record.row_from_trial` reads it:

* ``candidate``, ``measurement``, ``decision``, ``result``, ``evaluation``, ``dvfs``, ``scored``,
  ``final``: a key of that part of the trial's user attributes (`nasenergy.run.trial_record`);
* ``attrs``: a user attribute of the trial itself (``duplicate_of``, ``error``);
* ``derived``: computed from the trial (its number, state, outcome, times, the DVFS label);
* ``run``: set over the whole run when the files are written (``evaluation_number``, ``on_front``).
"""

from __future__ import annotations

from dataclasses import dataclass

from nasenergy.measurement import COUNTER_FIELDS

__all__ = ["CANDIDATE_COLUMNS", "CANDIDATE_SCHEMA", "COLUMN_TYPES", "Column"]

COLUMN_TYPES: tuple[str, ...] = ("int", "float", "bool", "str")


@dataclass(frozen=True)
class Column:
    """One column of the candidate files.

    Attributes:
        name: the column name, with its unit.
        kind: ``int``, ``float``, ``bool`` or ``str`` (how a cell is read back).
        section: where its value is stored (see the module docstring).
        key: the key in ``section`` (default: ``name``).
    """

    name: str
    kind: str
    section: str
    key: str | None = None

    @property
    def source_key(self) -> str:
        """The key its value is stored under."""
        return self.key or self.name


CANDIDATE_SCHEMA: tuple[Column, ...] = (
    Column("trial_number", "int", "derived"),
    Column("state", "str", "derived"),
    Column("outcome", "str", "derived"),
    Column("duplicate_of", "int", "attrs"),
    Column("evaluation_number", "int", "run"),
    Column("on_front", "bool", "run"),
    Column("arch", "str", "candidate"),
    Column("canonical", "str", "candidate"),
    Column("network", "str", "candidate"),
    Column("arch_index", "int", "candidate"),
    Column("accuracy_pct", "float", "scored"),
    Column("throughput_img_per_s", "float", "scored"),
    Column("energy_j_per_img", "float", "scored"),
    Column("throughput_source", "str", "scored"),
    Column("energy_source", "str", "scored"),
    Column("accuracy_source", "str", "evaluation", "source"),
    Column("accuracy_split", "str", "evaluation", "split"),
    Column("accuracy_schedule", "str", "evaluation", "schedule"),
    Column("accuracy_trial", "str", "evaluation", "trial"),
    Column("eval_seed", "int", "result", "seed"),
    Column("eval_cost_s", "float", "evaluation", "cost_s"),
    Column("eval_cost_source", "str", "evaluation", "cost_source"),
    Column("train_energy_j", "float", "evaluation"),
    Column("train_energy_source", "str", "evaluation"),
    Column("train_images_per_s", "float", "evaluation"),
    Column("train_peak_memory_mib", "float", "evaluation"),
    Column("train_test_accuracy_pct", "float", "evaluation"),
    Column("train_epochs", "int", "evaluation"),
    Column("train_resumed_from_epoch", "int", "evaluation"),
    Column("train_device", "str", "evaluation"),
    Column("final_accuracy_pct", "float", "final", "accuracy_pct"),
    Column("final_split", "str", "final", "split"),
    Column("final_schedule", "str", "final", "schedule"),
    Column("final_trial", "str", "final", "trial"),
    Column("final_source", "str", "final", "source"),
    Column("final_error", "str", "final", "error"),
    Column("measure_throughput_img_per_s", "float", "measurement", "throughput_img_per_s"),
    Column("measure_energy_j_per_img", "float", "measurement", "energy_j_per_img"),
    Column("measure_energy_basis", "str", "measurement", "energy_basis"),
    Column("measure_energy_reading", "str", "measurement", "energy_reading"),
    Column("utilization", "float", "measurement"),
    Column("measured_network", "str", "measurement", "network_form"),
    Column("flops_per_img_measured", "float", "measurement", "flops_per_img"),
    Column("params_measured", "int", "measurement", "params"),
    Column("flops_per_img_official", "float", "measurement"),
    Column("params_official", "int", "measurement"),
    Column("memory_format", "str", "measurement"),
    Column("counters_kind", "str", "measurement"),
    *(Column(name, "float", "measurement") for name in COUNTER_FIELDS),
    Column("measure_device", "str", "measurement", "device_name"),
    Column("measure_precision", "str", "measurement", "precision"),
    Column("measure_batch_size", "int", "measurement", "batch_size"),
    Column("measure_sm_clock_mhz", "float", "measurement", "sm_clock_mhz"),
    Column("measure_gpu_uuid", "str", "measurement", "gpu_uuid"),
    Column("measure_driver_version", "str", "measurement", "driver_version"),
    Column("measure_power_limit_w", "float", "measurement", "power_limit_w"),
    Column("normalised_to_gpu_uuid", "str", "measurement"),
    Column("board_throughput_ratio", "float", "measurement"),
    Column("board_energy_ratio", "float", "measurement"),
    Column("measure_cost_s", "float", "measurement"),
    Column("measure_source", "str", "measurement", "source"),
    Column("filter_mode", "str", "decision", "mode"),
    Column("filter_admit", "bool", "decision", "admit"),
    Column("filter_reason", "str", "decision", "reason"),
    Column("dvfs_source", "str", "dvfs", "source"),
    Column("optimal_sm_clock_mhz", "float", "dvfs"),
    Column("default_sm_clock_mhz", "float", "dvfs"),
    Column("default_energy_j_per_img", "float", "dvfs"),
    Column("energy_saving_pct", "float", "dvfs"),
    Column("dvfs_n_probes", "int", "dvfs", "n_probes"),
    Column("dvfs_caveat", "str", "dvfs", "caveat"),
    Column("dvfs_label", "str", "derived"),
    Column("energy_saving_low_pct", "float", "dvfs"),
    Column("energy_saving_high_pct", "float", "dvfs"),
    Column("worker", "str", "candidate"),
    Column("datetime_start", "str", "derived"),
    Column("datetime_complete", "str", "derived"),
    Column("error", "str", "attrs"),
)
"""Every column, in the files' order."""

CANDIDATE_COLUMNS: dict[str, str] = {c.name: c.kind for c in CANDIDATE_SCHEMA}
"""column -> type (``int``, ``float``, ``bool`` or ``str``), in the files' order."""
