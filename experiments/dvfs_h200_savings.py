"""Predicted energy savings at each TSS cell's optimal SM clock on the H200 (modelled).

Takes real default-clock measurements of TSS cells from the recorded H200 profile, predicts each
cell's energy per image at every supported clock with the DVFS model and the H200 parameter set
(an extrapolation: no measured H200 clock sweep exists), and reports the distribution of savings
at the optimal clock against the default clock, next to the 19.6-26.4% inference savings that
Tang et al. (e-Energy 2019) measured on the GPUs they tested. The default-clock figures are
recorded measurements; every other clock is modelled.

Writes ``results/dvfs_h200_savings/{per_cell.csv.gz, summary.csv, README.md, savings_hist.png}``.

    python experiments/dvfs_h200_savings.py [--profile nasenergy/data/h200_tss_deployed_profile.csv.gz]
"""

from __future__ import annotations

import csv
import gzip
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.dvfs.api import clock_backend, optimal_clock_for
from nasenergy.dvfs.model import DvfsModel, observation_from_measurement
from nasenergy.dvfs.params import GpuDvfsParams, extrapolate_params, shipped_params
from nasenergy.dvfs.points import BOUNDED_SLOWDOWN, MIN_EDP, MIN_ENERGY, OptimalClock
from nasenergy.dvfs.clock_search import exhaustive_search
from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.hardware.recorded import DEFAULT_PROFILE, measurement_from_row, read_profile

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_h200_savings"
VALIDATION_SUMMARY = ROOT / "results" / "dvfs_validation" / "summary.csv"
PUBLISHED = (0.196, 0.264)
PUBLISHED_REF = ("Z. Tang, Y. Wang, Q. Wang, X. Chu, 'The Impact of GPU DVFS on the Energy and "
                 "Performance of Deep Learning: an Empirical Study', ACM e-Energy 2019 "
                 "(arXiv:1905.11012): 19.6-26.4% less energy in DNN inference at the best core "
                 "clock than at the default, on the GPUs they tested (not an H200)")
MIN_CELLS = 20
MODES = ((MIN_ENERGY, None), (BOUNDED_SLOWDOWN, 0.05), (MIN_EDP, None))


def _variants(h200: GpuDvfsParams) -> dict[str, GpuDvfsParams]:
    """The shipped H200 set and, as a sensitivity check, the same extrapolation from the V100."""
    out = {"a100-based (shipped)": h200}
    v100 = shipped_params().get("v100-pcie")
    if v100 is not None and h200.provenance == "extrapolated":
        out["v100-based (sensitivity)"] = extrapolate_params(
            v100, name="h200-from-v100", gpu="NVIDIA H200 (extrapolated from V100)",
            device_patterns=h200.device_patterns, supported_clocks_mhz=h200.supported_clocks_mhz,
            default_clock_mhz=h200.default_clock_mhz, power_limit_w=h200.power_limit_w,
            idle_power_w=h200.idle_power_w,
            caveat="EXTRAPOLATED from the V100 calibration; sensitivity check only")
    return out


def load_cells(profile: Path) -> tuple[list[dict[str, str]], int]:
    """H200 rows with board power or energy, and how many rows were skipped for lacking it."""
    if not profile.is_file():
        raise DataNotFoundError(
            f"H200 profile not found at {profile}; record it with the profile experiment or pass "
            "--profile PATH")
    rows = [r for r in read_profile(profile) if "H200" in r["device_name"]]
    if not rows:
        raise UsageError(f"{profile} holds no H200 measurements")
    usable = [r for r in rows if r["avg_power_w"] or r["energy_j_per_img"]]
    return usable, len(rows) - len(usable)


Setting = tuple[str, int, str]  # (precision, batch size, dataset or input shape)


def _mode_label(mode: str, max_slowdown: float | None) -> str:
    """``min-energy``, ``bounded-slowdown<=0.05``, ...: the mode with its slowdown bound, if any."""
    return mode + (f"<={max_slowdown:g}" if max_slowdown else "")


def _group_by_setting(rows: list[dict[str, str]]) -> dict[Setting, list[dict[str, str]]]:
    """Profile rows by (precision, batch size, dataset or, without one, input shape)."""
    settings: dict[Setting, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        ds = r.get("dataset", "") or f"input {r['input_shape']}"
        settings[(r["precision"], int(r["batch_size"]), ds)].append(r)
    return settings


def _cell_result(r: dict[str, str], prm: GpuDvfsParams, model: DvfsModel, mode: str,
                 slow: float | None) -> tuple[dict[str, Any], OptimalClock]:
    """One cell's per-cell columns (after the group's key columns) and its optimal clock."""
    m = measurement_from_row(r)
    opt = optimal_clock_for(m, params=prm, mode=mode, max_slowdown=slow)
    obs = observation_from_measurement(m, prm)
    # the curve the search used: expected energy over the band (eq. 7)
    full = exhaustive_search(clock_backend(model, obs), mode=mode, max_slowdown=slow,
                             default_point=opt.default)
    grid = prm.supported_clocks_mhz
    row = {
        "canonical_arch": r["canonical_arch"], "arch_index": r["arch_index"],
        "default_clock_mhz": f"{obs.sm_clock_mhz:g}",
        "throughput_img_per_s": r["throughput_img_per_s"],
        "avg_power_w": f"{obs.power_w:.5g}",
        "power_frac": f"{obs.features(prm)['power_frac']:.4f}",
        "flop_util": r["utilization"],
        "alpha_predicted": f"{model.alpha(obs):.4f}",
        "best_clock_mhz": f"{opt.sm_clock_mhz:g}",
        "energy_default_j_per_img": f"{opt.default.energy_j_per_img:.6g}",
        "energy_best_j_per_img": f"{opt.energy_j_per_img:.6g}",
        "energy_saving_frac": f"{opt.energy_saving_frac:.4f}",
        "throughput_change_frac": f"{opt.throughput_change_frac:.4f}",
        "n_probes": opt.n_probes,
        "exhaustive_best_clock_mhz": f"{full.sm_clock_mhz:g}",
        "search_steps_off": abs(grid.index(full.sm_clock_mhz) - grid.index(opt.sm_clock_mhz)),
        "source_default": opt.default.source,
        "source_best": opt.source,
    }
    return row, opt


def _summary_row(key: dict[str, Any], opts: list[OptimalClock], cell_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The savings distribution of one group (setting, parameter variant, mode)."""
    s = np.array([o.energy_saving_frac for o in opts])
    clocks = [o.sm_clock_mhz for o in opts]
    return {
        **key, "n_cells": len(opts),
        "saving_median": f"{np.median(s):.4f}",
        "saving_p10": f"{np.quantile(s, 0.1):.4f}",
        "saving_p90": f"{np.quantile(s, 0.9):.4f}",
        "saving_min": f"{s.min():.4f}", "saving_max": f"{s.max():.4f}",
        "share_in_published_range": f"{np.mean((s >= PUBLISHED[0]) & (s <= PUBLISHED[1])):.3f}",
        "best_clock_median_mhz": f"{np.median(clocks):g}",
        "best_clock_min_mhz": f"{min(clocks):g}", "best_clock_max_mhz": f"{max(clocks):g}",
        "throughput_change_median": f"{np.median([o.throughput_change_frac for o in opts]):.4f}",
        "max_probes": max(int(c["n_probes"]) for c in cell_rows),
        "search_max_steps_off": max(int(c["search_steps_off"]) for c in cell_rows),
    }


def savings_tables(settings: dict[Setting, list[dict[str, str]]],
                   variants: dict[str, GpuDvfsParams]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-cell rows and per-group summary rows for every setting with at least `MIN_CELLS` cells,
    parameter variant and mode (every clock but the recorded default is modelled)."""
    per_cell: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    for (prec, bs, ds), cells in sorted(settings.items()):
        if len(cells) < MIN_CELLS:
            continue
        for vname, prm in variants.items():
            model = DvfsModel(prm)
            for mode, slow in MODES:
                key = {"params": vname, "mode": _mode_label(mode, slow), "precision": prec,
                       "batch_size": bs, "setting": ds}
                results = [_cell_result(r, prm, model, mode, slow) for r in cells]
                cell_rows = [{**key, **row} for row, _ in results]
                per_cell += cell_rows
                summary.append(_summary_row(key, [opt for _, opt in results], cell_rows))
    # One cell's rows (every variant and mode) next to each other: they repeat its profile
    # figures, which gzip then stores once. The sort is stable, so variants and modes keep their order.
    per_cell.sort(key=lambda c: (c["precision"], c["batch_size"], c["setting"], int(c["arch_index"])))
    return per_cell, summary


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, default=DEFAULT_PROFILE,
                    help="recorded H200 profile (CSV or CSV.GZ)")
    ap.add_argument("--params", type=Path, default=None,
                    help="DVFS parameter JSON to use instead of the shipped H200 set")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)

    def body() -> None:
        h200 = (GpuDvfsParams.load(args.params) if args.params is not None
                else shipped_params()["h200"])
        rows, skipped = load_cells(args.profile)
        settings = _group_by_setting(rows)
        if max(len(v) for v in settings.values()) < MIN_CELLS:
            raise UsageError(f"{args.profile}: fewer than {MIN_CELLS} H200 cells with power in "
                             "any setting; the savings distribution needs more")
        args.out.mkdir(parents=True, exist_ok=True)
        per_cell, summary = savings_tables(settings, _variants(h200))
        _write(args.out / "per_cell.csv.gz", per_cell)
        _write(args.out / "summary.csv", summary)
        _plot(per_cell, args.out / "savings_hist.png")
        (args.out / "README.md").write_text(_readme(summary, h200, args.profile, skipped, rows))
        for s in summary:
            print(f"{s['params']:26s} {s['mode']:20s} {s['precision']} bs{s['batch_size']} "
                  f"n={s['n_cells']} median saving {float(s['saving_median']):.1%} "
                  f"[p10 {float(s['saving_p10']):.1%}, p90 {float(s['saving_p90']):.1%}] "
                  f"clock {s['best_clock_median_mhz']} MHz")

    return run_main(body)


def _write(path: Path, rows: list[dict]) -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _plot(per_cell: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    for vname in dict.fromkeys(r["params"] for r in per_cell):
        s = [100 * float(r["energy_saving_frac"]) for r in per_cell
             if r["params"] == vname and r["mode"] == MIN_ENERGY]
        ax.hist(s, bins=30, alpha=0.6, label=f"modelled, {vname} (n={len(s)})")
    ax.axvspan(100 * PUBLISHED[0], 100 * PUBLISHED[1], color="tab:green", alpha=0.15,
               label="published inference savings (Tang et al. 2019, other GPUs)")
    ax.set_xlabel("energy saving at the optimal clock vs default clock (%)")
    ax.set_ylabel("TSS cells")
    ax.set_title("H200: default clock recorded, other clocks modelled (extrapolated parameters)",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _published_comparison(summary: list[dict]) -> list[str]:
    """README lines comparing the min-energy medians with the published range."""
    lines = []
    for s in summary:
        if s["mode"] != MIN_ENERGY:
            continue
        med = float(s["saving_median"])
        where = ("inside" if PUBLISHED[0] <= med <= PUBLISHED[1]
                 else "above" if med > PUBLISHED[1] else "below")
        lines.append(
            f"* Published comparison ({s['params']}): the median modelled saving at the "
            f"energy-optimal clock, {med:.1%}, is {where} the 19.6-26.4% Tang et al. measured for "
            f"DNN inference on other GPUs; {float(s['share_in_published_range']):.0%} of cells fall "
            f"inside that range, at a median throughput change of "
            f"{float(s['throughput_change_median']):.1%}.")
    return lines


def _validation_lines(path: Path) -> list[str]:
    """README lines quoting the default model's leave-one-out errors from `path` (the
    dvfs_validation summary), or a pointer to it when it is missing."""
    if not path.is_file():
        return ["* Leave-one-out validation of the model on measured sweeps: "
                "`python experiments/dvfs_validate.py` (not run here)."]
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["subset"] == "all" and r["variant"].startswith(
            "model (alpha from power_frac")]
    parts = [f"{r['gpu'].split(' (')[0]}: median regret {float(r['regret_median']):.1%}, median "
             f"absolute energy error at the chosen clock {float(r['energy_error_abs_median']):.1%}, "
             f"measured vs predicted median saving {float(r['true_saving_median']):.1%} vs "
             f"{float(r['predicted_saving_median']):.1%}"
             for r in rows if "A100" in r["gpu"] or "V100" in r["gpu"]]
    return ["* Leave-one-out validation of the same model on measured sweeps of other GPUs "
            "(`results/dvfs_validation`, all workloads): " + "; ".join(parts)
            + ". On the H200 the error is unknown until a measured sweep exists."]


def _readme(summary: list[dict], h200: GpuDvfsParams, profile: Path, skipped: int,
            rows: list[dict[str, str]]) -> str:
    drivers = sorted({r["driver_version"] for r in rows})
    dates = sorted(r["measured_at"] for r in rows if r["measured_at"])
    lines = [
        "# Predicted DVFS energy savings of TSS cells on the H200",
        "",
        "Produced by `python experiments/dvfs_h200_savings.py`.",
        "",
        f"**Caveat: {h200.caveat.rstrip('.')}.** The default-clock time and power of each cell are **recorded** "
        f"measurements (`{profile.name}`, driver {', '.join(drivers) or 'n/a'}, measured "
        f"{dates[0] if dates else 'n/a'} to {dates[-1] if dates else 'n/a'}); the energy at every "
        "other clock, and so every saving below, is **modelled**.",
        "",
        f"Published reference: {PUBLISHED_REF}.",
        "",
        "## Savings at the optimal clock vs the default clock",
        "",
        "| parameters | mode | setting | cells | median saving | p10-p90 | min-max | share in "
        "19.6-26.4% | median best clock | median throughput change |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['params']} | {s['mode']} | {s['precision']}, batch {s['batch_size']}, "
            f"{s['setting']} | {s['n_cells']} | {float(s['saving_median']):.1%} | "
            f"{float(s['saving_p10']):.1%} - {float(s['saving_p90']):.1%} | "
            f"{float(s['saving_min']):.1%} - {float(s['saving_max']):.1%} | "
            f"{float(s['share_in_published_range']):.0%} | {s['best_clock_median_mhz']} MHz | "
            f"{float(s['throughput_change_median']):.1%} |")
    lines += [
        "",
        "Modes: `min-energy`; `bounded-slowdown<=0.05` (least energy losing at most 5% "
        "throughput); `min-edp` (energy-delay product).",
        "",
        "Search check: over all rows the few-probe search used at most "
        f"{max(int(s['max_probes']) for s in summary)} probes of the 110 clocks and landed at most "
        f"{max(int(s['search_max_steps_off']) for s in summary)} clock step(s) from the "
        "exhaustive answer on the curves it searched (the expected energy over the model's "
        "uncertainty band, equation 7 of `nasenergy/dvfs/model.py`; figures at the chosen clock "
        "are the point estimate's).",
        "",
        "## How to read this",
        "",
        "* The H200 parameters carry the A100-SXM4 calibration over in relative units (knee at "
        f"{h200.knee_clock_mhz / h200.max_clock_mhz:.0%} of the highest clock). The "
        "`v100-based` rows repeat the prediction with the V100 calibration carried over instead; "
        "the gap between the two is a lower bound on the extrapolation's uncertainty.",
        *_published_comparison(summary),
        *_validation_lines(VALIDATION_SUMMARY),
        "* The spread across cells is narrow because the model sees each cell only through its "
        "default-clock time and board power (power fraction of the limit); it is the model's "
        "spread, not a measured one.",
        f"* Rows without board power or energy were skipped: {skipped}.",
        "* A measured H200 sweep of a few cells (`MeasuredBackend`, needs root and "
        "`--allow-clock-control`) would replace the extrapolation by a calibration.",
        "",
        "Files: `per_cell.csv.gz` (one row per cell, parameter variant and mode), `summary.csv`, "
        "`savings_hist.png`.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
