"""The README of `experiments/dvfs_validate.py` (``results/dvfs_validation/README.md``)."""

from __future__ import annotations

import math

import numpy as np

from nasenergy.dvfs.params import shipped_params
from nasenergy.dvfs.published import CAPPED_SWEEP_FILE, EXCLUDED, SETS
from nasenergy.dvfs.validation import (DEFAULT_POWER_DROP, HOST_BOUND_BUSY, CappedCardResult,
                                       GpuHoldOutResult, Summary, WorkloadResult)
from lib.dvfs_tables import (GENERIC_MEDIAN_TARGET, GENERIC_WORST_TARGET, LOWO_ROWS, _fmt,
                             before_after, choice_before_after, gpu_out_summary,
                             inconsistent_lines, saving_agreement, worst_case_lines)


def sensitivity_section(summaries: list[Summary], results: dict[str, list[WorkloadResult]],
                        held: list[GpuHoldOutResult], capped: list[CappedCardResult]) -> list[str]:
    """The README section on per-workload sensitivity: regrets with rank correlations, the
    saving agreement and the power-capped card."""
    lines = [
        "## Per-workload clock: regret and rank correlation",
        "",
        "Inputs each variant may use, all from the held-out workload's own runs at or near its "
        "default clock, never from its optimum: **shipped** = the compute share of the "
        "default-clock counters (sm_active x (1 - dram_active); GPM on Hopper, DCGM in these "
        "sweeps), else the power fraction (board power over the idle..limit span), capped by the "
        "GPU-busy fraction where recorded; **power_frac** = the power fraction only; **two clocks** "
        "= alpha solved from the times at the default clock and at one probe at about 90% of it "
        "(equation 8 of `nasenergy/dvfs/model.py`; needs clock control, so only with "
        "`--dvfs measured`); **fitted** = alpha fitted to the whole held-out sweep (an upper "
        "bound that sees the optimum, not a predictor). rho = Spearman rank correlation between "
        "the chosen and the measured optimal clock over the GPU's workloads.",
        "",
        "| validation | GPU [subset] | n | shipped: median / worst / rho | power_frac: median / worst / rho "
        "| two clocks: median / worst / rho | fitted: median / worst / rho |",
        "|---|---|---|---|---|---|---|",
    ]
    by = {(s.gpu, s.subset, s.variant): s for s in summaries}
    for gpu, subset in dict.fromkeys((s.gpu, s.subset) for s in summaries):
        cells = []
        for v in LOWO_ROWS:
            x = by.get((gpu, subset, v))
            cells.append("n/a" if x is None else
                         f"{_fmt(x.regret_median)} / {_fmt(x.regret_max)} / "
                         + ("n/a" if math.isnan(x.rank_corr_clock) else f"{x.rank_corr_clock:.2f}"))
        n = by[(gpu, subset, LOWO_ROWS[0])].n_workloads
        lines.append(f"| leave one workload out | {gpu} [{subset}] | {n} | " + " | ".join(cells) + " |")
    for r in gpu_out_summary(held) if held else []:
        rho = float(r["rank_corr_clock"])
        rho2 = float(r["two_point_rank_corr_clock"])
        lines.append(
            f"| leave one GPU out (generic) | {r['gpu']} [{r['subset']}] | {r['n_workloads']} | "
            f"{_fmt(float(r['regret_median']))} / {_fmt(float(r['regret_max']))} / "
            f"{'n/a' if math.isnan(rho) else f'{rho:.2f}'} | - | "
            f"{_fmt(float(r['two_point_regret_median']))} / {_fmt(float(r['two_point_regret_max']))} / "
            f"{'n/a' if math.isnan(rho2) else f'{rho2:.2f}'} | - |")
    lines += [
        "",
        "Reading it: the regrets are small because the energy valley is flat near its bottom, "
        "but the rank correlations say how much of the *ordering* of optimal clocks across "
        "workloads the default-clock signals recover: little from the power fraction, more from "
        "the counters' compute share, and, on the A100, V100 and RTX 8000, most where a second clock was timed (not on the Titan X, 0.27). On the V100 and "
        "RTX 8000 most workloads share one measured optimum (10 clocks, coarse steps), so rho there "
        "rests on the few that differ.",
        "",
        "What did not work or could not be tested: (1) the two-clock alpha with the probe one step below the default clock: on the A100 (15 MHz steps, 1% apart) run-to-run noise swamps the time difference (worst regret 13.5%, rho 0.04), hence the probe at ~90%; even there it raises the A100's worst regret (LSTM-like host-bound runs whose time barely follows the clock near the top) while it helps the V100 and RTX 8000. (2) NVML's memory utilization rate as a stand-in for DRAM bandwidth: no published sweep records it (DCGM's dram_active is a different quantity), so it is not a feature. (3) A held-clock feature for capped cards (how far below the top clock the cap holds the run): only one capped sweep exists. (4) The clock sweeps of eight workloads on a power-capped A40 that motivated the power-cap change are not in the shared data folder, so the A40 figures could not be re-measured here; the RTX A4000 sweep stands in for them.",
        "",
        "## Predicted against measured saving at the chosen clock",
        "",
        "Shipped variant, leave one workload out: the saving the model reports at its clock "
        "(point estimate, as `optimal_clock_for` reports it; and the band mean the clock choice "
        "minimises) against the saving measured at that clock. Quality measure, fixed before "
        "looking: the median signed gap (bias) and the median absolute gap.",
        "",
        "| GPU | n | predicted (median) | measured (median) | bias: point | abs. gap: point "
        "| bias: band mean | abs. gap: band mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in saving_agreement(results):
        lines.append(f"| {r['gpu']} | {r['n_workloads']} | {_fmt(float(r['predicted_saving_median']))} | "
                     f"{_fmt(float(r['measured_saving_median']))} | "
                     f"{100 * float(r['bias_point_median']):+.1f} pt | "
                     f"{100 * float(r['abs_error_point_median']):.1f} pt | "
                     f"{100 * float(r['bias_expected_median']):+.1f} pt | "
                     f"{100 * float(r['abs_error_expected_median']):.1f} pt |")
    for r in gpu_out_summary(held) if held else []:
        if r["subset"] == "all":
            lines.append(f"| {r['gpu']} (leave one GPU out, generic) | {r['n_workloads']} | "
                         f"{_fmt(float(r['predicted_saving_median']))} | - | "
                         f"{100 * float(r['saving_bias_median']):+.1f} pt | - | "
                         f"{100 * float(r['expected_saving_bias_median']):+.1f} pt | - |")
    if capped:
        c0 = capped[0]
        lines += [
            "",
            "## A power-capped card without a parameter set",
            "",
            f"{c0.gpu}, {c0.workload} (Kernel Tuner's synthetic FP32 kernel, `{CAPPED_SWEEP_FILE}`): "
            f"asked for {c0.requested_clock_mhz:g} MHz it held {c0.held_clock_mhz:.0f} MHz at "
            f"{c0.power_w:.0f} W of its {c0.power_limit_w:g} W limit. Generic model from the four "
            f"calibrated sets; idle power {c0.idle_power_w:.0f} W ({c0.idle_power_source}: the sweep "
            "has no idle reading). Scored on the measured sweep by held clock.",
            "",
            "| curve starts at | chosen clock | measured optimum | regret | predicted saving | "
            "measured saving there | label |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in capped:
            lines.append(f"| {c.start} ({c.held_clock_mhz if c.start == 'held clock' else c.requested_clock_mhz:.0f} MHz) "
                         f"| {c.chosen_clock_mhz:.0f} MHz | {c.true_best_clock_mhz:.0f} MHz | "
                         f"{_fmt(c.regret_frac)} | {_fmt(c.predicted_saving_frac)} | "
                         f"{_fmt(c.measured_saving_at_choice_frac)} | `{c.label}` |")
        lines += ["", "One kernel only: it shows the mechanism (a capped card's voltage is already "
                  "lower than at its top clock, so a curve drawn from the top clock over-predicts "
                  "the saving and picks too high a clock), not an accuracy figure.", ""]
    lines.append("")
    return lines


def readme(results: dict[str, list[WorkloadResult]], summaries: list[Summary],
           held: list[GpuHoldOutResult] | None = None,
           sweeps: dict[str, list] | None = None,
           capped: list[CappedCardResult] | None = None) -> str:
    lines = [
        "# DVFS model: leave-one-out validation on published clock sweeps",
        "",
        "Produced by `python experiments/dvfs_validate.py`. Every figure here is **measured by "
        "others** (the sweeps) or **modelled** (the model's choices); nothing was measured by this "
        "project. The sweeps are read in place from the shared data folder and are not copied here.",
        "",
        "## Method",
        "For each GPU, each workload (for the V100/RTX 8000 microbenchmarks: all inputs of one "
        "benchmark) is held out in turn. The GPU's parameters are calibrated on the *other* "
        "workloads (`nasenergy.dvfs.calibration`), the held-out workload is shown to the model only "
        "at its default (highest) clock - time, board power and, where recorded, the GPU-busy "
        "fraction - and the model's energy-optimal clock (found with the 10-probe search) is "
        "scored on the workload's **measured** sweep:",
        "",
        "* **regret** = measured energy at the model's clock / measured minimum energy - 1;",
        "* clock error (model's clock - measured optimum) and the model's energy error at its clock;",
        "* comparisons: alpha predicted from activity counters (sm_active, dram_active) plus power; "
        "a constant alpha; alpha fitted to the held-out sweep itself (isolates the alpha "
        "predictor's error); the single clock best on average over the training workloads "
        "(`fixed clock`); and the default clock (no DVFS).",
        "",
        "**Clock choice.** Every variant with a predicted alpha chooses the clock of least "
        "*expected* energy over the model's uncertainty band (equation 7 of "
        "`nasenergy/dvfs/model.py`, `nasenergy.dvfs.api.choose_clock`): the mean of the modelled "
        "energy curves for alpha - r, alpha and alpha + r (r: the predictor's calibration "
        "residual, clipped to the predictors' range) and, for the generic model, each reference "
        "GPU's shape. The row `compute share, point-estimate clock` is the point "
        "rule: least point-estimate energy. Alpha fitted to the held-out sweep has "
        "no residual and keeps the point rule. The figures reported at the chosen clock are the "
        "point estimate's in both rules.",
        "",
        "The main rows (`alpha from power_frac; before counters`) in *Results*, the per-workload "
        "columns of the tables below them and the plots are the power-fraction variant (with the "
        "expected-energy clock). The shipped model predicts alpha from the compute share of the "
        "counters where a measurement has them (`alpha from compute share of counters`) and falls "
        "back to `power_frac` otherwise. Both cap alpha at the GPU-busy fraction where the sweep "
        "records one (A100 set).",
        "",
        "Targets: median regret <= 3%, worst <= 10% on the data-centre GPUs (A100, V100).",
        "",
        *sensitivity_section(summaries, results, held or [], capped or []),
        "## Clock choice under uncertainty: before and after",
        "",
        "Regret, median / worst, compute-share alpha where the sweeps have counters (the shipped "
        "model), power fraction on the GTX Titan X. Before: point-estimate clock; after: "
        "expected-energy clock.",
        "",
        "| validation | GPU [subset] | workloads | before: median / worst | after: median / worst |",
        "|---|---|---|---|---|",
        *choice_before_after(summaries, held),
        "",
        "Why the worst cases failed (measured curves against the model's, "
        "`per_workload.csv`, `leave_one_gpu_out.csv`):",
        "",
        "* **Sweeps whose default point is physically inconsistent** "
        f"(`consistent_default_point`: board power more than {DEFAULT_POWER_DROP:.0%} below the "
        "next lower clock's although the run is faster). No model in which power rises with the "
        "clock can reproduce them, and even alpha fitted to the sweep itself misses them; the "
        "`consistent default point` rows leave them out. They are not removed from any "
        "calibration:",
        *inconsistent_lines(sweeps or {}, held),
        "* **Other workloads above the targets** under either rule (leave one workload out: "
        "compute-share variant above 10%; leave one GPU out: above "
        f"{GENERIC_WORST_TARGET:.0%}), consistent default points only. `t(f)/t0` is the "
        "measured time at the point rule's clock over the default-clock time:",
        *worst_case_lines(results, held, sweeps or {}),
        "",
        "Reading these: where the counters call a workload memory-bound (high dram_active, "
        "small compute share) but its time follows the clock (fitted alpha well above the "
        "predicted one, e.g. the V100 cache benchmarks), the point estimate lands on the steep "
        "low-clock side of the valley, where extra time costs static energy fast; the expected "
        "rule weighs that side with alpha + r and moves up. Host-bound workloads (low GPU busy) "
        "whose time barely follows the clock go the other way, and the counters cannot tell "
        "them apart from the rest. On the RTX 8000 the generic model's remaining worst cases are "
        "memory-bound kernels whose measured optimum lies below its references' voltage knee: "
        "the knee, as a fraction of the highest clock, is " + ", ".join(
            f"{p.knee_clock_mhz / p.max_clock_mhz:.2f} ({p.name})" for p in shipped_params().values()
            if p.provenance == "calibrated") + " in the shipped calibrations, so no reference "
        "shape in the band puts the valley where the RTX 8000's is.",
        "",
        "## Per-network clock sensitivity: power fraction against compute share",
        "",
        "Both columns use the expected-energy clock choice. Power fraction: `alpha` (the share of "
        "time that scales with the SM clock) predicted from the board power's fraction of the "
        "idle..limit span, which gave every H200 network nearly the same curve. Compute share: "
        "predicted from the compute share `sm_active x (1 - dram_active)` of the "
        "default-clock counters (equation 6 of `nasenergy/dvfs/model.py`; GPM SM_UTIL and "
        "DRAM_BW_UTIL on Hopper, DCGM 1002/1005 in these sweeps). Regret: leave one workload out, "
        "as below.",
        "",
        "| GPU [subset] | workloads | power fraction: median regret | power fraction: worst | "
        "compute share: median regret | compute share: worst |",
        "|---|---|---|---|---|---|",
        *before_after(summaries),
        "",
        "The DNN sweeps of the data folder (`hkbu_dlbench_dvfs`) cover only the top ~20% of the "
        "clock range and record no counters, so they cannot test this (see *Not used*); the only "
        "DNN workload here is the A100's LSTM training.",
        "",
        "## Results",
        "",
        "| GPU | workloads | variant | median regret | p90 | worst | share <= 3% | targets met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(f"| {s.gpu} [{s.subset}] | {s.n_workloads} | {s.variant} | "
                     f"{_fmt(s.regret_median)} | {_fmt(s.regret_p90)} | {_fmt(s.regret_max)} | "
                     f"{_fmt(s.share_regret_le_3pct)} | {'yes' if s.meets_targets else 'no'} |")
    lines += ["", "Power-fraction model, all workloads:", ""]
    lines += ["| GPU | median abs clock error | median abs energy error at chosen clock | "
              "p90 abs energy error | median measured saving | median predicted saving |",
              "|---|---|---|---|---|---|"]
    for key, res in results.items():
        err = np.abs([r.energy_error_frac for r in res])
        lines.append(
            f"| {SETS[key].gpu} | {np.median(np.abs([r.clock_error_mhz for r in res])):.0f} MHz "
            f"({np.median(np.abs([r.clock_error_steps for r in res])):.0f} steps) | "
            f"{_fmt(float(np.median(err)))} | {_fmt(float(np.quantile(err, 0.9)))} | "
            f"{_fmt(float(np.median([r.true_saving_frac for r in res])))} | "
            f"{_fmt(float(np.median([r.predicted_saving_frac for r in res])))} |")
    lines += ["", "Worst held-out workloads of the power-fraction model:", "",
              "| GPU | workload | measured best | model | regret | alpha predicted / fitted | "
              "GPU busy |", "|---|---|---|---|---|---|---|"]
    for key, res in results.items():
        for r in sorted(res, key=lambda r: -r.regret_frac)[:4]:
            lines.append(f"| {SETS[key].gpu} | {r.workload} | {r.true_best_clock_mhz:.0f} MHz | "
                         f"{r.model_clock_mhz:.0f} MHz | {_fmt(r.regret_frac)} | "
                         f"{r.alpha_predicted:.2f} / {r.alpha_fitted:.2f} | "
                         f"{'n/a' if math.isnan(r.gpu_busy) else f'{r.gpu_busy:.2f}'} |")
    lines += ["", "## Few-probe search vs exhaustive sweep", "",
              "| GPU | clocks | max probes | same clock as exhaustive on the modelled curve | "
              "within one step on the measured sweep | median regret of the search on the "
              "measured sweep | worst |", "|---|---|---|---|---|---|---|"]
    for key, res in results.items():
        rec = np.array([abs(r.search_steps_off_recorded) for r in res])
        reg = np.array([r.search_regret_recorded_frac for r in res])
        lines.append(
            f"| {SETS[key].gpu} | {res[0].n_clocks} | {max(r.search_probes_recorded for r in res)} | "
            f"{np.mean([r.search_steps_off_modelled == 0 for r in res]) * 100:.0f}% | "
            f"{np.mean(rec <= 1) * 100:.0f}% | {_fmt(float(np.median(reg)))} | {_fmt(float(reg.max()))} |")
    lines += [
        "",
        "Measured sweeps are noisy and not always valley-shaped, so the search can stop in a "
        "local dip; modelled curves are smooth and the search matches the exhaustive answer.",
        "",
        "## Reading the results",
        "",
        f"* `gpu_busy>={HOST_BOUND_BUSY:g}` rows drop host-bound workloads (sets that record "
        "DCGM `gr_engine_active`; below the threshold: " + (", ".join(
            f"{r.workload} {r.gpu_busy:.2f}" for res in results.values() for r in res
            if r.gpu_busy < HOST_BOUND_BUSY) or "none") + "). NAS inference with CUDA graphs "
        "keeps the GPU busy, so these rows are closer to the use case; the `all` rows are the "
        "honest overall figure.",
        "* `fixed clock` is a strong baseline on these GPUs because the energy valley sits at the "
        "voltage knee for most workloads; compare the model against it, not only against the "
        "default clock. It is chosen here with the measured sweeps of the other workloads on the "
        "same GPU, which a user of a new GPU does not have; the model needs only the GPU's "
        "parameters, and it also predicts the energy and throughput at the chosen clock.",
        "* `alpha fitted to held-out sweep` bounds what a better alpha predictor could reach; the "
        "gap to the default model is the cost of seeing the workload only at its default clock.",
        "* The V100 set has only 10 clocks (405-1380 MHz) and 945 MHz is optimal for most "
        "workloads, so V100 regrets are coarse-grained.",
        "* The RTX 8000 and GTX Titan X (Maxwell) sets are reported for completeness (not "
        "data-centre GPUs).",
    ]
    odd = [(key, r) for key, res in results.items() for r in res
           if r.regret_oracle_alpha_frac > 0.2]
    if odd:
        lines.append("* Workloads that even alpha fitted to the held-out sweep misses by more than "
                     "20% (their measured curves are not valley-shaped around the default clock; "
                     "see `per_workload.csv`): " + ", ".join(
                         f"{SETS[k].gpu} {r.workload} ({_fmt(r.regret_oracle_alpha_frac)})"
                         for k, r in odd) + ".")
    if held:
        gs = gpu_out_summary(held)
        lines += [
            "",
            "## Leave one GPU out: the generic model",
            "",
            "Each GPU's workloads are predicted with the **generic** parameters "
            "(`nasenergy/dvfs/generic.py`) built from the *other* GPUs' calibrations and only what "
            "NVML would report about the held-out GPU: its clocks, power limit, idle power (here "
            "the lowest power in its sweeps) and each workload's default-clock time, power and "
            "counters. Each GPU's own calibration is not used. The chosen clock is scored on the "
            "measured sweep. Targets: median regret <= "
            f"{GENERIC_MEDIAN_TARGET:.0%}, worst <= {GENERIC_WORST_TARGET:.0%}.",
            "",
            "| held-out GPU [subset] | workloads | alpha from | median regret | p90 | worst | "
            "default clock: median regret | median measured / predicted saving | measured saving "
            "inside the band | targets met |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in gs:
            lines.append(
                f"| {r['gpu']} [{r['subset']}] | {r['n_workloads']} | {r['alpha_predictor']} | "
                f"{_fmt(r['regret_median'])} | {_fmt(r['regret_p90'])} | {_fmt(r['regret_max'])} | "
                f"{_fmt(r['default_regret_median'])} | {_fmt(r['true_saving_median'])} / "
                f"{_fmt(r['predicted_saving_median'])} | {_fmt(r['band_coverage'])} | "
                f"{'yes' if r['meets_targets'] else 'no'} |")
        lines += ["", "Worst held-out workloads of the generic model:", "",
                  "| GPU | workload | measured best | generic model | regret | point-estimate "
                  "clock | its regret |", "|---|---|---|---|---|---|---|"]
        for gpu in dict.fromkeys(r.gpu for r in held):
            for r in sorted((x for x in held if x.gpu == gpu), key=lambda x: -x.regret_frac)[:3]:
                lines.append(f"| {gpu} | {r.workload} | {r.true_best_clock_mhz:.0f} MHz | "
                             f"{r.generic_clock_mhz:.0f} MHz | {_fmt(r.regret_frac)} | "
                             f"{r.point_clock_mhz:.0f} MHz | {_fmt(r.regret_point_frac)} |")
        lines += [
            "",
            "The band is the range of the saving at the chosen clock when `alpha` is off by its "
            "calibration residual (the widest of the references') and the power and voltage shape "
            "is each reference GPU's in turn instead of their mean (`nasenergy.dvfs.api.saving_band`). "
            "The coverage column says how often the measured saving at the chosen clock lies "
            "inside it. The GTX Titan X sweeps have no counters, so its workloads use the "
            "power-fraction predictor.",
        ]
    lines += [
        "",
        "## Data",
        "",
    ]
    for key in results:
        ps = SETS[key]
        lines.append(f"* **{ps.gpu}** (`{key}`): {ps.notes}. {ps.citation}. Power limit "
                     f"{ps.power_limit_w:g} W: {ps.power_limit_source}.")
    lines += ["", "Not used:", ""]
    lines += [f"* `{k}`: {v}" for k, v in EXCLUDED.items()]
    lines += ["", "Files: `per_workload.csv` (one row per held-out workload), `summary.csv`, "
              "`leave_one_gpu_out.csv` (one row per workload of each held-out GPU), "
              "`leave_one_gpu_out_summary.csv`, `regret_cdf.png`, `clock_choice.png`.", ""]
    return "\n".join(lines)


