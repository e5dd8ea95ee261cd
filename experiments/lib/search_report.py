"""The outputs of `experiments/search_quality.py`: the curves plot, the CSV tables, the README
and each study's truth file."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lib.search_curves import OBJECTIVES, Truth

ACCURACY_TSS = "NATS-Bench 12-epoch x-valid accuracy (mean over a deployed network's cells)"
ACCURACY_SSS = ("NATS-Bench 90-epoch x-valid accuracy (the size space records no 12-epoch values; one "
                "training seed)")
ACCURACY_TEXT: dict[str, str] = {"tss": ACCURACY_TSS, "sss": ACCURACY_SSS}
"""The accuracy each space's search scores, as the README states it."""


def plot_curves(out: Path, all_curves: dict[str, dict[str, np.ndarray]], methods: Sequence[str],
                titles: dict[str, str] | None = None) -> list[Path]:
    """``quality_curves.png``/``.pdf``: per study, each method's median quality ratio after each
    evaluation with its interquartile band over the seeds (``titles``: a study's panel title,
    ``TSS <study>`` where not given)."""
    import matplotlib  # lazy: plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: plotting only

    names = [n for n, c in all_curves.items() if c]
    if not names:
        return []
    colours = {m: plt.get_cmap("tab10")(i) for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, len(names), figsize=(max(4.6 * len(names), 7.0), 4.0), squeeze=False)
    for ax, name in zip(axes[0], names):
        for method, c in all_curves[name].items():
            x = np.arange(1, c.shape[1] + 1)
            q25, q50, q75 = np.percentile(c, [25, 50, 75], axis=0)
            ax.plot(x, q50, color=colours[method], label=f"{method} (n={len(c)})", lw=1.6)
            ax.fill_between(x, q25, q75, color=colours[method], alpha=0.18, lw=0)
        ax.set_title((titles or {}).get(name, f"TSS {name}"))
        ax.set_xlabel("full evaluations")
        at_50 = [float(np.median(c[:, min(49, c.shape[1] - 1)])) for c in all_curves[name].values()]
        ax.set_ylim(min(0.6, np.floor(10 * min(at_50)) / 10), 1.005)  # every median from evaluation 50 on
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("deploy hypervolume / best possible")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("Search quality on held-out seeds: median and interquartile band", fontsize=11)
    fig.tight_layout()
    paths = [out / "quality_curves.png", out / "quality_curves.pdf"]
    for path in paths:
        fig.savefig(path, dpi=130)
    plt.close(fig)
    return paths


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    if not rows:
        return
    names: list[str] = []
    for r in rows:
        names.extend(k for k in r if k not in names)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})


def _fmt_factor(r: dict[str, Any]) -> str:
    if r["evals_needed"] == "never":
        return f"never [{r['factor_lo']:.2f}, {r['factor_hi']:.2f}]"
    return f"{r['factor']:.2f}x ({r['evals_needed']}) [{r['factor_lo']:.2f}, {r['factor_hi']:.2f}]"


def write_readme(out: Path, quality_rows: Sequence[dict[str, Any]], factor_rows: Sequence[dict[str, Any]],
                 truths: dict[str, Truth], seeds: Sequence[int], command: str, notes: Sequence[str], *,
                 methods: Sequence[str], baseline: str, checkpoints: Sequence[int],
                 tuning_seeds: Sequence[int], accuracy_text: str = ACCURACY_TSS) -> None:
    tuning = set(seeds) <= set(tuning_seeds)
    lines = [f"# Search quality on {'the tuning seeds' if tuning else 'held-out seeds'}", "",
             "Produced by `" + command + "` (`experiments/search_quality.py`; its docstring declares the "
             "measure, the seeds and the rivals). Seeds reported: "
             f"{seeds[0]}-{seeds[-1]} ({len(seeds)}); settings may be chosen on seeds 0-9 only"
             + (" (these)" if tuning else ", and none was changed on these") + ". Budget 200 full evaluations per run; recorded H200 profile, modelled "
             "optimal clocks, " + accuracy_text + ".", ""]
    lines += ["## The searched subspaces and their best possible quality", "",
              "| study | networks (learnable) | floor % | throughput ref img/s | energy ref J/img | region-front networks | best volume |",
              "|---|---|---|---|---|---|---|"]
    for name, t in truths.items():
        lines.append(f"| {name} | {len(t.keys)} | {t.region.accuracy_floor_pct:.2f} | {t.region.throughput_ref_img_per_s:,.0f} "
                     f"| {t.region.energy_ref_j_per_img:.3g} | {len(t.front_keys)} | {t.volume:.2f} |")
    lines += ["", "## Quality ratio (mean over seeds, bootstrap 95 % interval)", "",
              "| study | method | seeds | after 50 | after 100 | after 200 | front recall at 200 | stalled | candidates / eval | wall s |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in quality_rows:
        q = " | ".join(f"{r[f'quality_at_{k}']:.3f} [{r[f'quality_at_{k}_lo']:.3f}, {r[f'quality_at_{k}_hi']:.3f}]"
                       for k in checkpoints)
        lines.append(f"| {r['study']} | {r['method']} | {r['n_seeds']} | {q} | {r['front_recall_at_200']:.3f} "
                     f"[{r['front_recall_lo']:.3f}, {r['front_recall_hi']:.3f}] | {r['stalled_runs']} "
                     f"| {r['candidates_per_eval_median']:.1f} | {r['wall_s_median']:.0f} |")
    lines += ["", "## Mean regret in accuracy points under 10 energy budgets and 10 throughput floors (lower is better)", "",
              "| study | method | after 50 | after 100 | after 200 |", "|---|---|---|---|---|"]
    for r in quality_rows:
        lines.append(f"| {r['study']} | {r['method']} | " + " | ".join(
            f"{r[f'regret_pt_at_{k}']:.2f} [{r[f'regret_pt_at_{k}_lo']:.2f}, {r[f'regret_pt_at_{k}_hi']:.2f}]"
            for k in checkpoints) + " |")
    by = {(r["study"], r["method"], r["measure"], r["k"]): r for r in factor_rows}
    for measure, title in (("quality", "quality ratio"), ("regret", "mean regret")):
        lines += ["", f"## Evaluations to reach plain TPE's {title} (factor k / needed, bootstrap 95 % interval)", "",
                  f"`never`: the method's mean curve does not reach TPE's {title} at k within 200 evaluations; "
                  "in the interval, a resample that never reaches it counts as factor 0. In brackets after the "
                  "factor: the evaluations needed.", "",
                  "| study | method | TPE at 50 | TPE at 100 | TPE at 200 |", "|---|---|---|---|---|"]
        for name in truths:
            for method in methods:
                if (name, method, measure, checkpoints[0]) not in by or method == baseline:
                    continue
                lines.append(f"| {name} | {method} | " + " | ".join(
                    _fmt_factor(by[(name, method, measure, k)]) for k in checkpoints) + " |")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    lines += ["", "![quality curves](quality_curves.png)", "",
              "Files: `quality_curves.png`/`.pdf` (median and interquartile band per method), "
              "`quality.csv`, `factors.csv`, `truth_<study>.json` (the region and its front), "
              "`runs/<study>/<method>_s<seed>.csv.gz` (each run's evaluations in order) and `.json` (its counts).", ""]
    (out / "README.md").write_text("\n".join(lines))


def write_truth(out: Path, truth: Truth) -> None:
    front = [{"network": k, "accuracy_pct": p[0], "throughput_img_per_s": p[1], "energy_j_per_img": p[2]}
             for k, p in zip(truth.keys, truth.points) if k in truth.front_keys]
    shares = truth.region.shares(np.array([[f["accuracy_pct"], f["throughput_img_per_s"], f["energy_j_per_img"]]
                                           for f in front]), OBJECTIVES) if front else []
    for f, s in zip(front, shares):
        f["exclusive_share"] = float(s)
    (out / f"truth_{truth.study}.json").write_text(json.dumps(
        {"region": truth.region.to_dict(), "networks": len(truth.keys), "best_volume": truth.volume,
         "front": front}, indent=1) + "\n")

