"""``python -m nasenergy.plot RUN [RUN ...]``: redraw runs' plots from their CSV files and compare them.

Each run folder's figures (projections, hypervolume curve; PNG and PDF) are redrawn in place (or
under ``--out``). With several runs, the runs are grouped by their settings (``config.json``
without the seed and the study's name and folder: seeds of one setting form one group), and two
comparison figures are written where ``--out`` says, else next to the runs (in their common parent
folder), never into the current folder:

* ``hypervolume_comparison``: per group, the median deploy hypervolume after each evaluation with
  the interquartile range as a band and the group's number of runs (n=K) in the legend;
* ``hypervolume_final``: each run's final deploy hypervolume, one column per group.

A group keeps its colour in both. Every run of a comparison is measured on one deploy region
(`comparison_region`), so the curves are comparable; runs must share their objectives.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from nasenergy import __version__
from nasenergy._cli import OneLineParser, add_version, run_main
from nasenergy.errors import UsageError, writing
from nasenergy.quality import DeployRegion
from nasenergy.run.files import load_run
from nasenergy.run.plots import (
    draw_run,
    hypervolume_series,
    plot_final_hypervolume,
    plot_hypervolume_groups,
    provenance_line,
    quality_label,
    readable_title,
)
from nasenergy.run.quality import declared_floor, region_of
from nasenergy.run.view import RunView

COMPARISON_PNG = "hypervolume_comparison.png"
FINAL_PNG = "hypervolume_final.png"

LEGEND_SETTINGS: tuple[tuple[str, str], ...] = (
    ("space", "space"), ("dataset", "dataset"), ("sampler", "sampler"), ("filter", "filter"),
    ("target_recall", "target recall"), ("filter_features", "filter features"), ("dvfs", "DVFS"), ("hardware", "hardware"), ("precision", "precision"),
    ("batch_size", "batch"), ("budget", "budget"),
)
"""Words for the ``config.json`` fields a comparison legend shows when the groups differ in them
(a field not named here is shown by its key)."""

NOT_SETTINGS: frozenset[str] = frozenset(
    {"seed", "study_name", "out", "storage", "quiet", "db_retry_s", "lease_s", "profile"}
)
"""``config.json`` fields that do not make two runs' settings differ: the seed, and where a run
is stored or how it talks (``profile`` is a path; the profile's content is ``profile_sha256``)."""

COMPARISON_REFS_FROM = ("the slowest throughput and largest energy per image measured over all the runs "
                        "compared (default clock)")

FILTER_ONLY = ("target_recall", "filter_features")
"""Settings without meaning for a run without a filter (``--filter none``)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m nasenergy.plot``."""
    p = OneLineParser(
        prog="python -m nasenergy.plot",
        description="Redraw search runs' plots from their CSV files; with several runs, compare them: "
        "runs differing only in their seed form a group, drawn as the median deploy hypervolume "
        "with an interquartile band (hypervolume_comparison) and each run's final value "
        "(hypervolume_final), PNG and PDF.",
    )
    add_version(p, __version__)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (holding candidates.csv and config.json)")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="where to write: a single run's plots (default: its folder), or the comparison of "
                        "several runs (default: the runs' common parent folder, e.g. runs/)")
    return p


def plot_runs(run_dirs: Sequence[str | Path], out: Path | None = None) -> list[Path]:
    """Redraw each run's plots and, for several runs, the comparison of their groups.

    Returns:
        The files written (PNGs; a PDF lies beside each).

    Raises:
        DataNotFoundError: a run folder or its candidates file is missing.
        UsageError: the runs have different objectives, a run is given twice, a run file is
            malformed, or ``out`` is a file.
        OutputError: a figure cannot be written (a read-only place, a full disk).
    """
    check_distinct(run_dirs)
    if out is not None:
        with writing(out):
            if out.exists() and not out.is_dir():
                raise UsageError(f"--out {out} is a file, not a folder")
    records = [load_run(d) for d in run_dirs]
    written: list[Path] = []
    for rec in records:
        written += draw_run(rec, out if (out is not None and len(records) == 1) else None)
    if len(records) > 1:
        written += compare_runs(records, out or comparison_folder([r.run_dir for r in records]))
    return written


def check_distinct(run_dirs: Sequence[str | Path]) -> None:
    """Refuse a run folder given twice (under any spelling): a median over seeds of one run.

    Raises:
        UsageError: two arguments name the same folder.
    """
    seen: dict[Path, str | Path] = {}
    for d in run_dirs:
        try:
            key = Path(d).expanduser().resolve()
        except (OSError, RuntimeError) as exc:  # a name too long, a loop of links
            raise UsageError(f"run folder {d}: {exc}") from None
        if key in seen:
            raise UsageError(f"run folder {d} is given twice (also as {seen[key]}); name each run once")
        seen[key] = d


def compare_runs(records: Sequence[RunView], out: Path) -> list[Path]:
    """Write the comparison figures of several runs, grouped by `group_runs`, into ``out``.

    Raises:
        UsageError: the runs have different objectives.
    """
    names = {tuple(o.name for o in r.objectives) for r in records}
    if len(names) > 1:
        raise UsageError(
            "runs with different objectives cannot share a hypervolume plot: "
            + "; ".join(f"{r.run_dir}: {','.join(o.name for o in r.objectives)}" for r in records)
        )
    objectives = records[0].objectives
    groups = group_runs(records)
    labels = group_labels(groups)
    region = comparison_region(records)
    curves = {label: [hypervolume_series(r.evaluated, objectives, region)[1] for r in group]
              for label, group in zip(labels, groups)}
    headings = list(dict.fromkeys(readable_title(r.config, r.rows, objectives) for r in records))
    kind = "deploy hypervolume" if region is not None else "hypervolume"
    note = provenance_line([row for r in records for row in r.evaluated], objectives)
    region_words = ([f"one deploy region for all {len(records)} runs: floor {region.accuracy_floor_pct:.1f} % "
                     f"({region.floor_from});",
                     f"references {region.throughput_ref_img_per_s:.4g} img/s, {region.energy_ref_j_per_img:.4g} "
                     "J/img (slowest throughput, largest energy measured over all runs)"]
                    if region is not None else [])
    small = "\n".join([*region_words, *(f"{label}: {study_pattern([r.name for r in group])}"
                                         for label, group in zip(labels, groups))])
    y_label = quality_label(region, objectives)
    return [
        plot_hypervolume_groups(curves, out / COMPARISON_PNG, objectives=objectives,
                                title=f"{' | '.join(headings)}\n{kind} after each full evaluation", note=note,
                                small_print=small, y_label=y_label),
        plot_final_hypervolume({label: [float(c[-1]) if len(c) else 0.0 for c in cs] for label, cs in curves.items()},
                               out / FINAL_PNG, objectives=objectives,
                               title=f"{' | '.join(headings)}\n{kind} at the end of each run", note=note,
                               small_print=small, y_label=y_label),
    ]


def settings_key(config: Mapping[str, Any]) -> str:
    """What two runs must share to be seeds of one setting: their config without `NOT_SETTINGS`
    (and without the filter's settings when no filter ran), as canonical JSON."""
    kept = {k: v for k, v in config.items()
            if k not in NOT_SETTINGS and not (config.get("filter") == "none" and k in FILTER_ONLY)}
    return json.dumps(kept, sort_keys=True, default=str)


def group_runs(records: Sequence[RunView]) -> list[list[RunView]]:
    """The runs grouped by `settings_key`, groups in the order of their first run, runs in the
    order given (each group's runs differ at most in their seed)."""
    groups: dict[str, list[RunView]] = {}
    for record in records:
        groups.setdefault(settings_key(record.config), []).append(record)
    return list(groups.values())


def group_labels(groups: Sequence[Sequence[RunView]]) -> list[str]:
    """One legend label per group: the settings in which the groups differ, e.g.
    ``filter dominance, target recall 0.8`` (a group without a filter shows no filter settings);
    a single group: its sampler and filter. Never a path or a study name."""
    configs = [g[0].config for g in groups]
    keys = sorted({k for c in configs for k in c} - NOT_SETTINGS)
    words = dict(LEGEND_SETTINGS)
    order = [k for k, _ in LEGEND_SETTINGS] + [k for k in keys if k not in words]
    differing = [k for k in order if k in keys and len({repr(c.get(k)) for c in configs}) > 1]
    if len(groups) == 1:
        differing = [k for k in ("sampler", "filter") if k in configs[0]]
    labels = []
    for config in configs:
        shown = [k for k in differing if not (k in FILTER_ONLY and config.get("filter") == "none")]
        labels.append(", ".join(f"{words.get(k, k.replace('_', ' '))} {_setting(config.get(k))}" for k in shown)
                      or "runs")
    return [f"{label} #{k + 1}" if labels.count(label) > 1 else label for k, label in enumerate(labels)]


def study_pattern(names: Sequence[str]) -> str:
    """Several study names in one: the common start and end around the differing parts, e.g.
    ``tss-...-tpe-seed{1,2,3}``."""
    names = list(dict.fromkeys(names))
    if len(names) == 1:
        return names[0]
    head = os.path.commonprefix(names)
    tail = os.path.commonprefix([n[len(head):][::-1] for n in names])[::-1]
    middles = [n[len(head):len(n) - len(tail)] for n in names]
    return f"{head}{{{','.join(middles)}}}{tail}"


def comparison_region(records: Sequence[RunView]) -> DeployRegion | None:
    """One deploy region for every run of a comparison (so their curves are comparable): the
    declared floor (the runs must declare the same one, else ``None``: the origin hypervolume)
    and hardware references shared by all, the slowest throughput and the largest energy per
    image measured over every run's candidates."""
    floors = {declared_floor(r.config)[0] for r in records}
    floor = floors.pop() if len(floors) == 1 else None
    if floor is None:
        return None
    rows = [row for r in records for row in r.rows]
    region = region_of(floor, declared_floor(records[0].config)[1], [x.get("measure_throughput_img_per_s") for x in rows],
                       [x.get("measure_energy_j_per_img") for x in rows])
    return None if region is None else replace(region, refs_from=COMPARISON_REFS_FROM)


def comparison_folder(run_dirs: Sequence[Path]) -> Path:
    """Where a comparison of runs goes without ``--out``: next to the runs, in the deepest folder
    that holds them all (``runs/`` for runs of one ``runs/`` folder)."""
    parents = [str(Path(d).resolve().parent) for d in run_dirs]
    return Path(os.path.commonpath(parents))


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
