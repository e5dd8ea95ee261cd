"""The tables of `experiments/dvfs_validate.py`: CSV writing, the regret plots, the per-GPU
summaries of the generic model and the Markdown rows the README is built from."""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path
from typing import Iterator

import numpy as np

from nasenergy.dvfs.published import SETS
from nasenergy.dvfs.validation import (GpuHoldOutResult, Summary, WorkloadResult,
                                       consistent_default_point, spearman)


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

