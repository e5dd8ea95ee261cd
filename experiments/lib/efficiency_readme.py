"""Search efficiency, part 5: the README it writes (see ``experiments/search_efficiency.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lib.efficiency_front import (
    PRIMARY,
    RECALL_ACCURACY_PP,
    RECALL_HARDWARE_REL,
    SCREEN,
    TARGET_RECALL,
    WARMUP_FACTOR,
    YARDSTICKS,
    Subspace,
    front_contributions,
)
from lib.efficiency_runs import TIMINGS_CSV
from nasenergy.hardware.coverage import CLASS_UNIT
from nasenergy.search.command.config import DEFAULT_TARGET_RECALL

# ---------------------------------------------------------------------------------- README

SATURATED = 0.98
"""Unfiltered TPE's final normalised ratio from which the README calls the hypervolume saturated."""


def _ratio_table(summary: list[dict[str, Any]], budget: int, yardstick: str, extra: str) -> list[str]:
    """One README table of a yardstick's ratios; `extra` names a last column (a summary key)."""
    p = YARDSTICKS[yardstick]
    head = {"stalled_runs": "stalled runs", f"found_top_class_{yardstick}": "runs evaluating the top contributor's class"}
    lines = [
        f"| method | seeds | {head[extra]} | ratio at {budget} evals, mean [95 % CI] | min-max | evals to 0.95 "
        "(median) | seeds reaching 0.95 | evals to 0.99 (median) | seeds reaching 0.99 | GPU-h to 0.95 / 0.99 "
        "(median) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        n = r["n_seeds"]
        lines.append(
            f"| {r['method']} | {n} | {r[extra]}/{n} | {r[f'{p}_at_{budget}_mean']:.3f} "
            f"[{r[f'{p}_ci95_low']:.3f}, {r[f'{p}_ci95_high']:.3f}] | {r[f'{p}_min']:.3f}-{r[f'{p}_max']:.3f} "
            f"| {r[f'{p}_evals_to_0.95_median']} | {r[f'{p}_seeds_reaching_0.95']}/{n} "
            f"| {r[f'{p}_evals_to_0.99_median']} | {r[f'{p}_seeds_reaching_0.99']}/{n} "
            f"| {r[f'{p}_gpu_h_to_0.95_median']} / {r[f'{p}_gpu_h_to_0.99_median']} |")
    return lines


def _speedup_table(speed: list[dict[str, Any]], budget: int) -> list[str]:
    lines = ["| yardstick | base | ratio the base reaches (mean) | after | other | other needs (mean curve) "
             "| factor |", "|---|---|---|---|---|---|---|"]
    for s in speed:
        need = s["other_evals_needed"]
        lines.append(f"| {s['yardstick']} | {s['base']} | {s['base_mean_ratio']:.3f} | {s['base_evals']} | "
                     f"{s['other']} | {need if need else f'not within {budget}'} | "
                     f"{'%.2f×' % s['factor'] if s['factor'] else '-'} |")
    return lines


def _target_lines(by: dict[str, dict[str, Any]], speed: list[dict[str, Any]], budget: int,
                  method: str = "tpe+dominance") -> list[str]:
    """The two targets for ``method``, judged on the normalised yardstick, with the origin-based
    figures beside."""
    dom, tpe = by.get(method), by.get("tpe")
    if not (dom and tpe):
        return [f"* Not judged: the summary lacks tpe or {method}."]
    who = "the dominance filter" if method == "tpe+dominance" else f"`{method}`"
    lead = "* " if method == "tpe+dominance" else f"* `{method}`: "
    lines = []
    fac = {y: [s["factor"] for s in speed if s["yardstick"] == y and s["base"] == "tpe"
               and s["other"] == method] for y in YARDSTICKS}

    def factors(y: str) -> str:
        best = max((f for f in fac[y] if f), default=None)
        return (f"factors {', '.join('%.2f' % f if f else '-' for f in fac[y])} at the levels above; best "
                + (f"{best:.2f}×" if best else "none"))

    levels = [s["base_evals"] for s in speed if s["yardstick"] == PRIMARY and s["base"] == "tpe"
              and s["other"] == method]
    met_at = [k for k, f in zip(levels, fac[PRIMARY]) if f and f >= 2]
    verdict = ("met at every level" if fac[PRIMARY] and len(met_at) == len(levels) else
               f"met only at the levels TPE reaches after {' and '.join(map(str, met_at))} evaluations"
               if met_at else "not met")
    lines.append(f"{lead}≥ 2× fewer full evaluations than unfiltered TPE for the same hypervolume: "
                 f"**{verdict}** on the normalised yardstick ({factors(PRIMARY)}); "
                 f"origin-based: {factors('origin')}; for the same front recall: {factors('recall')}.")
    p, o, r = YARDSTICKS[PRIMARY], YARDSTICKS["origin"], YARDSTICKS["recall"]
    final = dom[f"{p}_at_{budget}_mean"]
    lines.append(
        f"{lead}≥ 0.99 of the true hypervolume at budget {budget} with {who}: "
        f"**{'met' if final >= 0.99 else 'not met'}** on the normalised yardstick (mean {final:.3f}; "
        f"{dom[f'{p}_seeds_reaching_0.99']} of {dom['n_seeds']} seeds reach 0.99); origin-based: mean "
        f"{dom[f'{o}_at_{budget}_mean']:.3f}, {dom[f'{o}_seeds_reaching_0.99']} of {dom['n_seeds']} seeds.")
    base = tpe[f"{p}_at_{budget}_mean"]
    if base >= SATURATED:
        lines.append(
            f"{lead}**The hypervolume is saturated here**: unfiltered TPE itself reaches {base:.3f} of the true "
            f"front's normalised hypervolume after {budget} evaluations, because a few networks that any "
            "search finds early hold most of the volume (*How to read the ratios*, below); the ratios "
            "then differ in the third decimal and the factors above compare noise. Judge the filter by "
            f"the front recall: {dom[f'{r}_at_{budget}_mean']:.3f} with {'the filter' if method == 'tpe+dominance' else who} against "
            f"{tpe[f'{r}_at_{budget}_mean']:.3f} without after {budget} evaluations; {factors('recall')}.")
    return lines


def _share_sentence(sub: Subspace, yardstick: str) -> str:
    contrib = front_contributions(sub, yardstick)
    top = int(np.argmax(contrib))
    tf = sub.true_front[top]
    second = np.sort(contrib)[-2] if len(contrib) > 1 else 0.0
    return (f"the true-front point with the largest exclusive share (arch index {sub.true_front_arch_index[top]}: "
            f"{tf[0]:.1f} % accuracy, {tf[1]:,.0f} img/s, {1000 * tf[2]:.3f} mJ/img) holds {contrib[top]:.1%} "
            f"of it, the next largest {second:.1%}")


def _default_recall(filter_name: str) -> float:
    return DEFAULT_TARGET_RECALL[filter_name]


def _recall_clause(methods: Sequence[str]) -> str:
    variants = [m for m in methods if m in TARGET_RECALL]
    if not variants:
        return ""
    return "; as a sensitivity study, " + ", ".join(
        f"`{m}` is the dominance filter at target recall {TARGET_RECALL[m]:g}" for m in variants)


def _screen_clause(methods: Sequence[str]) -> str:
    variants = [m for m in methods if m in SCREEN]
    if not variants:
        return ""
    return "; " + ", ".join(
        f"`{m}` is the dominance filter with screening (`--screen {SCREEN[m]}`: per full evaluation at least "
        f"{SCREEN[m]} candidates are measured, and the one the filter admitted with the largest expected "
        "hypervolume improvement, its accuracy predicted from the run's own evaluations, is evaluated; "
        "up to 4 of the next best that still promise an improvement wait for the next screening, "
        "the other admitted ones are recorded as filtered, *screened out*)" for m in variants)


def _coverage_note(sub: Subspace) -> str:
    """What the true front is taken over: the whole space, or the profiled part of it."""
    counted = "canonical TSS classes" if sub.unit == CLASS_UNIT else f"TSS {sub.unit}"
    name = f"recorded H200 profile `{Path(sub.profile).name}`" if sub.profile else "recorded H200 profile"
    if len(sub.classes) == sub.n_networks_total:
        return (f"> **Whole space.** The {name} covers all {sub.n_networks_total:,} {counted} "
                f"({sub.n_cells:,} cells), so the **true front** is the Pareto front over every "
                "TSS cell.")
    return (f"> **Measured subspace only.** The {name} covers {len(sub.classes):,} of the "
            f"{sub.n_networks_total:,} {counted} ({sub.n_cells:,} of 15,625 cells). Every search "
            "samples the whole TSS space, but a candidate whose network is not in the profile is skipped "
            "without cost and spends no budget. The **true front** is the Pareto front over every cell "
            "of the profiled networks; all ratios below are against it, not against the full space's front.")


def write_readme(out: Path, sub: Subspace, summary: list[dict[str, Any]], speed: list[dict[str, Any]],
                 budget: int, seeds_asked: int, timings: dict[str, list[float]], check: list[str],
                 command: str, patience: list[str],
                 headroom: list[dict[str, Any]]) -> None:
    """The README: set-up, the headline tables, the speed-up, the targets, what fell short."""
    by = {r["method"]: r for r in summary}
    complete = len(sub.classes) == sub.n_networks_total
    lines = [
        "# Search efficiency on the " + ("whole TSS space" if complete else "measured TSS subspace"),
        "",
        f"Produced by `{command}`.",
        "",
        _coverage_note(sub),
        "",
        f"Objectives: accuracy ↑ (NATS-Bench 12-epoch {sub.dataset} x-valid, the search metric; recorded), "
        "throughput ↑ and energy per image ↓, both at each network's energy-optimal SM clock "
        "(default-clock figures **recorded** on the H200; the optimal clock and the figures there "
        "**modelled** with the H200 DVFS parameters, which are extrapolated from A100 sweeps). "
        f"True front: {len(sub.true_front)} points.",
        "",
        "**Hypervolume yardsticks.** *Normalised* (primary): each objective min-max normalised over "
        "every cell the true front is taken over (accuracy "
        f"{sub.lower[0]:.2f}-{sub.upper[0]:.2f} %, throughput {sub.lower[1]:,.0f}-{sub.upper[1]:,.0f} img/s, "
        f"energy {1000 * sub.lower[2]:.4f}-{1000 * sub.upper[2]:.4f} mJ/img), turned into maximisation, "
        "reference point the subspace's worst corner (0 after normalisation); exact 3-D volume "
        f"(`nasenergy.pareto.hypervolume`); the true front's is {sub.true_hv_norm:.4f} of the unit cube. "
        "*Origin-based* (secondary, the yardstick of earlier versions of this page and of the search's "
        "own report): `nasenergy.pareto.search_hypervolume` (accuracy %, img/s, img/J against the "
        f"origin); the true front's is {sub.true_hv:.4g}.",
        "",
        "**Front recall.** The share of the true front's points that a run matched: a point of the "
        f"run's front matches a true-front point when its accuracy is at most {RECALL_ACCURACY_PP:g} "
        f"percentage points lower and its throughput and energy per image at most {RECALL_HARDWARE_REL:.0%} "
        "worse (about the spread of one network's figures between H200 boards), or better. Every "
        "front point counts alike, so no single network decides it, as one can under a hypervolume "
        "(below, *How to read the ratios*); it is what the dominance filter's target recall speaks of.",
        "",
        f"Budget: {budget} full evaluations per run. Methods: random search, TPE and NSGA-II without a "
        "filter, TPE with the threshold filter and with the dominance-aware filter (target recall "
        f"{_default_recall('threshold'):g} and {_default_recall('dominance'):g}, the command's defaults"
        f"{_recall_clause(list(by))}{_screen_clause(list(by))}). Stall guard: `--patience` {', '.join(patience) or 'not recorded'} "
        "(a run stops as `stalled` after that many candidates in a row without a new full evaluation; "
        "it counts with the ratio it reached). Seeds 0.."
        f"{seeds_asked - 1} asked; the tables say how many finished.",
        "",
        "## Normalised hypervolume ratio (found / true), primary",
        "",
        *_ratio_table(summary, budget, PRIMARY, "stalled_runs"),
        "",
        "Evaluations to a level: per seed, the first full evaluation after which the ratio is at "
        "least the level (GPU-h: the search cost spent by then); the median over seeds, `never` when the "
        "median seed never reached it within the budget; the 95 % interval is a bootstrap over seeds.",
        "",
        "## Origin-based hypervolume ratio, secondary",
        "",
        *_ratio_table(summary, budget, "origin", "found_top_class_origin"),
        "",
        "## Front recall, share of true-front points matched",
        "",
        *_ratio_table(summary, budget, "recall", "stalled_runs"),
        "",
        "## Candidates and cost",
        "",
        "| method | candidates | measured | filtered | duplicates | outside the profile | runs short of budget "
        "| cost, GPU-h | measurement share of cost | exact true-front points found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        lines.append(
            f"| {r['method']} | {r['candidates_median']:g} | {r['measured_median']:g} | {r['filtered_median']:g} "
            f"| {r['duplicates_median']:g} | {r['outside_profile_median']:g} "
            f"| {r['runs_short_of_budget']}/{r['n_seeds']} | {r['cost_total_h_median']:.2f} "
            f"| {100 * r['measure_cost_share_median']:.2f} % | {r['front_points_found_median']:g}/{len(sub.true_front)} |")
    lines += [
        "",
        "Medians per run. Measured: new profiled classes measured. Cost: NATS-Bench training+evaluation "
        "time of the full evaluations (recorded for cells with a record, else estimated by the oracle's "
        "rate model) plus the recorded H200 measurement time.",
        "",
        "## Full evaluations saved by the filter",
        "",
        *_speedup_table(speed, budget),
        "",
        "## Targets",
        "",
        *_target_lines(by, speed, budget),
        *[line for m in SCREEN if m in by for line in _target_lines(by, speed, budget, m)],
        "",
        "## Headroom for any filter",
        "",
        "A full evaluation helps only if its network is not dominated by one evaluated before it. "
        "The share of evaluations that were dominated on arrival is what a per-candidate filter could "
        "skip; on an unfiltered method's proposals, a perfect filter (one that knew every accuracy) "
        "would reach the same front with the rest, a factor of 1 / (1 - share) fewer evaluations. "
        "(A filter also changes what the sampler proposes next, so this is a yardstick, not a bound "
        "on every possible search.) For the filtered methods, the share is the filter's admitted "
        "candidates that did not matter (`headroom.csv`).",
        "",
        *_headroom_table(headroom),
        "",
        "**How to read the ratios.** Against the origin in raw units, "
        + _share_sentence(sub, "origin")
        + ": a run's origin-based ratio jumps when it evaluates that network's class (any of its cells: "
        "they share throughput and energy), so per-seed ratios are close to all-or-nothing (the last column "
        "of the secondary table says how many runs did). Under the normalised yardstick, which weighs "
        "the three objectives alike, " + _share_sentence(sub, PRIMARY)
        + "; the rest of the front carries the remainder. Exact true-front points are "
        "rarely found: a sibling cell of the same class with slightly lower accuracy gives almost the "
        "same hypervolume.",
        "",
        "## Notes",
        "",
    ]
    lines += [f"* {c}" for c in check]
    lines += [
        f"* Measurement cost per class: the recorded `measure_cost_s` (median {sub.median_measure_cost_s:.2f} s); "
        f"{sub.n_warmup} classes measured first in a measuring run carry its warm-up (over "
        f"{WARMUP_FACTOR:g}× the median) and are charged the median.",
        "* Wall time per run on this shared 2-core machine (median over the logged runs, "
        f"`{TIMINGS_CSV}`, measured): "
        + (", ".join(f"{k} {np.median(v):.0f} s" for k, v in timings.items()) or "not logged") + ".",
        "* Each run is a complete `nasenergy.search.run_search` (duplicates and candidates outside the "
        "profile are told to the sampler as pruned; each evaluation draws its benchmark training run "
        "from the study's seed and the trial number); the run folders are not kept here.",
        "",
        "Files: `runs/*.csv.gz` (one row per candidate of each run: outcome, figures, costs, both "
        "hypervolume ratios so far, the run's stop reason and patience), `curves.csv` (mean and CI of "
        "each yardstick per number of evaluations), `summary.csv`, `speedups.csv`, `headroom.csv`, "
        "`true_front.csv` (with each point's normalised coordinates and exclusive shares), "
        "`hv_vs_evaluations.png`, `hv_vs_cost.png` (normalised), `hv_vs_evaluations_origin.png` "
        "(origin-based), `front_recall_vs_evaluations.png`.",
        "",
    ]
    (out / "README.md").write_text("\n".join(lines))


def _headroom_table(headroom: list[dict[str, Any]]) -> list[str]:
    lines = ["| method | seeds | evaluations dominated on arrival, median (min-max) | a perfect filter's factor on these proposals (median) |",
             "|---|---|---|---|"]
    for r in headroom:
        lines.append(f"| {r['method']} | {r['n_seeds']} | {100 * r['dominated_share_median']:.1f} % "
                     f"({100 * r['dominated_share_min']:.1f}-{100 * r['dominated_share_max']:.1f} %) "
                     f"| {r['perfect_filter_factor_median']:.2f}× |")
    return lines
