"""How many Pareto-front members change because of DVFS: the same networks scored at their
energy-optimal clocks against the default clock.

For the true front of the measured space and for the evaluated networks of every run of
``experiments/search_efficiency.py`` (its ``runs/*.csv.gz``), the front over (accuracy, throughput,
energy per image) is taken twice: with the figures the search scored (throughput and energy at each
network's modelled energy-optimal clock) and with the recorded default-clock figures of the same
networks. A member of one front that is not on the other *entered* (DVFS put it on the front) or
*left* (DVFS took it off). The default-clock figures are recorded; the optimal-clock ones modelled.

Writes ``per_run.csv``, ``summary.csv`` and ``README.md`` to ``--out`` (default
``results/dvfs_front_change``)::

    python experiments/dvfs_front_change.py [--runs cifar10=results/search_efficiency ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from lib.efficiency_front import OBJECTIVES, Subspace, build_subspace, possible_accuracies, search_config
from lib.efficiency_runs import network_of, read_run

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.objectives import objectives_for
from nasenergy.pareto import ParetoFront
from nasenergy.search.command.components import build_components

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "dvfs_front_change"
DEFAULT_RUNS: tuple[tuple[str, Path], ...] = (
    ("cifar10", ROOT / "results" / "search_efficiency"),
    ("cifar100", ROOT / "results" / "search_efficiency_cifar100"),
)


@dataclass(frozen=True)
class FrontChange:
    """The two fronts of one set of networks, by network key.

    Attributes:
        dvfs: networks on the front scored at their optimal clocks.
        default: networks on the front scored at the default clock.
    """

    dvfs: frozenset[str]
    default: frozenset[str]

    @property
    def entered(self) -> frozenset[str]:
        return self.dvfs - self.default

    @property
    def left(self) -> frozenset[str]:
        return self.default - self.dvfs

    def as_row(self) -> dict[str, int]:
        return {"front_dvfs": len(self.dvfs), "front_default": len(self.default),
                "on_both": len(self.dvfs & self.default), "entered": len(self.entered), "left": len(self.left)}


def front_change(keys: list[str], dvfs_points: np.ndarray, default_points: np.ndarray) -> FrontChange:
    """The fronts of the same points scored two ways; ``keys[i]`` names the network of row i."""
    objectives = objectives_for(OBJECTIVES)

    def members(points: np.ndarray) -> frozenset[str]:
        front = ParetoFront.from_points(points, objectives, keys=list(range(len(keys))))
        return frozenset(keys[int(i)] for i in front.keys)

    return FrontChange(members(dvfs_points), members(default_points))


def _default_figures(sub: Subspace, key: str) -> tuple[float, float]:
    m = sub.classes[key].measurement
    return float(m.throughput_img_per_s), float(m.energy_j_per_img)


def true_front_change(sub: Subspace, parts: Any) -> FrontChange:
    """Over every cell of the measured space with every accuracy the benchmark can return
    (``parts``: the search's components the subspace was built with)."""
    keys, dvfs, default = [], [], []
    for i in range(parts.space.size):
        arch = parts.space.arch_at(i)
        key = parts.key_of(arch)
        fig = sub.classes.get(key)
        if fig is None:
            continue
        for acc in possible_accuracies(parts.oracle, arch, sub.dataset):
            keys.append(key)
            dvfs.append([acc, fig.throughput_img_per_s, fig.energy_j_per_img])
            default.append([acc, *_default_figures(sub, key)])
    return front_change(keys, np.array(dvfs), np.array(default))


def run_front_change(rows: list[dict[str, str]], sub: Subspace) -> FrontChange:
    """Over the networks one search evaluated, with the accuracies it drew."""
    keys, dvfs, default = [], [], []
    for r in rows:
        if r["outcome"] != "evaluated":
            continue
        key = network_of(r)
        if key not in sub.classes:
            raise UsageError(f"a run evaluated {key}, which the profile does not hold: "
                             "the runs were made on another profile")
        acc = float(r["accuracy_pct"])
        keys.append(key)
        dvfs.append([acc, float(r["throughput_img_per_s"]), float(r["energy_j_per_img"])])
        default.append([acc, *_default_figures(sub, key)])
    if not keys:
        raise UsageError("a run without evaluations")
    return front_change(keys, np.array(dvfs), np.array(default))


def summarise(per_run: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per dataset and method: runs, mean front sizes, mean entered/left, runs with any change."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in per_run:
        groups[(r["dataset"], r["method"])].append(r)
    out = []
    for (dataset, method), rows in groups.items():
        out.append({
            "dataset": dataset, "method": method, "runs": len(rows),
            "front_dvfs_mean": float(np.mean([r["front_dvfs"] for r in rows])),
            "front_default_mean": float(np.mean([r["front_default"] for r in rows])),
            "entered_mean": float(np.mean([r["entered"] for r in rows])),
            "left_mean": float(np.mean([r["left"] for r in rows])),
            "runs_changed": sum(1 for r in rows if r["entered"] or r["left"]),
        })
    return out


def _parse_runs(text: str) -> tuple[str, Path]:
    dataset, sep, folder = text.partition("=")
    if not sep or not dataset or not folder:
        raise argparse.ArgumentTypeError(f"--runs wants DATASET=FOLDER, got {text!r}")
    return dataset, Path(folder)


def _write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)


def sensitivity_source(sub: Subspace) -> str:
    """Where the DVFS model's per-network clock sensitivity came from, in words."""
    if any(f.measurement.sm_util_pct is not None for f in sub.classes.values()):
        return "the GPM counters' compute share (SM busy x (1 - DRAM busy)) of each network"
    return "each network's power fraction only (the profile holds no GPU counters)"


def readme(true_rows: list[dict[str, Any]], summary: list[dict[str, Any]], profile: str, command: str,
           sensitivity: str) -> str:
    lines = [
        "# Front members that change because of DVFS",
        "",
        f"Produced by `{command}`.",
        "",
        f"Networks and figures: {profile}. The default-clock throughput and energy per image are "
        "**recorded**; the figures at each network's energy-optimal clock are **modelled** with the "
        "shipped H200 DVFS parameter set, which is extrapolated from the A100 (no measured H200 "
        f"clock sweep exists); the clock sensitivity comes from {sensitivity}. A network *entered* the front when it is on the front scored at "
        "the optimal clocks but not at the default clock, and *left* it the other way round.",
        "",
        "True front of the measured space (every cell, every accuracy the benchmark can return):",
        "",
        "| dataset | front at optimal clocks | front at default clock | on both | entered | left |",
        "|---|---:|---:|---:|---:|---:|",
        *(f"| {r['dataset']} | {r['front_dvfs']} | {r['front_default']} | {r['on_both']} | {r['entered']} "
          f"| {r['left']} |" for r in true_rows),
        "",
        "Fronts of the networks each search evaluated (its own accuracies), per method, mean over runs:",
        "",
        "| dataset | method | runs | front at optimal clocks | front at default clock | entered | left | runs with a change |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        *(f"| {s['dataset']} | {s['method']} | {s['runs']} | {s['front_dvfs_mean']:.1f} | "
          f"{s['front_default_mean']:.1f} | {s['entered_mean']:.2f} | {s['left_mean']:.2f} | "
          f"{s['runs_changed']} of {s['runs']} |" for s in summary),
        "",
        "Files: `per_run.csv` (one row per run), `summary.csv`, `true_front.csv`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=_parse_runs, action="append", metavar="DATASET=FOLDER",
                    help="a search-efficiency results folder holding runs/*.csv.gz, and its dataset "
                         "(repeatable; default: results/search_efficiency for cifar10 and "
                         "results/search_efficiency_cifar100 for cifar100)")
    ap.add_argument("--profile", default=None, metavar="PATH",
                    help="the recorded profile the runs were made on (default: the shipped one; see "
                         "search_efficiency.py --profile)")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)

    def body() -> int:
        per_run: list[dict[str, Any]] = []
        true_rows: list[dict[str, Any]] = []
        profile = sensitivity = ""
        for dataset, folder in args.runs or DEFAULT_RUNS:
            files = sorted((folder / "runs").glob("*.csv.gz"))
            if not files:
                raise UsageError(f"no runs/*.csv.gz in {folder}: run experiments/search_efficiency.py first")
            config = search_config("tpe", 0, 10, dataset=dataset, profile=args.profile)
            parts = build_components(config)
            sub = build_subspace(config, parts)
            profile = parts.coverage.summary() if parts.coverage else parts.describe.get("meter", "")
            sensitivity = sensitivity_source(sub)
            true_rows.append({"dataset": dataset, **true_front_change(sub, parts).as_row()})
            for path in files:
                rows = read_run(path)
                change = run_front_change(rows, sub)
                per_run.append({"dataset": dataset, "method": rows[0]["method"], "seed": int(rows[0]["seed"]),
                                **change.as_row()})
        summary = summarise(per_run)
        args.out.mkdir(parents=True, exist_ok=True)
        _write_csv(per_run, args.out / "per_run.csv")
        _write_csv(summary, args.out / "summary.csv")
        _write_csv(true_rows, args.out / "true_front.csv")
        command = "python experiments/dvfs_front_change.py" + "".join(
            f" --runs {d}={f}" for d, f in (args.runs or ()))
        if args.profile:
            command += f" --profile {args.profile}"
        (args.out / "README.md").write_text(readme(true_rows, summary, profile, command, sensitivity))
        for r in true_rows:
            print(f"{r['dataset']} true front: {r['front_dvfs']} at optimal clocks, {r['front_default']} at the "
                  f"default clock, {r['entered']} entered, {r['left']} left")
        for s in summary:
            print(f"{s['dataset']} {s['method']:>18}: entered {s['entered_mean']:.2f}, left {s['left_mean']:.2f} "
                  f"per run; {s['runs_changed']} of {s['runs']} runs changed")
        return 0

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
