"""The PNG plots of a search run, drawn from its candidate rows (matplotlib, Agg, no pyplot).

* `plot_projections`: every pair of objectives, all evaluated candidates with the Pareto front
  (of all the run's objectives) highlighted.
* `plot_hypervolume`: hypervolume against full evaluations, one line per run.
* `plot_hypervolume_groups`: groups of runs (e.g. seeds of one setting) compared: per group the
  median after each evaluation with the interquartile range as a band (`median_band`).
* `plot_final_hypervolume`: each run's final hypervolume, one column per group, with the median.

Every figure's title names the provenance of its figures (e.g. ``accuracy: recorded;
throughput/energy: modelled``), read from the rows' source columns.

The shared figure plumbing (saving, titles, ticks, provenance, colours) is
`nasenergy.run.plots_axes`; the hypervolume plots are `nasenergy.run.plots_hypervolume`. This module
draws the projections and a run's set of plots (`draw_run`), and re-exports the public names of both.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto import non_dominated_mask, points_of
from nasenergy.run import plots_axes as axes  # `axes._save`: one patch point for every figure written
from nasenergy.run.plots_axes import (
    _figure,
    _readable_log_ticks,
    _save,
    dvfs_applied,
    group_colours,
    provenance_line,
    readable_title,
)
from nasenergy.run.plots_hypervolume import (
    BAND_LEGEND_TITLE,
    hypervolume_series,
    median_band,
    plot_final_hypervolume,
    plot_hypervolume,
    plot_hypervolume_groups,
    quality_label,
)
from nasenergy.run.quality import run_region

if TYPE_CHECKING:
    from nasenergy.run.view import RunView

__all__ = [
    "BAND_LEGEND_TITLE", "HYPERVOLUME_PNG", "PROJECTIONS_PNG", "draw_run", "dvfs_applied", "group_colours",
    "hypervolume_series", "median_band", "plot_final_hypervolume", "plot_hypervolume", "plot_hypervolume_groups",
    "plot_names", "plot_projections", "provenance_line", "quality_label", "readable_title",
]

_LOG_OBJECTIVES = ("throughput", "energy")


def _split(rows: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective]) -> tuple[np.ndarray, np.ndarray]:
    pts = points_of(rows, objectives)
    on = np.array([bool(r.get("on_front")) for r in rows], dtype=bool)
    return pts, on


def plot_projections(
    rows: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective], path: Path, *, title: str = "",
    at_optimal_clock: bool | None = None, small_print: str = "", accuracy_floor: float | None = None,
) -> Path | None:
    """One panel per pair of objectives: evaluated candidates grey, front members red.

    With ``accuracy_floor`` (the run's ``min_accuracy``), evaluations below it are left out, so a
    near-chance network does not stretch the axes, and a note in the title counts them.

    Args:
        rows: evaluated candidate rows (with ``on_front``).
        objectives: the run's objectives (at least two, else nothing is drawn).
        path: the PNG to write.
        title: prefix of the figure title.
        at_optimal_clock: whether throughput and energy were scored at optimal clocks (axis
            labels say so); default: whether the rows name a DVFS source.

    Returns:
        ``path``, or ``None`` with fewer than two objectives.
    """
    optimal = dvfs_applied(rows) if at_optimal_clock is None else at_optimal_clock
    below = _below_floor(rows, accuracy_floor)
    rows = [r for r, low in zip(rows, below) if not low]
    if below.any():
        title = (f"{title}\n{int(below.sum())} of {len(below)} evaluations below the accuracy floor "
                 f"{accuracy_floor:g} % are not shown")
    pairs = list(itertools.combinations(range(len(objectives)), 2))
    if not pairs:
        return None
    pts, on = _split(rows, objectives)
    fig = _figure(4.6 * len(pairs), 4.2)
    for k, (i, j) in enumerate(pairs):
        ax = fig.add_subplot(1, len(pairs), k + 1)
        ax.scatter(pts[~on, i], pts[~on, j], s=12, c="0.65", label="evaluated")
        front = pts[on][np.argsort(pts[on, i])]
        _draw_staircase(ax, pts[:, [i, j]], (objectives[i].sense, objectives[j].sense))
        ax.scatter(front[:, i], front[:, j], s=26, c="tab:red", label="Pareto front", zorder=3)
        ax.set_xlabel(objectives[i].axis_label(at_optimal_clock=optimal))
        ax.set_ylabel(objectives[j].axis_label(at_optimal_clock=optimal))
        for set_scale, axis, col in ((ax.set_xscale, ax.xaxis, i), (ax.set_yscale, ax.yaxis, j)):
            values = pts[:, col][np.isfinite(pts[:, col])]
            if objectives[col].name in _LOG_OBJECTIVES and len(values) and values.min() > 0:
                set_scale("log")
                _readable_log_ticks(axis, values)
        ax.tick_params(axis="x", labelrotation=30)
        ax.grid(True, alpha=0.3)
        if k == 0:
            ax.legend(loc="best", fontsize=8)
    fig.suptitle(f"{title}\n({provenance_line(rows, objectives)})".strip(), fontsize=9)
    fig.tight_layout()
    return axes._save(fig, path, small_print)


def _below_floor(rows: Sequence[Mapping[str, Any]], floor: float | None) -> np.ndarray:
    """Which rows' accuracy lies below ``floor`` (none without a floor)."""
    acc = np.array([np.nan if r.get("accuracy_pct") is None else float(r["accuracy_pct"]) for r in rows])
    if floor is None or not len(rows):
        return np.zeros(len(rows), dtype=bool)
    return acc < float(floor)


def _draw_staircase(ax: Any, pts: np.ndarray, senses: tuple[str, str]) -> None:
    """The front of the two objectives of a panel, drawn as the staircase of what it dominates."""
    pts = pts[np.isfinite(pts).all(axis=1)]
    if len(pts) == 0:
        return
    stairs = pts[non_dominated_mask(pts, senses)]
    stairs = stairs[np.argsort(stairs[:, 0])]
    # between two front points the boundary of the dominated region has the height of the point
    # further along x's better direction: the one on the right when x is maximized
    where = "pre" if senses[0] == "maximize" else "post"
    ax.step(stairs[:, 0], stairs[:, 1], where=where, color="tab:red",
            alpha=0.5, linewidth=1.0, label="front of these two", zorder=2)


PROJECTIONS_PNG = "pareto_projections.png"
HYPERVOLUME_PNG = "hypervolume.png"


def plot_names(objectives: Sequence[SearchObjective]) -> list[str]:
    """The PNG files `draw_run` writes for a run with these objectives (projections need two
    objectives)."""
    names = [PROJECTIONS_PNG] if len(objectives) >= 2 else []
    return [*names, HYPERVOLUME_PNG]


def draw_run(record: "RunView", out_dir: Path | None = None) -> list[Path]:
    """Draw a run's plots (projections, hypervolume curve) from its rows.

    Args:
        record: the run, as `nasenergy.run.files.load_run` reads it.
        out_dir: where to write the PNGs (default: the run folder).

    Returns:
        The files written.
    """
    out = out_dir or record.run_dir
    evaluated = record.evaluated
    objectives = record.objectives
    heading = readable_title(record.config, record.rows, objectives)
    title = f"{heading}: {len(evaluated)} full evaluations"
    small = f"study {record.name}"
    region = record.run_front.region
    written = [
        plot_projections(evaluated, objectives, out / PROJECTIONS_PNG, title=title, small_print=small,
                         accuracy_floor=record.config.get("min_accuracy")),
        plot_hypervolume(
            {"this run": hypervolume_series(evaluated, objectives, region)},
            out / HYPERVOLUME_PNG,
            objectives=objectives,
            title=f"{heading}\n{'deploy ' if region is not None else ''}hypervolume of "
                  f"{', '.join(o.name for o in objectives)}",
            note=provenance_line(evaluated, objectives),
            small_print=small,
            y_label=quality_label(region, objectives),
        ),
    ]
    return [p for p in written if p is not None]
