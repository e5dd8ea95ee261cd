"""Search efficiency, part 4: the tables and plots it writes (see ``experiments/search_efficiency.py``)."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from lib.efficiency_front import LEVELS, PRIMARY, YARDSTICKS, Subspace, front_contributions, to_unit_maximisation
from lib.efficiency_stats import MethodCurves, mean_ci, ratio_on_cost_grid

# ---------------------------------------------------------------------------------- output


def write_curves(curves: dict[str, MethodCurves], path: Path) -> None:
    """Mean and 95 % bootstrap CI of each yardstick's ratio after each number of evaluations, per
    method."""
    cols = [f"{p}_{k}" for p in YARDSTICKS.values() for k in ("mean", "ci95_low", "ci95_high")]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["method", "evaluations", "n_seeds", *cols, "cost_h_mean"])
        for m, c in curves.items():
            stats = [mean_ci(c.by_eval[name]) for name in YARDSTICKS]
            with warnings.catch_warnings():  # evaluation counts no seed reached (runs that stopped short)
                warnings.simplefilter("ignore", RuntimeWarning)
                cost = np.nanmean(c.cost_at_eval, axis=0) / 3600
            for k in range(c.cost_at_eval.shape[1]):
                figures = [f"{s[j][k]:.5f}" for s in stats for j in range(3)]
                w.writerow([m, k + 1, len(c.seeds), *figures, f"{cost[k]:.4f}"])


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """A list of dicts as CSV."""
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (format(v, ".5g") if isinstance(v, float) else v) for k, v in r.items()})


_YLABEL = {
    "normalised": "normalised HV found / true front's",
    "origin": "HV against the origin, found / true front's",
    "recall": "share of true-front points matched",
}
_TITLE = ("TSS on the recorded H200 profile: accuracy ↑ (recorded); throughput ↑, energy ↓ (modelled optimal clock)"
          "\n{what}; mean and 95 % interval over seeds")


def plot(curves: dict[str, MethodCurves], out: Path, budget: int) -> None:
    """``hv_vs_evaluations.png`` and ``hv_vs_cost.png`` (normalised yardstick),
    ``hv_vs_evaluations_origin.png`` (origin-based) and ``front_recall_vs_evaluations.png``, with
    95 % bands over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(1, budget + 1)
    for yardstick, name in ((PRIMARY, "hv_vs_evaluations.png"), ("origin", "hv_vs_evaluations_origin.png"),
                            ("recall", "front_recall_vs_evaluations.png")):
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        for m, c in curves.items():
            mean, lo, hi = mean_ci(c.by_eval[yardstick])
            ax.plot(x, mean, label=f"{m} (n={len(c.seeds)})")
            ax.fill_between(x, lo, hi, alpha=0.2)
        _finish(ax, yardstick, "front recall" if yardstick == "recall" else f"{yardstick} hypervolume yardstick")
        ax.set_xlabel("full evaluations (12-epoch NATS-Bench accuracy, recorded)")
        fig.tight_layout()
        fig.savefig(out / name, dpi=130)
        plt.close(fig)

    top = np.nanmax([np.nanmax(c.cost_at_eval) for c in curves.values()])
    grid = np.linspace(0, top, 400)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for m, c in curves.items():
        r = ratio_on_cost_grid(c, grid, PRIMARY)
        enough = np.all(~np.isnan(r), axis=0)  # up to the cheapest seed's total: every seed present
        mean, lo, hi = mean_ci(r)
        g = grid / 3600
        ax.plot(g[enough], mean[enough], label=m)
        ax.fill_between(g[enough], lo[enough], hi[enough], alpha=0.2)
    _finish(ax, PRIMARY, f"{PRIMARY} yardstick, curves end at the cheapest seed's cost")
    ax.set_xlabel("simulated search cost, GPU-hours (NATS-Bench training, recorded or estimated, "
                  "+ H200 measurement, recorded)", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "hv_vs_cost.png", dpi=130)
    plt.close(fig)


def _finish(ax: Any, yardstick: str, what: str) -> None:
    for level in LEVELS:
        ax.axhline(level, color="grey", lw=0.7, ls="--")
    ax.set_ylabel(_YLABEL[yardstick])
    ax.set_title(_TITLE.format(what=what), fontsize=9)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")


def write_front(sub: Subspace, path: Path) -> None:
    """``true_front.csv``: each true-front point, its normalised coordinates and exclusive shares."""
    unit = to_unit_maximisation(sub.true_front, sub.lower, sub.upper)
    shares = {name: front_contributions(sub, name) for name in YARDSTICKS}
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["arch_index", "accuracy_pct", "throughput_img_per_s", "energy_j_per_img",
                    "accuracy_unit", "throughput_unit", "energy_unit", "share_normalised", "share_origin"])
        for k, (i, row) in enumerate(zip(sub.true_front_arch_index, sub.true_front)):
            w.writerow([i, f"{row[0]:.6g}", f"{row[1]:.7g}", f"{row[2]:.7g}",
                        *(f"{u:.5f}" for u in unit[k]), f"{shares['normalised'][k]:.5f}",
                        f"{shares['origin'][k]:.5f}"])
