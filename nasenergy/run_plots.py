"""The PNG plots of a search run, drawn from its candidate rows (matplotlib, Agg, no pyplot).

* `plot_projections`: every pair of objectives, all evaluated candidates with the Pareto front
  (of all the run's objectives) highlighted.
* `plot_hypervolume`: hypervolume against full evaluations, one line per run.
* `plot_hypervolume_groups`: groups of runs (e.g. seeds of one setting) compared: per group the
  median after each evaluation with the interquartile range as a band (`median_band`).
* `plot_final_hypervolume`: each run's final hypervolume, one column per group, with the median.

Every figure's title names the provenance of its figures (e.g. ``accuracy: recorded;
throughput/energy: modelled``), read from the rows' source columns.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.objectives import SearchObjective, hypervolume_axis_label
from nasenergy.pareto import non_dominated_mask, points_of, search_hypervolume_curve
from nasenergy.quality import DeployRegion
from nasenergy.run_quality import quality_unit, run_region

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

    from nasenergy.protocols import RunView

_LOG_OBJECTIVES = ("throughput", "energy")


def _figure(width_in: float, height_in: float) -> "Figure":
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: "Figure", path: Path, small_print: str = "") -> Path:
    """Write ``path`` (PNG) and the same figure as a PDF beside it (a vector copy for papers);
    ``small_print`` (e.g. the study name; several lines allowed) goes in small grey type below the
    figure, at the right."""
    if small_print:
        fig.text(0.995, 0.0, small_print, ha="right", va="top", fontsize=6, color="0.45")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, bbox_inches="tight", pad_inches=0.1)  # keeps a legend below the axes whole
    fig.savefig(path.with_suffix(".pdf"), bbox_inches="tight", pad_inches=0.1)
    return path


def readable_title(config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                   objectives: Sequence[SearchObjective]) -> str:
    """A title a reader understands: space, dataset, objectives and hardware, e.g. ``TSS on
    CIFAR-10: accuracy, throughput, energy; NVIDIA H200 (fp16, batch 1024)``."""
    devices = sorted({str(r["measure_device"]) for r in rows if r.get("measure_device")})
    hardware = ", ".join(devices) or str(config.get("hardware") or "hardware unknown")
    setting = ", ".join(str(v) for v in (config.get("precision"),
                                         f"batch {config['batch_size']}" if config.get("batch_size") else None) if v)
    dataset = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100"}.get(str(config.get("dataset")), config.get("dataset"))
    space = str(config.get("space") or "").upper()
    head = " on ".join(str(v) for v in (space, dataset) if v)
    return (f"{head + ': ' if head else ''}{', '.join(o.name for o in objectives)}; {hardware}"
            + (f" ({setting})" if setting else ""))


def _readable_log_ticks(axis: "Axis", values: np.ndarray) -> None:
    """Log-scale ticks that never crowd: a few evenly stepped ticks within a factor of three,
    1-2-5 steps up to a few decades, whole decades beyond; minor ticks unlabelled."""
    from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter

    decades = float(np.log10(values.max() / values.min())) if len(values) else 0.0
    if decades < 0.5:
        axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
    else:
        subs = (1.0, 2.0, 5.0) if decades < 2.5 else (1.0,)
        axis.set_major_locator(LogLocator(base=10.0, subs=subs, numticks=6))
    axis.set_major_formatter(_short_number_formatter())
    axis.set_minor_formatter(NullFormatter())


def _short_number_formatter() -> Any:
    """Tick labels such as ``2e-05``, ``5e+04`` or ``300``: three significant digits at most."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:.3g}")


def provenance_line(
    rows: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective] | None = None
) -> str:
    """``accuracy: recorded (x-valid, 12 ep); throughput: modelled; energy: modelled`` for the
    evaluated rows (the accuracy's split and schedule where the rows name them), naming only
    ``objectives`` when given."""
    parts = []
    names = None if objectives is None else {o.name for o in objectives}
    for label, col in (("accuracy", "accuracy_source"), ("throughput", "throughput_source"), ("energy", "energy_source")):
        if names is not None and label not in names:
            continue
        sources = sorted({str(r[col]) for r in rows if r.get(col)})
        if sources:
            parts.append(f"{label}: {'/'.join(sources)}")
            if label == "accuracy":
                metric = sorted({f"{r['accuracy_split']}, {r.get('accuracy_schedule')} ep" for r in rows
                                 if r.get("accuracy_split")})
                parts[-1] += f" ({'; '.join(metric)})" if metric else ""
    return "; ".join(parts) or "no evaluated candidates"


def dvfs_applied(evaluated: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any evaluated row was scored at an energy-optimal clock (a DVFS step ran): a run
    with ``--dvfs none``, or on a meter without energy (the CPU), has its figures at the default
    clock and never says "optimal clock"."""
    return any(r.get("dvfs_source") for r in evaluated)


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
    return _save(fig, path, small_print)


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
    return _save(fig, path, small_print)


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


def group_colours(n: int) -> list[Any]:
    """One colour per group, in order (matplotlib's ``tab10``, repeated beyond ten groups): every
    figure of one comparison gives a group the same colour."""
    from matplotlib import colormaps  # lazy: matplotlib

    cmap = colormaps["tab10"]
    return [cmap(k % 10) for k in range(n)]


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
    return _save(fig, path, small_print)


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
    return _save(fig, path, small_print)


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
        record: the run, as `nasenergy.search.run_files.load_run` reads it.
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
    region = run_region(record.config, record.rows)
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
