"""``python -m nasenergy.plot RUN [RUN ...]``: redraw runs' plots from their CSV files and compare them.

Each run folder's PNGs (projections, 3-D view, hypervolume curve) are redrawn in place (or under
``--out``). With several runs, ``hypervolume_comparison.png`` overlays their hypervolume curves;
runs must share their objectives for their hypervolumes to be comparable (the reference point is
fixed, see `nasenergy.search.objectives`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError

COMPARISON_PNG = "hypervolume_comparison.png"


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
                        "several runs (default: the current folder)")
    return p


def plot_runs(run_dirs: Sequence[str | Path], out: Path | None = None) -> list[Path]:
    """Redraw each run's plots and, for several runs, their hypervolume comparison.

    Returns:
        The files written.

    Raises:
        DataNotFoundError: a run folder or its candidates file is missing.
        UsageError: the runs have different objectives.
    """
    from nasenergy.plots import draw_run, hypervolume_series, plot_hypervolume, provenance_line
    from nasenergy.search.run_files import load_run

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
        labels = _unique_labels(records)
        curves = {label: hypervolume_series(r.evaluated, objectives) for label, r in zip(labels, records)}
        target = (out or Path.cwd()) / COMPARISON_PNG
        written.append(
            plot_hypervolume(
                curves,
                target,
                title=f"hypervolume of {', '.join(o.name for o in objectives)}",
                note=provenance_line([row for r in records for row in r.evaluated]),
            )
        )
    return written


def _unique_labels(records: Sequence) -> list[str]:
    names = [r.name for r in records]
    if len(set(names)) == len(names):
        return names
    return [str(r.run_dir) for r in records]


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
