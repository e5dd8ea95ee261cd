"""The hypervolume plots of runs: the curve against full evaluations (`plot_hypervolume`), groups
of runs as a median with an interquartile band (`plot_hypervolume_groups`, `median_band`) and each
run's final hypervolume per group (`plot_final_hypervolume`), with the series and labels they draw.

The public names are re-exported by `nasenergy.run.plots`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.objectives import SearchObjective, hypervolume_axis_label
from nasenergy.pareto import points_of, search_hypervolume_curve
from nasenergy.quality import DeployRegion
from nasenergy.run import plots_axes as axes  # `axes._save`: one patch point for every figure written
from nasenergy.run.plots_axes import _figure, _short_number_formatter, group_colours
from nasenergy.run.quality import quality_unit


def hypervolume_series(
    evaluated_in_order: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective],
    region: DeployRegion | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(evaluations, hypervolume)``: x = 1..n full evaluations, y = the deploy hypervolume of
    ``region`` after each (`nasenergy.quality`; without a region, the origin hypervolume)."""
    pts = points_of(evaluated_in_order, objectives)
    curve = region.curve(pts, objectives) if region is not None else search_hypervolume_curve(pts, objectives)
    return np.arange(1, len(pts) + 1), curve


def quality_label(region: DeployRegion | None, objectives: Sequence[SearchObjective]) -> str:
    """The hypervolume plots' y label: the deploy hypervolume with its floor (two lines), else the
    origin one."""
    if region is None:
        return hypervolume_axis_label(objectives)
    return (f"deploy hypervolume ({quality_unit(objectives)})\nfloor {region.accuracy_floor_pct:.1f} %, "
            "log hardware axes")


def plot_hypervolume(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
    path: Path,
    *,
    objectives: Sequence[SearchObjective],
    title: str = "",
    note: str = "",
    small_print: str = "",
    y_label: str | None = None,
) -> Path:
    """Hypervolume against full evaluations, one line per named curve.

    Args:
        curves: legend label -> ``(evaluations, hypervolume)`` (see `hypervolume_series`); with
            several curves the legend goes below the axes, so labels may be long.
        path: the PNG to write.
        objectives: the objectives of the hypervolume (they give its unit).
        title: the figure title.
        note: a second title line (e.g. the objectives and provenance).
    """
    n_curves = len(curves)
    fig = _figure(7.2, 4.6)
    ax = fig.add_subplot(1, 1, 1)
    for name, (x, y) in curves.items():
        label = f"{name}, {len(x)} evaluations" if n_curves == 1 else f"{name}\n    {len(x)} evaluations"
        ax.step(x, y, where="post", label=label)
    ax.set_xlabel("full accuracy evaluations (count)")
    ax.set_ylabel(y_label or hypervolume_axis_label(objectives), fontsize=9)
    ax.yaxis.set_major_formatter(_short_number_formatter())
    ax.grid(True, alpha=0.3)
    ax.set_title("\n".join(t for t in (title, note) if t), fontsize=9)
    if n_curves > 1:  # below the axes, where long labels cannot hide the curves
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.16), fontsize=8, frameon=False)
    elif curves:
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return axes._save(fig, path, small_print)


def median_band(curves: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The median and interquartile range of several runs' curves, evaluation by evaluation.

    Args:
        curves: one hypervolume curve per run (the value after each evaluation, in order).

    Returns:
        ``(evaluations, median, 25th percentile, 75th percentile, length)``: x = 1..length, where
        ``length`` is the shortest curve's (a run that stopped earlier has no value beyond its end);
        percentiles interpolate linearly (numpy's default).

    Raises:
        ValueError: no curves, or an empty one.
    """
    if not curves or min(len(c) for c in curves) == 0:
        raise ValueError("a median needs at least one curve with at least one evaluation")
    length = min(len(c) for c in curves)
    stack = np.vstack([np.asarray(c, dtype=float)[:length] for c in curves])
    q25, median, q75 = np.percentile(stack, [25.0, 50.0, 75.0], axis=0)
    return np.arange(1, length + 1), median, q25, q75, length


BAND_LEGEND_TITLE = "line: median over seeds; band: interquartile range"


def plot_hypervolume_groups(
    groups: Mapping[str, Sequence[np.ndarray]],
    path: Path,
    *,
    objectives: Sequence[SearchObjective],
    title: str = "",
    note: str = "",
    small_print: str = "",
    y_label: str | None = None,
) -> Path:
    """Hypervolume against full evaluations for groups of runs: per group, the median after each
    evaluation and its interquartile range as a band (a group of one run: its line, no band).

    Args:
        groups: legend label -> the group's curves (one per run, see `hypervolume_series`); the
            legend adds ``n=K`` (the group's runs). Colours follow `group_colours` in this order.
        path: the PNG to write (a PDF beside it).
        objectives: the objectives of the hypervolume (they give its unit).
        title: the figure title.
        note: a further title line.
        small_print: small grey text below the figure (e.g. the study names).
        y_label: the y axis label (default: the origin hypervolume's).
    """
    fig = _figure(7.2, 4.6)
    ax = fig.add_subplot(1, 1, 1)
    for colour, (label, curves) in zip(group_colours(len(groups)), groups.items()):
        x, median, q25, q75, length = median_band(curves)
        cut = "" if all(len(c) == length for c in curves) else f", first {length} evaluations"
        ax.step(x, median, where="post", color=colour, linewidth=1.6, label=f"{label} (n={len(curves)}{cut})")
        if len(curves) > 1:
            ax.fill_between(x, q25, q75, step="post", color=colour, alpha=0.18, linewidth=0)
    ax.set_xlabel("full accuracy evaluations (count)")
    ax.set_ylabel(y_label or hypervolume_axis_label(objectives), fontsize=9)
    ax.yaxis.set_major_formatter(_short_number_formatter())
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title("\n".join(t for t in (title, note) if t), fontsize=9)
    banded = any(len(c) > 1 for c in groups.values())
    ax.legend(loc="best", fontsize=8, title=BAND_LEGEND_TITLE if banded else None, title_fontsize=7)
    fig.tight_layout()
    return axes._save(fig, path, small_print)


def plot_final_hypervolume(
    groups: Mapping[str, Sequence[float]],
    path: Path,
    *,
    objectives: Sequence[SearchObjective],
    title: str = "",
    note: str = "",
    small_print: str = "",
    y_label: str | None = None,
) -> Path:
    """Each run's final hypervolume as a dot, one column per group (colours as in
    `plot_hypervolume_groups`), the group's median as a bar.

    Args:
        groups: column label -> the group's runs' final hypervolumes.
        path: the PNG to write (a PDF beside it).
    """
    fig = _figure(max(5.6, 1.4 * len(groups) + 1.6), 4.2)
    ax = fig.add_subplot(1, 1, 1)
    for k, (colour, values) in enumerate(zip(group_colours(len(groups)), groups.values())):
        y = np.asarray(values, dtype=float)
        offsets = np.linspace(-0.12, 0.12, len(y)) if len(y) > 1 else np.zeros(1)
        ax.scatter(k + offsets, y, s=22, color=colour, zorder=3)
        ax.hlines(float(np.median(y)), k - 0.28, k + 0.28, color=colour, linewidth=2.0)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{label}\n(n={len(v)})" for label, v in groups.items()], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(y_label or hypervolume_axis_label(objectives), fontsize=8)
    ax.yaxis.set_major_formatter(_short_number_formatter())
    top = max((max(v) for v in groups.values() if len(v)), default=0.0)
    ax.set_ylim(0, top * 1.08 if top > 0 else 1.0)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title("\n".join(t for t in (title, note) if t), fontsize=9)
    fig.tight_layout()
    return axes._save(fig, path, small_print)
