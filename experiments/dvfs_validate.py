"""Leave-one-out validations of the DVFS model on published measured clock sweeps.

1. Leave one workload out: for each GPU, each workload (or benchmark group) is held out in turn:
   the GPU is calibrated on the other workloads, the held-out one is seen only at its default
   (highest) clock, and the model's chosen clock is scored on its measured sweep (see
   `nasenergy.dvfs.validation`); the clock sensitivity from counters (compute share) against the
   power-fraction one it replaces.
2. Leave one GPU out: each GPU's workloads are predicted by the generic model built from the other
   GPUs' calibrations and what NVML would report about the held-out GPU
   (`nasenergy.dvfs.validation.leave_one_gpu_out`).

3. A power-capped card without a parameter set (the RTX A4000 sweep): the curve from the clock
   it held against the curve from the clock it was asked for.

Prints regrets with rank correlations (chosen against measured optimal clock) and the saving
agreement. Writes ``results/dvfs_validation/{per_workload.csv, summary.csv, leave_one_gpu_out.csv,
leave_one_gpu_out_summary.csv, saving_agreement.csv, capped_card.csv, README.md, regret_cdf.png,
clock_choice.png}``. The sweeps are read
in place from `nasenergy.paths.dvfs_data_dir()`.

    python experiments/dvfs_validate.py [--sets a100_sxm4_ttu v100_hkbu ...]
"""

from __future__ import annotations

import csv
import dataclasses
import math
import sys
from pathlib import Path
from typing import Iterator

import numpy as np

from nasenergy.dvfs.params import shipped_params
from nasenergy.dvfs.published import EXCLUDED, SETS
from nasenergy.dvfs.published import (CAPPED_SWEEP_FILE, CAPPED_SWEEP_POWER_LIMIT_W,
                                      load_capped_sweep)
from nasenergy.dvfs.validation import (DEFAULT_POWER_DROP, HOST_BOUND_BUSY, CappedCardResult,
                                       GpuHoldOutResult, GpuSweeps, Summary, WorkloadResult,
                                       capped_card, consistent_default_point, leave_one_gpu_out,
                                       leave_one_group_out, spearman, summarise)
from nasenergy._cli import OneLineParser, run_main

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_validation"


def _fmt(x: float, pct: bool = True) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "n/a"
    return f"{100 * x:.1f}%" if pct else f"{x:.0f}"


def write_csv(path: Path, rows: list, columns: list[str], extra: dict[str, list] | None = None) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        keys = list(extra or {})
        w.writerow(keys + columns)
        for i, r in enumerate(rows):
            d = dataclasses.asdict(r)
            w.writerow([extra[k][i] for k in keys] + [
                (f"{v:.6g}" if isinstance(v, float) else v) for v in (d[c] for c in columns)])


def plot(results: dict[str, list[WorkloadResult]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(results)
    ncol = min(2, len(keys))
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.4 * nrow), squeeze=False)
    for ax in axes.ravel()[len(keys):]:
        ax.axis("off")
    for ax, key in zip(axes.ravel(), keys):
        res = results[key]
        for field, label, style in (
            ("regret_frac", "model (power_frac)", "-"),
            ("regret_oracle_alpha_frac", "model, alpha fitted to held-out sweep", ":"),
            ("regret_fixed_clock_frac", "fixed clock (best on training)", "--"),
            ("regret_default_frac", "default clock", "-."),
        ):
            v = np.sort([getattr(r, field) for r in res])
            ax.step(100 * v, np.arange(1, len(v) + 1) / len(v), style, where="post", label=label)
        ax.axvline(3, color="gray", lw=0.5)
        ax.axvline(10, color="gray", lw=0.5)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(left=0)
        ax.set_xlabel("regret: extra energy vs measured optimum (%)")
        ax.set_ylabel("share of held-out workloads")
        ax.set_title(SETS[key].gpu[:40], fontsize=8)
    axes[0][0].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "regret_cdf.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(nrow, ncol, figsize=(4.5 * ncol, 3.6 * nrow), squeeze=False)
    for ax in axes.ravel()[len(keys):]:
        ax.axis("off")
    for ax, key in zip(axes.ravel(), keys):
        res = results[key]
        t = np.array([r.true_best_clock_mhz for r in res])
        m = np.array([r.model_clock_mhz for r in res])
        jit = np.random.default_rng(0).uniform(-4, 4, size=len(t))
        ax.scatter(t + jit, m + jit, s=8, alpha=0.6)
        lo, hi = min(t.min(), m.min()), max(t.max(), m.max())
        ax.plot([lo, hi], [lo, hi], color="gray", lw=0.5)
        ax.set_xlabel("measured optimal clock (MHz)")
        ax.set_ylabel("model's clock (MHz)")
        ax.set_title(SETS[key].gpu[:40], fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "clock_choice.png", dpi=120)
    plt.close(fig)


#: Targets of the generic model (leave one GPU out).
GENERIC_MEDIAN_TARGET = 0.05
GENERIC_WORST_TARGET = 0.12


def gpu_out_summary(held: list[GpuHoldOutResult]) -> list[dict[str, object]]:
    """One row per held-out GPU and subset (``all``; ``consistent default point`` where some of
    its sweeps fail `consistent_default_point`): regrets of the generic model under the
    ``expected`` clock choice, under the ``point`` choice and of the default
    clock."""
    rows: list[dict[str, object]] = []
    for gpu in dict.fromkeys(r.gpu for r in held):
        every = [r for r in held if r.gpu == gpu]
        subsets = [("all", every)]
        consistent = [r for r in every if r.consistent_default_point]
        if len(consistent) < len(every):
            subsets.append(("consistent default point", consistent))
        for subset, res in subsets:
            reg = np.array([r.regret_frac for r in res])
            reg_pt = np.array([r.regret_point_frac for r in res])
            rows.append({
                "gpu": gpu, "subset": subset, "n_workloads": len(res),
                "alpha_predictor": "/".join(sorted({r.alpha_predictor for r in res})),
                "regret_median": float(np.median(reg)), "regret_p90": float(np.quantile(reg, 0.9)),
                "regret_max": float(reg.max()),
                "point_regret_median": float(np.median(reg_pt)),
                "point_regret_max": float(reg_pt.max()),
                "default_regret_median": float(np.median([r.regret_default_frac for r in res])),
                "true_saving_median": float(np.median([r.true_saving_frac for r in res])),
                "predicted_saving_median": float(np.median([r.predicted_saving_frac for r in res])),
                "band_coverage": float(np.mean([r.measured_saving_in_band for r in res])),
                "rank_corr_clock": spearman([r.generic_clock_mhz for r in res],
                                            [r.true_best_clock_mhz for r in res]),
                "two_point_regret_median": float(np.nanmedian([r.regret_two_point_frac for r in res])),
                "two_point_regret_max": float(np.nanmax([r.regret_two_point_frac for r in res])),
                "two_point_rank_corr_clock": spearman([r.two_point_clock_mhz for r in res],
                                                      [r.true_best_clock_mhz for r in res]),
                "saving_bias_median": float(np.median([r.predicted_saving_frac
                                                       - r.measured_saving_at_choice_frac
                                                       for r in res])),
                "expected_saving_bias_median": float(np.median([r.expected_saving_frac
                                                                - r.measured_saving_at_choice_frac
                                                                for r in res])),
                "meets_targets": bool(np.median(reg) <= GENERIC_MEDIAN_TARGET
                                      and reg.max() <= GENERIC_WORST_TARGET),
            })
    return rows


def variant_pairs(summaries: list[Summary], before: str, after: str
                  ) -> Iterator[tuple[Summary, Summary | None]]:
    """Each summary of variant ``before`` with the summary of variant ``after`` for the same GPU
    and subset (None where there is none)."""
    for s in summaries:
        if s.variant == before:
            yield s, next((x for x in summaries if x.gpu == s.gpu and x.subset == s.subset
                           and x.variant == after), None)


def choice_before_after(summaries: list[Summary], held: list[GpuHoldOutResult] | None
                        ) -> list[str]:
    """Markdown rows: point-estimate clock vs expected-energy clock (after),
    leave one workload out (compute-share variant) and leave one GPU out (generic model)."""
    lines = []
    for s, a in variant_pairs(summaries, "model (compute share, point-estimate clock)",
                              "model (alpha from compute share of counters)"):
        if a is None:
            continue
        lines.append(f"| leave one workload out | {s.gpu} [{s.subset}] | {s.n_workloads} | "
                     f"{_fmt(s.regret_median)} / {_fmt(s.regret_max)} | "
                     f"{_fmt(a.regret_median)} / {_fmt(a.regret_max)} |")
    for r in gpu_out_summary(held or []):
        lines.append(f"| leave one GPU out (generic) | {r['gpu']} [{r['subset']}] | "
                     f"{r['n_workloads']} | {_fmt(float(r['point_regret_median']))} / "
                     f"{_fmt(float(r['point_regret_max']))} | {_fmt(float(r['regret_median']))} / "
                     f"{_fmt(float(r['regret_max']))} |")
    return lines


def worst_case_lines(results: dict[str, list[WorkloadResult]], held: list[GpuHoldOutResult] | None,
                     sweeps: dict[str, list]) -> list[str]:
    """One bullet per held-out workload (consistent default point) above the targets under
    either clock choice, with its counters and the measured time at the point rule's clock."""
    out = []
    by_name = {(k, sw.workload): sw for k, sws in sweeps.items() for sw in sws}
    gpu_key = {SETS[k].gpu: k for k in sweeps}

    def describe(key: str, workload: str) -> str:
        sw = by_name.get((key, workload))
        if sw is None:
            return ""
        bits = []
        if sw.sm_active is not None and sw.dram_active is not None:
            bits.append(f"sm_active {sw.sm_active:.2f}, dram_active {sw.dram_active:.2f}")
        if sw.gpu_busy is not None:
            bits.append(f"GPU busy {sw.gpu_busy:.2f}")
        return "; ".join(bits)

    def t_ratio(key: str, workload: str, f: float) -> str:
        sw = by_name.get((key, workload))
        if sw is None:
            return "n/a"
        i = int(np.argmin(np.abs(sw.f - f)))
        return f"{sw.t[i] / sw.t[-1]:.2f}"

    for key, res in results.items():
        for r in sorted(res, key=lambda r: -max(r.regret_counters_frac, r.regret_counters_point_frac)):
            if not r.consistent_default_point or math.isnan(r.regret_counters_frac):
                continue
            if max(r.regret_counters_frac, r.regret_counters_point_frac) <= 0.10:
                break
            out.append(f"  * leave one workload out, {SETS[key].gpu} `{r.workload}` "
                       f"({describe(key, r.workload)}): alpha predicted {r.alpha_counters:.2f}, "
                       f"fitted to its sweep {r.alpha_fitted:.2f}; measured best "
                       f"{r.true_best_clock_mhz:.0f} MHz; regret point rule "
                       f"{_fmt(r.regret_counters_point_frac)} -> expected rule "
                       f"{_fmt(r.regret_counters_frac)}.")
    fitted = {(k, r.workload): r.alpha_fitted for k, res in results.items() for r in res}
    for r in sorted(held or [], key=lambda r: -max(r.regret_frac, r.regret_point_frac)):
        if not r.consistent_default_point:
            continue
        if max(r.regret_frac, r.regret_point_frac) <= GENERIC_WORST_TARGET:
            break
        key = gpu_key.get(r.gpu, "")
        fa = fitted.get((key, r.workload), math.nan)
        out.append(f"  * leave one GPU out, {r.gpu} `{r.workload}` ({describe(key, r.workload)}; "
                   f"alpha fitted to its sweep {fa:.2f}): measured best "
                   f"{r.true_best_clock_mhz:.0f} MHz; point rule {r.point_clock_mhz:.0f} MHz "
                   f"(t(f)/t0 {t_ratio(key, r.workload, r.point_clock_mhz)}, regret "
                   f"{_fmt(r.regret_point_frac)}) -> expected rule {r.generic_clock_mhz:.0f} MHz "
                   f"(regret {_fmt(r.regret_frac)}).")
    return out or ["  * none"]


def inconsistent_lines(sets: dict[str, list], held: list[GpuHoldOutResult] | None) -> list[str]:
    """One bullet per sweep failing `consistent_default_point`, with its measured figures."""
    out = []
    for key, sweeps in sets.items():
        for sw in sweeps:
            if consistent_default_point(sw):
                continue
            e_other = sw.energy[:-1].min()
            out.append(f"  * {SETS[key].gpu} `{sw.workload}`: {sw.p[-1]:.0f} W at {sw.f[-1]:.0f} MHz "
                       f"against {sw.p[-2]:.0f} W at {sw.f[-2]:.0f} MHz, time {sw.t[-1] / sw.t[-2]:.3f}x "
                       f"that at {sw.f[-2]:.0f} MHz; the default point's energy is "
                       f"{_fmt(float(1.0 - sw.energy[-1] / e_other))} below the best other clock's.")
    return out


def before_after(summaries: list[Summary]) -> list[str]:
    """Markdown rows: power-fraction clock sensitivity (before) vs compute share (after)."""
    lines = []
    for s, a in variant_pairs(summaries, "model (alpha from power_frac; before counters)",
                              "model (alpha from compute share of counters)"):
        lines.append(
            f"| {s.gpu} [{s.subset}] | {s.n_workloads} | {_fmt(s.regret_median)} | "
            f"{_fmt(s.regret_max)} | {_fmt(a.regret_median) if a else 'n/a'} | "
            f"{_fmt(a.regret_max) if a else 'n/a (no counters in the sweeps)'} |")
    return lines


LOWO_ROWS = ("model (shipped: compute share, else power_frac)",
             "model (alpha from power_frac; before counters)",
             "model (alpha from two clocks: default, ~90%)",
             "model (alpha fitted to held-out sweep)")


def saving_agreement(results: dict[str, list[WorkloadResult]]) -> list[dict[str, object]]:
    """Per GPU: the shipped variant's predicted saving at its chosen clock (point estimate and
    band mean) against the saving measured there (medians of the signed and absolute gaps)."""
    rows = []
    for key, res in results.items():
        pr = np.array([r.shipped_predicted_saving_frac for r in res])
        ex = np.array([r.shipped_expected_saving_frac for r in res])
        me = np.array([r.shipped_measured_saving_frac for r in res])
        rows.append({"set": key, "gpu": res[0].gpu, "n_workloads": len(res),
                     "predicted_saving_median": float(np.median(pr)),
                     "measured_saving_median": float(np.median(me)),
                     "bias_point_median": float(np.median(pr - me)),
                     "abs_error_point_median": float(np.median(np.abs(pr - me))),
                     "bias_expected_median": float(np.median(ex - me)),
                     "abs_error_expected_median": float(np.median(np.abs(ex - me)))})
    return rows


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


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS),
                    help="published sweep sets to validate on (default: all)")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)
    def body() -> int | None:
        args.out.mkdir(parents=True, exist_ok=True)
        results: dict[str, list[WorkloadResult]] = {}
        summaries: list[Summary] = []
        for key in args.sets:
            ps = SETS[key]
            print(f"{key}: leave-one-out over {len(ps.load())} workloads", flush=True)
            res = leave_one_group_out(ps.load(), power_limit_w=ps.power_limit_w, gpu=ps.gpu)
            results[key] = res
            summaries += summarise(ps.gpu, res)
        all_rows = [r for res in results.values() for r in res]
        keys = [k for k, res in results.items() for _ in res]
        write_csv(args.out / "per_workload.csv", all_rows, WorkloadResult.columns(),
                  {"set": keys})
        write_csv(args.out / "summary.csv", summaries, Summary.columns())
        held: list[GpuHoldOutResult] = []
        if len(args.sets) >= 2:
            print("leave one GPU out: generic model", flush=True)
            held = leave_one_gpu_out([GpuSweeps(k, SETS[k].gpu, SETS[k].load(), SETS[k].power_limit_w)
                                      for k in args.sets])
            write_csv(args.out / "leave_one_gpu_out.csv", held, GpuHoldOutResult.columns())
            gs = gpu_out_summary(held)
            with (args.out / "leave_one_gpu_out_summary.csv").open("w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=list(gs[0]))
                w.writeheader()
                w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                            for r in gs)
        refs = [p for p in shipped_params().values() if p.provenance == "calibrated"]
        cap = load_capped_sweep()
        capped = capped_card(cap["requested_mhz"], cap["held_mhz"], cap["time_s"], cap["power_w"],
                             gpu="NVIDIA RTX A4000", workload="fp32_kernel",
                             power_limit_w=CAPPED_SWEEP_POWER_LIMIT_W, references=refs)
        write_csv(args.out / "capped_card.csv", capped, CappedCardResult.columns())
        agreement = saving_agreement(results)
        with (args.out / "saving_agreement.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(agreement[0]))
            w.writeheader()
            w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                        for r in agreement)
        plot(results, args.out)
        (args.out / "README.md").write_text(readme(results, summaries, held,
                                                   {k: SETS[k].load() for k in args.sets},
                                                   capped))
        print("leave one workload out (regret: median, worst; rho = rank correlation of the "
              "chosen and the measured optimal clock):")
        for s in summaries:
            rho = "n/a" if math.isnan(s.rank_corr_clock) else f"{s.rank_corr_clock:+.2f}"
            print(f"  {s.gpu[:30]:30s} [{s.subset}] {s.variant:48s} median {_fmt(s.regret_median)} "
                  f"worst {_fmt(s.regret_max)} rho {rho}")
        print("predicted vs measured saving at the chosen clock (shipped variant, medians):")
        for r in agreement:
            print(f"  {str(r['gpu'])[:30]:30s} predicted {_fmt(float(r['predicted_saving_median']))} "
                  f"measured {_fmt(float(r['measured_saving_median']))} bias "
                  f"{100 * float(r['bias_point_median']):+.1f} pt")
        print("power-capped card without a set (generic):")
        for c in capped:
            print(f"  {c.gpu} from the {c.start}: {c.chosen_clock_mhz:.0f} MHz (best "
                  f"{c.true_best_clock_mhz:.0f}), regret {_fmt(c.regret_frac)}, saving predicted "
                  f"{_fmt(c.predicted_saving_frac)} measured {_fmt(c.measured_saving_at_choice_frac)}")
        if held:
            print("leave one GPU out, generic model (regret: median, worst):")
            for r in gpu_out_summary(held):
                rho = float(r["rank_corr_clock"])
                rho2 = float(r["two_point_rank_corr_clock"])
                print(f"  {str(r['gpu'])[:30]:30s} [{r['subset']}] median {_fmt(float(r['regret_median']))} worst "
                      f"{_fmt(float(r['regret_max']))} rho {'n/a' if math.isnan(rho) else f'{rho:+.2f}'} "
                      f"(two clocks: median {_fmt(float(r['two_point_regret_median']))} worst "
                      f"{_fmt(float(r['two_point_regret_max']))} rho "
                      f"{'n/a' if math.isnan(rho2) else f'{rho2:+.2f}'}; default clock: median "
                      f"{_fmt(float(r['default_regret_median']))}; saving bias "
                      f"{100 * float(r['saving_bias_median']):+.1f} pt)")

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
