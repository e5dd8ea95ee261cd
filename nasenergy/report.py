"""``report.md``: a run's summary in Markdown, written from its candidate rows and config.

It states the budget used, how many candidates were seen, filtered and answered as duplicates, the
simulated cost of the full evaluations against the cost of the cheap measurements, the final
hypervolume (with its fixed reference, see `nasenergy.search.objectives`), and the Pareto front's
cells with their energy-optimal clocks and energy saving. Every figure's provenance is named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.search.objectives import hv_hypervolume, points_of
from nasenergy.search.run_files import RunRecord


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


def _parts(env: Mapping[str, Any]) -> str:
    """The workers' parts (meter, oracle, DVFS), each distinct line once."""
    seen: dict[str, None] = {}
    for info in (env.get("workers") or {}).values():
        for key, value in (info.get("parts") or {}).items():
            seen[f"{key} {value}"] = None
    return "; ".join(seen) or "–"


def render_report(record: RunRecord, *, resume_command: str | None = None, dashboard_command: str | None = None) -> str:
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
    budget = cfg.get("budget")
    hv = hv_hypervolume(points_of(evaluated, objectives), objectives)
    filtered = [r for r in rows if r.get("outcome") == "filtered"]
    measured = [r for r in rows if r.get("outcome") != "duplicate" and r.get("measure_cost_s") is not None]
    mean_eval = _sum(evaluated, "eval_cost_s") / len(evaluated) if evaluated else 0.0

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
        f"- full accuracy evaluations: **{len(evaluated)} of {budget}**",
        f"- candidates seen: {len(rows)} (filtered {outcomes['filtered']}, duplicates {outcomes['duplicate']}, "
        f"failed {outcomes['failed']}, over budget {outcomes['over_budget']}, abandoned {outcomes['abandoned']}, "
        f"running {outcomes['running']})",
        f"- distinct networks measured: {len({r.get('canonical') for r in measured})}",
        "",
        "## Cost",
        "",
        f"- full evaluations: {_duration(_sum(evaluated, 'eval_cost_s'))} "
        f"({_by_source(evaluated, 'eval_cost_s', 'eval_cost_source')}; simulated from the benchmark's "
        "records where the source says `recorded`)",
        f"- cheap measurements: {_duration(_sum(measured, 'measure_cost_s'))} "
        f"({_by_source(measured, 'measure_cost_s', 'measure_source')}) over {len(measured)} candidates",
        f"- evaluation time the filter avoided: ≈ {_duration(mean_eval * len(filtered))} (estimated: "
        f"{len(filtered)} filtered candidates × the mean evaluation cost {_duration(mean_eval)})",
        "",
        "## Hypervolume",
        "",
        f"- final hypervolume: **{hv:.6g}** over {len(evaluated)} evaluations",
        "- reference point: 0 for every objective, with energy taken as efficiency (img/J = 1 / energy); "
        "fixed for every run, so curves of different runs compare directly",
        "",
        "## Provenance",
        "",
        f"- parts: {_parts(record.env)}",
        f"- cheap measurement: {_sources(measured, 'measure_source')} on {_sources(measured, 'measure_device')}",
        f"- accuracy: {_sources(evaluated, 'accuracy_source')}, split {_sources(evaluated, 'accuracy_split')}, "
        f"schedule {_sources(evaluated, 'accuracy_schedule')} epochs",
        f"- optimal clock (DVFS): {_sources(evaluated, 'dvfs_source')}",
        f"- scored throughput: {_sources(evaluated, 'throughput_source')}; scored energy: "
        f"{_sources(evaluated, 'energy_source')}",
        "",
        f"## Pareto front ({len(front)} cells)",
        "",
        "| trial | arch index | arch | accuracy % | img/s | J/img | optimal clock MHz | default clock MHz | energy saving % | DVFS source |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in front:
        lines.append(
            f"| {r['trial_number']} | {_fmt(r.get('arch_index'), 'd')} | `{r.get('arch')}` | "
            f"{_fmt(r.get('accuracy_pct'), '.2f')} | {_fmt(r.get('throughput_img_per_s'), ',.0f')} | "
            f"{_fmt(r.get('energy_j_per_img'), '.3e')} | {_fmt(r.get('optimal_sm_clock_mhz'), '.0f')} | "
            f"{_fmt(r.get('default_sm_clock_mhz'), '.0f')} | {_fmt(r.get('energy_saving_pct'), '.1f')} | "
            f"{r.get('dvfs_source') or '–'} |"
        )
    caveats = sorted({str(r['dvfs_caveat']) for r in evaluated if r.get("dvfs_caveat")})
    if caveats:
        lines += ["", "DVFS caveats: " + "; ".join(caveats)]
    lines += ["", "## Files", "", "`candidates.csv` (every candidate), `pareto_front.csv`, `config.json`, `env.json`, "
              "`pareto_projections.png`, `pareto_3d.png`, `hypervolume.png`."]
    if resume_command:
        lines += ["", f"Resume or extend (a larger `--budget`): `{resume_command}`"]
    if dashboard_command:
        lines += ["", f"Browse the study: `{dashboard_command}`"]
    return "\n".join(lines) + "\n"
