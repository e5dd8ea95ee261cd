"""``report.md``: a run's summary in Markdown, written from its candidate rows and config.

It states the budget used, how many candidates were seen, filtered, answered as duplicates or
outside a partial recorded profile (and that profile's coverage), the simulated cost of the full
evaluations against the cost of the cheap measurements, the final hypervolume (with its fixed
reference, see `nasenergy.search.objectives`), and the Pareto front's cells with their search and
final accuracies, energy-optimal clocks and energy saving. Every figure's provenance is named, and
the caveats (modelled clocks, extrapolated DVFS parameters) are spelled out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.boards import BoardCalibration
from nasenergy.hardware.coverage import Coverage
from nasenergy.objectives import SearchObjective, hypervolume_unit
from nasenergy.quality import DeployRegion
from nasenergy.run_quality import RunQuality, declared_floor, quality_unit, run_quality, run_region
from nasenergy.pareto import ParetoFront, points_of
from nasenergy.run_plots import dvfs_applied, plot_names

if TYPE_CHECKING:
    from nasenergy.protocols import RunView


def _sum(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    return float(sum(r[col] for r in rows if r.get(col) is not None))


def _by_source(rows: Sequence[Mapping[str, Any]], value_col: str, source_col: str) -> str:
    totals: dict[str, float] = {}
    for r in rows:
        if r.get(value_col) is not None:
            key = str(r.get(source_col) or "unknown")
            totals[key] = totals.get(key, 0.0) + float(r[value_col])
    return ", ".join(f"{_duration(v)} {k}" for k, v in sorted(totals.items())) or "none"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.2f} s"


def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _sources(rows: Sequence[Mapping[str, Any]], col: str) -> str:
    counts = Counter(str(r[col]) for r in rows if r.get(col))
    return ", ".join(f"{k} ({n})" for k, n in sorted(counts.items())) or "–"


def _parts(env: Mapping[str, Any], objectives: Sequence[str]) -> str:
    """The workers' parts (meter, oracle, DVFS), each distinct line once; the filter's energy
    bound only when energy is an objective."""
    seen: dict[str, None] = {}
    for info in (env.get("workers") or {}).values():
        for key, value in (info.get("parts") or {}).items():
            if "energy" not in objectives and "energy bound" in key:
                continue
            seen[f"{key} {value}"] = None
    return "; ".join(seen) or "–"


def _worker_field(env: Mapping[str, Any], key: str) -> Any:
    """The first worker's ``key`` in ``env.json`` (every worker of a run shares it), or ``None``."""
    for info in (env.get("workers") or {}).values():
        if info.get(key) is not None:
            return info[key]
    return None


def _metric(rows: Sequence[Mapping[str, Any]], split: str, schedule: str, trial: str | None = None) -> str:
    """E.g. ``x-valid, 12 epochs`` from the rows' split and schedule columns (``–`` if none)."""
    splits = sorted({str(r[split]) for r in rows if r.get(split)})
    schedules = sorted({str(r[schedule]) for r in rows if r.get(schedule)})
    if not splits:
        return "–"
    text = f"{'/'.join(splits)}, {'/'.join(schedules)} epochs"
    trials = sorted({str(r[trial]) for r in rows if trial and r.get(trial)})
    several = [t for t in trials if t.startswith("cells:")]
    single = [t for t in trials if not t.startswith("cells:")]
    parts = []
    if several:
        n_several = len([r for r in rows if str(r.get(trial, "")).startswith("cells:")])
        parts.append(f"the mean over the cells of the deployed network ({n_several} evaluations; each "
                     "cell's figure as below)")
    if single == ["mean"]:
        parts.append("mean over the recorded runs")
    elif len(single) == 1 and single[0].startswith("seed:"):
        parts.append(f"the recorded run of seed {single[0].split(':', 1)[1]}")
    elif single:
        parts.append("one recorded run drawn per evaluation")
    return text + "".join(f", {p}" for p in parts)


STOP_REASONS: dict[str, str] = {
    "budget": "the budget was spent",
    "max_candidates": "stopped at the candidate cap",
    "stalled": "stopped as stalled: the last `patience` candidates brought no new full evaluation",
    "exhausted": "stopped: every network the recorded profile holds had been seen",
    "interrupted": "interrupted; resume to continue",
    "worker_failed": "a worker process failed; resume to continue",
    "database": "the database stayed unreachable for longer than `--db-retry-s`; resume to continue",
}
"""How a run ended (``env.json``'s ``stop_reason``), in words."""


def _stop_clause(env: Mapping[str, Any]) -> str:
    reason = env.get("stop_reason")
    if reason is None:
        return ""
    return f" ({STOP_REASONS.get(str(reason), str(reason))})"


def _coverage_lines(env: Mapping[str, Any], outcomes: Counter) -> list[str]:
    raw = _worker_field(env, "coverage")
    if not raw:
        return []
    coverage = Coverage.from_dict(raw)
    if coverage.complete:
        return [f"- hardware profile: {coverage.summary()}"]
    return [
        f"- hardware profile: {coverage.summary()}; the search effectively ran over those. "
        f"{outcomes['not_recorded']} candidates fell outside it: they are listed as `not_recorded` in "
        "`candidates.csv`, were not measured, spent no budget and were told to the sampler as pruned"
    ]


def _filter_line(cfg: Mapping[str, Any], env: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                 at_optimal_clock: bool = True) -> str:
    decided = [r for r in rows if r.get("outcome") != "duplicate" and r.get("filter_admit") is not None]
    skipped = sum(1 for r in decided if r.get("filter_admit") is False)
    line = (f"- filter {cfg.get('filter')} (target recall {cfg.get('target_recall')}): skipped {skipped} of "
            f"{len(decided)} measured networks")
    parts = {}
    for info in (env.get("workers") or {}).values():
        parts.update(info.get("parts") or {})
    if "energy" in (cfg.get("objectives") or ()) and parts.get("filter energy bound"):
        at = " at the optimal clock" if at_optimal_clock else ""
        line += f"; its energy bound{at}: {parts['filter energy bound']}"
    groups = cfg.get("filter_features")
    if groups and (cfg.get("filter") == "dominance" or (cfg.get("screen") or 1) > 1):
        line += f"; accuracy model features (--filter-features): {','.join(map(str, groups))}"
    return line


REOPENED_TEXT = "was seen with budget left"
"""Part of the filter reason of a rejected network evaluated after all
(`nasenergy.search.filter_yield.REOPEN_REASON`)."""


RESCUE_ENV = "budget_rescue"
"""Key of ``env.json`` where a budget rescue began and what it did (`nasenergy.search.rescue`)."""
RESCUE_REDIRECT_AFTER, RESCUE_YIELD_AFTER = 2, 10
"""The settings a budget rescue switches on (`nasenergy.search.redirect.REDIRECT_AFTER`,
`nasenergy.search.filter_yield.YIELD_AFTER`; tests/test_report.py checks that they agree)."""


def _budget_keeping_lines(cfg: Mapping[str, Any], env: Mapping[str, Any],
                          evaluated: Sequence[Mapping[str, Any]]) -> list[str]:
    """How the run kept its budget spendable (`nasenergy.search.redirect`,
    `nasenergy.search.filter_yield`, `nasenergy.search.rescue`); nothing for a run whose config
    predates the settings."""
    if "redirect_after" not in cfg or "filter_yield_after" not in cfg:
        return []
    rescue = env.get(RESCUE_ENV)
    rescued = isinstance(rescue, Mapping) and "trial" in rescue
    rescue_on = bool(cfg.get("budget_rescue", False))

    def in_effect(value: Any, constant: int) -> tuple[int, str]:  # (value in effect at the end, from when)
        if value is not None:
            return int(value), ""
        if rescued and rescue_on:
            return constant, " (from the budget rescue on)"
        return 0, f" until a budget rescue (then {constant})" if rescue_on else ""

    redirect, redirect_when = in_effect(cfg["redirect_after"], RESCUE_REDIRECT_AFTER)
    after, after_when = in_effect(cfg["filter_yield_after"], RESCUE_YIELD_AFTER)
    redirect_text = (f"after {redirect} proposals of known networks in a row, unseen networks near the last "
                     f"one were enqueued{redirect_when}" if redirect > 0 else f"off{redirect_when}")
    lines = []
    if rescued and rescue_on:
        lines.append(f"- budget rescue: began after evaluation {int(rescue['evaluations'])} at candidate "
                     f"{int(rescue.get('candidates', 0))}; evaluations yielded {int(rescue.get('yielded', 0))}, "
                     f"redirected proposals {int(rescue.get('redirected', 0))}")
    if after > 0:
        reasons = [str(r.get("filter_reason") or "") for r in evaluated]
        yielded = sum(1 for reason in reasons if "the filter yields" in reason)
        reopened = sum(1 for reason in reasons if REOPENED_TEXT in reason)
        top = float(cfg.get("filter_yield_top") or 0.0)
        yield_text = (f"after {after} rejections in a row, to a candidate among the most promising {top:.0%} "
                      f"of them ({after * 3} rejections: the next one); {yielded} evaluations were yielded"
                      + (f", {reopened} of them on networks it had rejected (counted among the filtered "
                         "candidates too), evaluated once every network the profile holds was seen"
                         if reopened else "") + after_when)
    else:
        yield_text = f"off{after_when}"
    redirect_flag = f" (`--redirect-after {redirect}`)" if cfg["redirect_after"] is not None else ""
    after_flag = f" (`--filter-yield-after {after}`)" if cfg["filter_yield_after"] is not None else ""
    return [f"- budget keeping: redirection{redirect_flag} {redirect_text}; "
            f"the filter's yield{after_flag} {yield_text}", *lines]


def _band(r: Mapping[str, Any]) -> str:
    lo, hi = r.get("energy_saving_low_pct"), r.get("energy_saving_high_pct")
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "–"
    return f"{float(lo):.1f} to {float(hi):.1f}"


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


Column = tuple[str, str, Any]
"""A front table column: header, Markdown alignment, and the function giving a row's cell."""


def _front_columns(names: Sequence[str], with_dvfs: bool = True) -> list[Column]:
    """The Pareto front table's columns for a run with objectives ``names`` (the clock columns
    only ``with_dvfs``)."""
    columns: list[Column] = [
        ("trial", "---:", lambda r: str(r["trial_number"])),
        ("arch index", "---:", lambda r: _fmt(r.get("arch_index"), "d")),
        ("arch", "---", lambda r: f"`{r.get('arch')}`"),
        ("search acc %", "---:", lambda r: _fmt(r.get("accuracy_pct"), ".2f")),
        ("final acc %", "---:", lambda r: _fmt(r.get("final_accuracy_pct"), ".2f")),
    ]
    if "throughput" in names:
        columns.append(("img/s", "---:", lambda r: _fmt(r.get("throughput_img_per_s"), ",.0f")))
    if "energy" in names:
        columns.append(("J/img", "---:", lambda r: _fmt(r.get("energy_j_per_img"), ".3e")))
    if not with_dvfs:
        return columns
    columns += [
        ("optimal clock MHz", "---:", lambda r: _fmt(r.get("optimal_sm_clock_mhz"), ".0f")),
        ("default clock MHz", "---:", lambda r: _fmt(r.get("default_sm_clock_mhz"), ".0f")),
    ]
    if "energy" in names:
        columns.append(("energy saving %", "---:", lambda r: _fmt(r.get("energy_saving_pct"), ".1f")))
        columns.append(("saving band %", "---:", _band))
    columns.append(("clock from", "---", lambda r: str(r.get("dvfs_label") or r.get("dvfs_source") or "–")))
    return columns


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


# ------------------------------------------------------------------------------------- boards


def _board_of(r: Mapping[str, Any]) -> str | None:
    return r.get("measure_gpu_uuid") or None


def board_lines(measured: Sequence[Mapping[str, Any]], front: Sequence[Mapping[str, Any]],
                env: Mapping[str, Any] | None = None) -> list[str]:
    """The provenance lines on boards: how many boards measured the run and its front, the run's
    cross-board calibration (``env.json``'s ``boards``) and whether figures were normalised to a
    reference board; none where no measurement names its board and no calibration ran."""
    boards = Counter(b for b in map(_board_of, measured) if b)
    calibration = (env or {}).get("boards")
    cal_lines = []
    if calibration:
        try:
            summary = BoardCalibration.from_dict(calibration).summary()
        except NasEnergyError:
            summary = "unreadable"
        cal_lines.append(f"- board calibration (`--boards {calibration.get('policy')}`): {summary}")
    if not boards:
        return cal_lines
    on_front = {b for b in map(_board_of, front) if b}
    named = ", ".join(f"`{b[:12]}` ({n})" for b, n in sorted(boards.items()))
    lines = [f"- boards: {len(boards)} measured the candidates ({named}); {len(on_front)} measured the front"
             + (" (its table names each member's)" if len(on_front) > 1 else "")] + cal_lines
    refs = sorted({str(r["normalised_to_gpu_uuid"]) for r in measured if r.get("normalised_to_gpu_uuid")})
    if refs:
        n = sum(1 for r in measured if r.get("normalised_to_gpu_uuid"))
        lines.append(f"- cross-board calibration: the throughput and energy of {n} measurements were normalised "
                     f"to board {', '.join(f'`{x[:12]}`' for x in refs)} (divided by their board's ratios "
                     "on the reference networks; `board_*_ratio` in `candidates.csv`)")
    return lines


def board_columns(front: Sequence[Mapping[str, Any]]) -> list[Column]:
    """A ``board`` column for the front table when more than one board measured the front."""
    if len({b for b in map(_board_of, front) if b}) < 2:
        return []
    return [("board", "---", lambda r: f"`{str(_board_of(r) or '–')[:12]}`")]


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
    evaluated = record.evaluated
    front = sorted(record.front, key=lambda r: -(r.get("accuracy_pct") or 0.0))
    objectives = record.objectives
    names = [o.name for o in objectives]
    budget = cfg.get("budget")
    region = run_region(cfg, rows)
    quality = run_quality(region, evaluated, objectives) if region is not None else None
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
        f"filter {cfg.get('filter')} (target recall {cfg.get('target_recall')}), DVFS {cfg.get('dvfs')}, "
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
