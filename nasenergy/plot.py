"""``python -m nasenergy.plot RUN [RUN ...]``: redraw runs' plots from their CSV files and compare them.

Each run folder's PNGs (projections, 3-D view, hypervolume curve) are redrawn in place (or under
``--out``). With several runs, ``hypervolume_comparison.png`` overlays their hypervolume curves; it is
written where ``--out`` says, else next to the runs (in their common parent folder), never into the
current folder;
runs must share their objectives for their hypervolumes to be comparable (the reference point is
fixed, see `nasenergy.search.objectives`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.quality import DeployRegion
from nasenergy.run_plots import draw_run, hypervolume_series, plot_hypervolume, provenance_line, quality_label
from nasenergy.run_quality import declared_floor, region_of
from nasenergy.search.run_files import load_run

COMPARISON_PNG = "hypervolume_comparison.png"

LEGEND_SETTINGS: tuple[tuple[str, str], ...] = (
    ("space", "space"), ("dataset", "dataset"), ("sampler", "sampler"), ("filter", "filter"),
    ("target_recall", "target recall"), ("filter_features", "filter features"), ("dvfs", "DVFS"), ("hardware", "hardware"), ("precision", "precision"),
    ("batch_size", "batch"), ("seed", "seed"), ("budget", "budget"),
)
"""The ``config.json`` fields a comparison legend shows when the runs differ in them, with their words."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m nasenergy.plot``."""
    p = OneLineParser(
        prog="python -m nasenergy.plot",
        description="Redraw search runs' plots from their CSV files; with several runs, overlay their "
        "hypervolume curves in hypervolume_comparison.png.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (holding candidates.csv and config.json)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="where to write: a single run's plots (default: its folder), or the comparison of "
                        "several runs (default: the runs' common parent folder, e.g. runs/)")
    return p


def plot_runs(run_dirs: Sequence[str | Path], out: Path | None = None) -> list[Path]:
    """Redraw each run's plots and, for several runs, their hypervolume comparison.

    Returns:
        The files written.

    Raises:
        DataNotFoundError: a run folder or its candidates file is missing.
        UsageError: the runs have different objectives.
    """
    records = [load_run(d) for d in run_dirs]
    written: list[Path] = []
    for rec in records:
        written += draw_run(rec, out if (out is not None and len(records) == 1) else None)
    if len(records) > 1:
        names = {tuple(o.name for o in r.objectives) for r in records}
        if len(names) > 1:
            raise UsageError(
                "runs with different objectives cannot share a hypervolume plot: "
                + "; ".join(f"{r.run_dir}: {','.join(o.name for o in r.objectives)}" for r in records)
            )
        objectives = records[0].objectives
        labels = comparison_labels(records)
        region = comparison_region(records)
        curves = {label: hypervolume_series(r.evaluated, objectives, region) for label, r in zip(labels, records)}
        target = (out or comparison_folder([r.run_dir for r in records])) / COMPARISON_PNG
        written.append(
            plot_hypervolume(
                curves,
                target,
                objectives=objectives,
                title=f"{'deploy ' if region is not None else ''}hypervolume of {', '.join(o.name for o in objectives)}",
                note=provenance_line([row for r in records for row in r.evaluated], objectives),
                y_label=quality_label(region, objectives),
            )
        )
    return written


def comparison_region(records: Sequence[Any]) -> DeployRegion | None:
    """One deploy region for runs compared on one plot: the first run's floor (the runs must
    declare the same one), references from every run's measured candidates."""
    floors = {declared_floor(r.config)[0] for r in records}
    if len(floors) != 1 or None in floors:
        return None
    floor = floors.pop()
    rows = [row for r in records for row in r.rows]
    return region_of(floor, declared_floor(records[0].config)[1], [x.get("measure_throughput_img_per_s") for x in rows],
                     [x.get("measure_energy_j_per_img") for x in rows])


def comparison_folder(run_dirs: Sequence[Path]) -> Path:
    """Where a comparison of runs goes without ``--out``: next to the runs, in the deepest folder
    that holds them all (``runs/`` for runs of one ``runs/`` folder)."""
    parents = [str(Path(d).resolve().parent) for d in run_dirs]
    return Path(os.path.commonpath(parents))


def comparison_labels(records: Sequence[Any]) -> list[str]:
    """One legend label per run: its name (the study name, else the folder's name, numbered when
    runs still share it), then the settings in which the runs differ, e.g.
    ``tss-cifar10-... (filter dominance, target recall 0.8)`` (a run without a filter shows no
    target recall). Never a path."""
    names = [r.name for r in records]
    if len(set(names)) < len(names):
        names = [r.run_dir.name for r in records]
    if len(set(names)) < len(names):
        names = [f"{name} #{k + 1}" for k, name in enumerate(names)]
    differing = [(key, word) for key, word in LEGEND_SETTINGS
                 if len({repr(r.config.get(key)) for r in records}) > 1]
    labels = []
    for name, record in zip(names, records):
        shown = [(k, w) for k, w in differing if not (k == "target_recall" and record.config.get("filter") == "none")]
        settings = ", ".join(f"{word} {_setting(record.config.get(key))}" for key, word in shown)
        labels.append(f"{name} ({settings})" if settings else name)
    return labels


def _setting(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return "–" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status (0 done, 2 bad input)."""
    args = build_parser().parse_args(argv)

    def body() -> int:
        for path in plot_runs(args.runs, Path(args.out) if args.out else None):
            print(path)
        return 0

    return run_main(body)


if __name__ == "__main__":
    raise SystemExit(main())
