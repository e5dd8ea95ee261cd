"""``report.md``: a run's summary in Markdown, written from its candidate rows and config.

It states the budget used, how many candidates were seen, filtered, answered as duplicates or
outside a partial recorded profile (and that profile's coverage), the simulated cost of the full
evaluations against the cost of the cheap measurements, the final hypervolume (with its fixed
reference, see `nasenergy.run.objectives`), and the Pareto front's cells with their search and
final accuracies, energy-optimal clocks and energy saving. Every figure's provenance is named, and
the caveats (modelled clocks, extrapolated DVFS parameters) are spelled out.

The sections live beside it: the budget and candidates lines in `nasenergy.run.report_budget`, the front
table and boards in `nasenergy.run.report_front`, the small text helpers in `nasenergy.run.report_text`; this
module assembles the report (`render_report`) with its quality and caveats lines, and re-exports the
sections' public names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nasenergy.filter.registry import takes_target_recall
from nasenergy.objectives import SearchObjective, hypervolume_unit
from nasenergy.pareto import ParetoFront, points_of
from nasenergy.quality import DeployRegion
from nasenergy.run.plots import dvfs_applied, plot_names
from nasenergy.run.quality import RunQuality, declared_floor, quality_unit, run_quality, run_region
from nasenergy.run.report_training import training_lines
from nasenergy.run.report_budget import (
    REOPENED_TEXT,
    RESCUE_ENV,
    RESCUE_REDIRECT_AFTER,
    RESCUE_YIELD_AFTER,
    STOP_REASONS,
    _budget_keeping_lines,
    _coverage_lines,
    _filter_line,
    _stop_clause,
)
from nasenergy.run.report_front import Column, _front_columns, board_columns, board_lines
from nasenergy.run.report_text import _by_source, _duration, _metric, _parts, _sources, _sum, _worker_field

if TYPE_CHECKING:
    from nasenergy.run.view import RunView

__all__ = [
    "REOPENED_TEXT", "RESCUE_ENV", "RESCUE_REDIRECT_AFTER", "RESCUE_YIELD_AFTER", "STOP_REASONS", "Column",
    "board_columns", "board_lines", "render_report",
]


def _recall_clause(cfg: Mapping[str, Any]) -> str:
    """`` (target recall R)`` for a filter that takes one; nothing for one that does not."""
    mode = cfg.get("filter")
    if isinstance(mode, str) and not takes_target_recall(mode):
        return ""
    return f" (target recall {cfg.get('target_recall')})"


def _caveats(rows: Sequence[Mapping[str, Any]], evaluated: Sequence[Mapping[str, Any]], hardware: str) -> list[str]:
    """The caveats of the figures; ``hardware`` names the run's hardware objectives (e.g.
    ``throughput and energy``)."""
    out = []
    measured = [r for r in rows if r.get("measure_source") and r.get("outcome") != "duplicate"]
    clocks = sorted({float(r["measure_sm_clock_mhz"]) for r in measured if r.get("measure_sm_clock_mhz")})
    devices = sorted({str(r["measure_device"]) for r in measured if r.get("measure_device")})
    dvfs = sorted({str(r["dvfs_source"]) for r in evaluated if r.get("dvfs_source")})
    if measured and dvfs and hardware:
        at = "/".join(f"{c:.0f}" for c in clocks) or "the default"
        out.append(
            f"- the cheap measurements ({_sources(measured, 'measure_source')} on {', '.join(devices)}) were taken "
            f"at the default SM clock ({at} MHz) only; {hardware} at every other clock, including each "
            f"network's energy-optimal clock, {'is' if ' and ' not in hardware else 'are'} {'/'.join(dvfs)}"
        )
    elif measured and hardware:
        out.append(f"- no DVFS step: {hardware} {'is' if ' and ' not in hardware else 'are'} scored at the "
                   "default clock, as measured")
    for caveat in sorted({str(r["dvfs_caveat"]) for r in evaluated if r.get("dvfs_caveat")}):
        out.append(f"- DVFS: {caveat}")
    return out


def _quality_lines(quality: RunQuality | None, region: DeployRegion | None, cfg: Mapping[str, Any],
                   objectives: Sequence[SearchObjective], n_evaluated: int) -> list[str]:
    """The report's quality section: the declared deploy region and the run's standing in it."""
    if quality is None or region is None:
        floor, why = declared_floor(cfg)
        return [f"- no quality measure: {why if floor is None else 'no candidate was measured'}"]
    names = [o.name for o in objectives]
    refs = []
    if "throughput" in names:
        refs.append(f"{region.throughput_ref_img_per_s:,.0f} img/s")
    if "energy" in names:
        refs.append(f"{region.energy_ref_j_per_img:.4g} J/img")
    share = "" if quality.largest_share != quality.largest_share else (
        f"; the largest share one network holds: {quality.largest_share:.0%}")
    return [
        f"- deploy hypervolume: **{quality.volume:.4g}** {quality_unit(objectives)} "
        f"(accuracy points above the floor x decades of hardware figures past the references)",
        f"- accuracy floor: {region.accuracy_floor_pct:.2f} % ({region.floor_from}); "
        + ("networks below it are infeasible and never stand on the front" if cfg.get("min_accuracy") is not None
           else "networks below it add nothing to the quality (without --min-accuracy they may stand on the front)"),
        *([f"- references: {', '.join(refs)} ({region.refs_from}), log scale"] if refs else []),
        f"- evaluated networks at or above the floor: {quality.in_region} of {n_evaluated}; on the front: "
        f"{quality.front_size}{share}",
    ]


def render_report(record: RunView, *, resume_command: str | None = None, dashboard_command: str | None = None) -> str:
    """The Markdown report of a run.

    Args:
        record: the run (config and candidate rows).
        resume_command: the command that continues the run, shown when given.
        dashboard_command: the optuna-dashboard command for the run's storage, shown when given.
    """
    cfg = record.config
    rows = record.rows
    outcomes = Counter(str(r.get("outcome")) for r in rows)
    run = record.run_front  # the evaluations, the front and the quality, once
    evaluated = run.evaluated
    front = run.members
    objectives = record.objectives
    names = [o.name for o in objectives]
    budget = cfg.get("budget")
    region, quality = run.region, run.quality
    filtered = [r for r in rows if r.get("outcome") == "filtered"]
    measured = [r for r in rows if r.get("outcome") != "duplicate" and r.get("measure_cost_s") is not None]
    mean_eval = _sum(evaluated, "eval_cost_s") / len(evaluated) if evaluated else 0.0
    final_missing = [r for r in evaluated if r.get("final_accuracy_pct") is None]
    cap = _worker_field(record.env, "candidate_cap")
    names = [o.name for o in objectives]
    hardware = " and ".join(n for n in ("throughput", "energy") if n in names)
    with_dvfs = dvfs_applied(evaluated)
    columns = _front_columns(names, with_dvfs) + board_columns(front)
    scored = "; ".join(f"scored {n}: {_sources(evaluated, n + '_source')}" for n in ("throughput", "energy")
                       if n in names) or "scored throughput and energy: not objectives of this run"

    lines = [
        f"# Search run `{record.name}`",
        "",
        f"- space **{cfg.get('space')}**, dataset **{cfg.get('dataset')}**, objectives "
        f"**{', '.join(o.name for o in objectives)}**; sampler {cfg.get('sampler')} (seed {cfg.get('seed')}), "
        f"filter {cfg.get('filter')}{_recall_clause(cfg)}, DVFS {cfg.get('dvfs')}, "
        f"hardware {cfg.get('hardware')}, {cfg.get('precision')} at batch {cfg.get('batch_size')}",
        "",
        "## Budget and candidates",
        "",
        f"- full accuracy evaluations: **{len(evaluated)} of {budget}**{_stop_clause(record.env)}",
        f"- candidates seen: {len(rows)}{f' (cap {cap:,})' if cap else ''}: filtered {outcomes['filtered']}, "
        f"duplicates {outcomes['duplicate']}, not recorded {outcomes['not_recorded']}, failed {outcomes['failed']}, "
        f"over budget {outcomes['over_budget']}, abandoned {outcomes['abandoned']}, running {outcomes['running']}"
        + (f", infeasible {outcomes['infeasible']} (cannot learn: output independent of the input; never evaluated)"
           if outcomes["infeasible"] else ""),
        f"- distinct networks measured: {len({r.get('network') or r.get('canonical') for r in measured})}",
        *_coverage_lines(record.env, outcomes),
        _filter_line(cfg, record.env, rows, with_dvfs),
        *_budget_keeping_lines(cfg, record.env, evaluated),
        "",
        "## Cost",
        "",
        f"- full evaluations: {_duration(_sum(evaluated, 'eval_cost_s'))} "
        f"({_by_source(evaluated, 'eval_cost_s', 'eval_cost_source')}; simulated from the benchmark's "
        "records where the source says `recorded`)",
        *training_lines(evaluated, filtered),
        f"- cheap measurements: {_duration(_sum(measured, 'measure_cost_s'))} "
        f"({_by_source(measured, 'measure_cost_s', 'measure_source')}) over {len(measured)} candidates",
        *([f"- evaluation time the filter avoided: ≈ {_duration(mean_eval * len(filtered))} (estimated: "
           f"{len(filtered)} filtered candidates × the mean evaluation cost {_duration(mean_eval)})"]
          if filtered and mean_eval > 0 else []),
        "",
        "## Quality",
        "",
        *_quality_lines(quality, region, cfg, objectives, len(evaluated)),
        "",
        "## Provenance",
        "",
        f"- parts: {_parts(record.env, names)}",
        f"- cheap measurement: {_sources(measured, 'measure_source')} on {_sources(measured, 'measure_device')}",
        *board_lines(measured, front, record.env),
        f"- accuracy objective (the search metric): {_sources(evaluated, 'accuracy_source')}, "
        f"{_metric(evaluated, 'accuracy_split', 'accuracy_schedule', 'accuracy_trial')}",
        f"- final accuracy (reported, never searched on): {_sources(evaluated, 'final_source')}, "
        f"{_metric(evaluated, 'final_split', 'final_schedule', 'final_trial')}"
        + (f"; unavailable for {len(final_missing)} evaluations ({final_missing[0].get('final_error') or 'no value'})"
           if final_missing else ""),
        (f"- optimal clock (DVFS): "
         f"{_sources([{**r, 'dvfs_label': r.get('dvfs_label') or r.get('dvfs_source')} for r in evaluated], 'dvfs_label')}"
         if with_dvfs else "- DVFS: none applied; every figure is at the default clock"),
        f"- {scored}",
        "",
        "## Caveats",
        "",
        *(_caveats(rows, evaluated, hardware) or ["- none"]),
        "",
        f"## Pareto front ({len(front)} cells)",
        "",
        f"Search accuracy: {_metric(evaluated, 'accuracy_split', 'accuracy_schedule')} (the objective); final "
        f"accuracy: {_metric(evaluated, 'final_split', 'final_schedule')}."
        + (f" {hardware.capitalize()} at each cell's optimal clock." if hardware and with_dvfs else "")
        + (f" {hardware.capitalize()} at the default clock, as measured (no DVFS step)."
           if hardware and not with_dvfs else "")
        + (" The energy saving is against the default clock; its band is the model's when the network's "
           "clock sensitivity is off by its calibration residual (and, for the generic model, with each "
           "calibrated GPU's shape in turn). The clock comes from a measured sweep (`measured`), a model "
           "calibrated on measured sweeps of this GPU (`modelled (calibrated)`), one carried over from "
           "another GPU (`modelled (extrapolated)`) or the generic model built from what NVML reports "
           "(`modelled (generic)`)." if "energy" in names and with_dvfs else ""),
        "",
        "| " + " | ".join(c[0] for c in columns) + " |",
        "| " + " | ".join(c[1] for c in columns) + " |",
    ]
    for r in front:
        lines.append("| " + " | ".join(c[2](r) for c in columns) + " |")
    files = ["`candidates.csv` (every candidate)", *(f"`{f}`" for f in ("pareto_front.csv", "config.json", "env.json",
                                                                      *plot_names(objectives)))]
    lines += ["", "## Files", "", ", ".join(files) + " (each plot also as a PDF beside its PNG)."]
    if resume_command:
        lines += ["", f"Resume or extend (a larger `--budget`): `{resume_command}`"]
    if dashboard_command:
        lines += ["", f"Browse the study: `{dashboard_command}`"]
    return "\n".join(lines) + "\n"
