"""Spread of the modelled optimal clocks and savings across the deployed classes of the partial
H200 profile, with the per-network clock sensitivity (compute share of GPM counters) and without it.

Reads ``nasenergy/data/h200_tss_deployed_profile.csv.gz`` (recorded default-clock measurements with
GPM counters; partial: it holds only some of the deployed classes) and writes
``results/dvfs_h200_deployed_spread/{per_class.csv.gz, summary.csv, README.md, spread.png}``.

    python experiments/dvfs_h200_deployed_spread.py [--profile PATH] [--out DIR]
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import sys
from pathlib import Path

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.dvfs.api import optimal_clock_for
from nasenergy.dvfs.params import shipped_params
from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.hardware.recorded import DEPLOYED_PROFILE, measurement_from_row, read_profile
from search_spaces import get_space

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_h200_deployed_spread"
MIN_CLASSES = 20


def _variants() -> dict[str, object]:
    h200 = shipped_params()["h200"]
    before = dataclasses.replace(h200, alpha_predictors=tuple(
        a for a in h200.alpha_predictors if a.features in (("power_frac",), ())))
    return {"compute share (counters)": h200, "power fraction only (before)": before}


def per_class_rows(rows: list[dict[str, str]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    variants = _variants()
    for row in rows:
        m = measurement_from_row(row)
        if m.avg_power_w is None and m.energy_j_per_img is None:
            continue
        for name, params in variants.items():
            opt = optimal_clock_for(m, params=params)  # type: ignore[arg-type]
            lo, hi = opt.saving_band_frac or (np.nan, np.nan)
            out.append({
                "canonical_arch": row["canonical_arch"], "precision": m.precision,
                "batch_size": m.batch_size, "variant": name,
                "sm_util_pct": m.sm_util_pct, "dram_bw_util_pct": m.dram_bw_util_pct,
                "default_energy_j_per_img": opt.default.energy_j_per_img,
                "optimal_sm_clock_mhz": opt.sm_clock_mhz,
                "optimal_energy_j_per_img": opt.energy_j_per_img,
                "saving_frac": opt.energy_saving_frac, "saving_low_frac": lo,
                "saving_high_frac": hi, "throughput_change_frac": opt.throughput_change_frac,
                "source_default": m.source, "source_optimum": opt.label,
            })
    return out


def summarise(per_class: list[dict[str, object]]) -> list[dict[str, object]]:
    from scipy.stats import kendalltau

    out = []
    keys = sorted({(str(r["precision"]), int(r["batch_size"]), str(r["variant"])) for r in per_class})  # type: ignore[call-overload]
    for precision, batch, variant in keys:
        rs = [r for r in per_class if (r["precision"], r["batch_size"], r["variant"]) == (precision, batch, variant)]
        clocks = np.array([float(r["optimal_sm_clock_mhz"]) for r in rs])  # type: ignore[arg-type]
        saving = np.array([float(r["saving_frac"]) for r in rs])  # type: ignore[arg-type]
        e0 = np.array([float(r["default_energy_j_per_img"]) for r in rs])  # type: ignore[arg-type]
        e1 = np.array([float(r["optimal_energy_j_per_img"]) for r in rs])  # type: ignore[arg-type]
        tau = float(kendalltau(e0, e1).statistic)
        out.append({
            "precision": precision, "batch_size": batch, "variant": variant, "n_classes": len(rs),
            "n_distinct_clocks": int(len(set(clocks.tolist()))),
            "clock_min_mhz": float(clocks.min()), "clock_p10_mhz": float(np.quantile(clocks, 0.1)),
            "clock_median_mhz": float(np.median(clocks)),
            "clock_p90_mhz": float(np.quantile(clocks, 0.9)), "clock_max_mhz": float(clocks.max()),
            "saving_min": float(saving.min()), "saving_p10": float(np.quantile(saving, 0.1)),
            "saving_median": float(np.median(saving)), "saving_p90": float(np.quantile(saving, 0.9)),
            "saving_max": float(saving.max()),
            "kendall_tau_energy_default_vs_optimal": tau,
            "share_of_pairs_reordered": (1.0 - tau) / 2.0,
        })
    return out


def _hist(ax: object, values: list[float], label: str) -> None:
    v = np.asarray(values)
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-6 * max(1.0, abs(hi)):
        lo, hi = lo - 1.0, hi + 1.0
    ax.hist(v, bins=30, range=(lo, hi), alpha=0.6, label=label)  # type: ignore[attr-defined]


def plot(per_class: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = sorted({(str(r["precision"]), int(r["batch_size"])) for r in per_class})  # type: ignore[call-overload]
    fig, axes = plt.subplots(len(settings), 2, figsize=(10, 3.2 * len(settings)), squeeze=False)
    for row, (precision, batch) in zip(axes, settings):
        for variant in sorted({str(r["variant"]) for r in per_class}):
            rs = [r for r in per_class if (r["precision"], r["batch_size"], r["variant"]) == (precision, batch, variant)]
            _hist(row[0], [float(r["optimal_sm_clock_mhz"]) for r in rs], variant)  # type: ignore[arg-type]
            _hist(row[1], [100 * float(r["saving_frac"]) for r in rs], variant)  # type: ignore[arg-type]
        row[0].set_xlabel("modelled optimal SM clock (MHz)")
        row[1].set_xlabel("modelled energy saving vs default clock (%)")
        for ax in row:
            ax.set_ylabel("deployed classes")
            ax.set_title(f"H200, {precision}, batch {batch} (partial profile)", fontsize=8)
        row[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def readme(summary: list[dict[str, object]], n_rows: int, n_profile: int, n_total: int,
           h200_caveat: str) -> str:
    lines = [
        "# Modelled DVFS optima across the deployed classes of the partial H200 profile",
        "",
        "Produced by `python experiments/dvfs_h200_deployed_spread.py`.",
        "",
        f"**Partial**: the profile holds {n_profile:,} of the {n_total:,} deployed TSS classes "
        f"({n_rows:,} rows over its settings); the classes it lacks are not represented here.",
        "",
        f"**Caveat**: {h200_caveat}. The default-clock time, power and GPM counters of each class are "
        "**recorded** (`nasenergy/data/h200_tss_deployed_profile.csv.gz`); every optimal clock and "
        "saving below is **modelled**.",
        "",
        "Variants: `compute share (counters)` is the shipped model, whose clock sensitivity comes from "
        "the default-clock GPM counters (`sm_active x (1 - dram_active)`, equation 6 of "
        "`nasenergy/dvfs/model.py`); `power fraction only (before)` is the same parameter set "
        "with only the power-fraction predictor, as before the counters were used.",
        "",
        "| setting | variant | classes | distinct optimal clocks | optimal clock min / p10 / "
        "median / p90 / max (MHz) | saving min / p10 / median / p90 / max | energy pairs "
        "reordered by DVFS |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['precision']}, batch {s['batch_size']} | {s['variant']} | {s['n_classes']} | "
            f"{s['n_distinct_clocks']} | {s['clock_min_mhz']:.0f} / {s['clock_p10_mhz']:.0f} / "
            f"{s['clock_median_mhz']:.0f} / {s['clock_p90_mhz']:.0f} / {s['clock_max_mhz']:.0f} | "
            f"{_pct(float(s['saving_min']))} / {_pct(float(s['saving_p10']))} / "  # type: ignore[arg-type]
            f"{_pct(float(s['saving_median']))} / {_pct(float(s['saving_p90']))} / "  # type: ignore[arg-type]
            f"{_pct(float(s['saving_max']))} | {_pct(float(s['share_of_pairs_reordered']))} |")  # type: ignore[arg-type]
    lines += [
        "",
        "`energy pairs reordered by DVFS`: the share of pairs of classes whose energy per image "
        "ranks the other way at their optimal clocks than at the default clock ((1 - Kendall's "
        "tau) / 2); a reordering is what lets DVFS change which networks are on an energy front.",
        "",
        "How to read it: the optimal clock of this model sits near the voltage knee carried over "
        "from the A100 (about 70% of the highest clock) for every class whose compute share is "
        "high; the counters move the predicted saving per class more than the clock. These are "
        "model figures on an extrapolated parameter set: a measured H200 sweep of a few classes "
        "would test them.",
        "",
        "Files: `per_class.csv.gz` (one row per class, setting and variant), `summary.csv`, "
        "`spread.png`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, default=DEPLOYED_PROFILE, help="the deployed H200 profile")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)

    def body() -> int | None:
        if not args.profile.is_file():
            raise DataNotFoundError(f"H200 profile not found: {args.profile}")
        rows = read_profile(args.profile)
        n_profile = len({r["canonical_arch"] for r in rows})
        if n_profile < MIN_CLASSES:
            raise UsageError(f"the profile holds fewer than {MIN_CLASSES} classes")

        n_total = len(get_space("tss").deployed_classes())
        per_class = per_class_rows(rows)
        summary = summarise(per_class)
        args.out.mkdir(parents=True, exist_ok=True)
        with gzip.GzipFile(args.out / "per_class.csv.gz", "wb", mtime=0) as raw, \
                io.TextIOWrapper(raw, newline="") as fh:  # mtime 0: the same bytes every run
            w = csv.DictWriter(fh, fieldnames=list(per_class[0]))
            w.writeheader()
            w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                        for r in per_class)
        with (args.out / "summary.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(summary[0]))
            w.writeheader()
            w.writerows({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}
                        for r in summary)
        plot(per_class, args.out / "spread.png")
        caveat = shipped_params()["h200"].caveat or ""
        (args.out / "README.md").write_text(readme(summary, len(rows), n_profile, n_total, caveat))
        for s in summary:
            print(f"{s['precision']} bs{s['batch_size']} {s['variant']:30s} classes {s['n_classes']} "
                  f"clocks {s['clock_min_mhz']:.0f}-{s['clock_max_mhz']:.0f} MHz "
                  f"({s['n_distinct_clocks']} distinct), saving {_pct(float(s['saving_min']))}-"  # type: ignore[arg-type]
                  f"{_pct(float(s['saving_max']))}, pairs reordered "
                  f"{_pct(float(s['share_of_pairs_reordered']))}")  # type: ignore[arg-type]
        return None

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
