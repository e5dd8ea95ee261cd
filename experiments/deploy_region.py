"""The deploy region on the whole space: the true front under nasenergy's quality measure, and how
much of its volume any single network holds.

For each dataset, every deployed network of the space that the recorded H200 profile holds (fp16,
batch 1024, the dataset's input shape, default clocks) gets its accuracy as the mean search-metric
accuracy (12-epoch x-valid for TSS, 90-epoch x-valid for SSS, from the embedded tables) over every
cell that deploys to it. Networks whose output does not depend on their input are left out (they
cannot learn). The region is then declared as a search declares it (`nasenergy.quality`): floor =
the median accuracy of the space's deployed networks, hardware references = the slowest throughput
and the largest energy per image of the profile's networks. Written: each dataset's true front with
each member's exclusive share of the deploy hypervolume, and the largest share under three
measures (the deploy hypervolume, the origin hypervolume of earlier versions, log axes without a
floor), so the measure's property is checked, not assumed.

Usage::

    python experiments/deploy_region.py [--out results/deploy_region]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.hardware.recorded import NotRecordedError, RecordedMeter
from nasenergy.objectives import objectives_for
from nasenergy.oracles import load_oracle
from nasenergy.oracles.evaluation import Metrics, MetricSpec
from nasenergy.pareto import hypervolume, non_dominated_mask, search_hypervolume
from nasenergy.quality import FLOORS_FILE, DeployRegion, median_floor, region_from_points
from search_spaces import get_space

DATASETS = ("cifar10", "cifar100", "ImageNet16-120")
SPACES = ("tss", "sss")
OBJECTIVES = objectives_for(("accuracy", "throughput", "energy"))


def network_table(space_name: str, dataset: str) -> list[dict[str, Any]]:
    """One row per deployed network the profile holds: its key, representative, mean accuracy over
    its cells, number of cells, whether it depends on its input, and its recorded figures."""
    space = get_space(space_name)
    schedule = "90" if space_name == "sss" else "12"
    metrics = Metrics(search=MetricSpec("x-valid", schedule, "mean"), report=MetricSpec("test", schedule, "mean"))
    oracle = load_oracle(None, space, metrics=metrics, seed=0)
    meter = RecordedMeter(space=space)
    covered = {space.deployed_key(r["canonical_arch"]) for r in meter.rows()}
    rows = []
    for key, members in space.deployed_members_by_key().items():
        acc = float(np.mean([oracle.evaluate(a, dataset).accuracy_pct for a in members]))
        row: dict[str, Any] = {"deployed_key": key, "arch": str(members[0]), "arch_index": space.index(members[0]),
                               "n_cells": len(members), "accuracy_pct": acc,
                               "input_dependent": space.output_depends_on_input(members[0]),
                               "throughput_img_per_s": np.nan, "energy_j_per_img": np.nan}
        if key in covered:
            try:
                m = meter.measure_arch(members[0], precision="fp16", batch_size=1024, dataset=dataset)
                row["throughput_img_per_s"], row["energy_j_per_img"] = m.throughput_img_per_s, m.energy_j_per_img
            except NotRecordedError:
                pass
        rows.append(row)
    return rows


def _points(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([[r["accuracy_pct"], r["throughput_img_per_s"], r["energy_j_per_img"]] for r in rows], float)


def max_share_log_no_floor(pts: np.ndarray, region: DeployRegion) -> float:
    """The largest exclusive share with log hardware axes but the floor at the lowest accuracy."""
    loose = DeployRegion(float(np.nanmin(pts[:, 0])) - 1e-9, region.throughput_ref_img_per_s,
                         region.energy_ref_j_per_img)
    return float(np.nanmax(loose.shares(pts, OBJECTIVES)))


def max_share_origin(pts: np.ndarray) -> float:
    """The largest exclusive share under the origin hypervolume (accuracy %, img/s, img/J)."""
    total = search_hypervolume(pts, OBJECTIVES)
    front = np.flatnonzero(non_dominated_mask(pts, OBJECTIVES))
    return max(1 - search_hypervolume(np.delete(pts, i, axis=0), OBJECTIVES) / total for i in front)


def study(space_name: str, dataset: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = network_table(space_name, dataset)
    learners = [r for r in rows if r["input_dependent"]]
    floor = median_floor([r["accuracy_pct"] for r in learners])
    measured = [r for r in learners if np.isfinite(r["throughput_img_per_s"])]
    if not measured:
        return {"space": space_name, "dataset": dataset, "deployed_networks": len(rows),
                "cannot_learn": len(rows) - len(learners), "measured": 0, "accuracy_floor_pct": round(floor, 4),
                "throughput_ref_img_per_s": "", "energy_ref_j_per_img": "", "front_size": 0, "deploy_hv": "",
                "max_share_deploy": float("nan"), "max_share_origin_all": float("nan"),
                "max_share_log_no_floor": float("nan")}, []
    pts = _points(measured)
    region = region_from_points(pts, OBJECTIVES, floor, floor_from="median of the space's deployed networks",
                                refs_from="the recorded profile's networks")
    shares = region.shares(pts, OBJECTIVES)
    front_idx = np.flatnonzero(shares > 0) if np.isfinite(shares).all() else np.array([], int)
    front = []
    for i in sorted(front_idx, key=lambda i: -shares[i]):
        front.append({**{k: measured[i][k] for k in ("deployed_key", "arch", "arch_index", "n_cells",
                                                      "accuracy_pct", "throughput_img_per_s", "energy_j_per_img")},
                      "share": float(shares[i])})
    summary = {
        "space": space_name, "dataset": dataset, "deployed_networks": len(rows),
        "cannot_learn": len(rows) - len(learners), "measured": len(measured),
        "accuracy_floor_pct": round(floor, 4),
        "throughput_ref_img_per_s": region.throughput_ref_img_per_s,
        "energy_ref_j_per_img": region.energy_ref_j_per_img,
        "front_size": len(front), "deploy_hv": region.volume(pts, OBJECTIVES),
        "max_share_deploy": max(f["share"] for f in front) if front else float("nan"),
        "max_share_origin_all": max_share_origin(_points([r for r in rows if np.isfinite(r["throughput_img_per_s"])])),
        "max_share_log_no_floor": max_share_log_no_floor(pts, region),
    }
    return summary, front


def write_floors(summaries: list[dict[str, Any]]) -> Path:
    """The default floors (`nasenergy.quality.default_floor_pct`) as JSON beside the embedded tables."""
    path = Path(__file__).resolve().parent.parent / "nasenergy" / "data" / FLOORS_FILE
    floors: dict[str, dict[str, float]] = {}
    for s in summaries:
        floors.setdefault(s["space"], {})[s["dataset"]] = s["accuracy_floor_pct"]
    doc = {"what": "median search-metric accuracy (TSS: 12-epoch x-valid, SSS: 90-epoch x-valid) over the "
                   "deployed networks of the space that can learn, each the mean over its cells, from the "
                   "embedded tables; the default accuracy floor of nasenergy's quality measure",
           "written_by": "python experiments/deploy_region.py --write-floors", "floors": floors}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("results/deploy_region"))
    parser.add_argument("--spaces", default="tss,sss", help="comma-separated (default: tss,sss)")
    parser.add_argument("--write-floors", action="store_true",
                        help="also write the default accuracy floors (each space and dataset's median) to "
                             "nasenergy/data/" + FLOORS_FILE)
    args = parser.parse_args(argv)
    spaces = [s for s in args.spaces.split(",") if s]
    if not spaces or any(s not in SPACES for s in spaces):
        parser.error(f"--spaces takes a comma-separated list of {', '.join(SPACES)}")

    def run() -> int:
        args.out.mkdir(parents=True, exist_ok=True)
        summaries = []
        for space_name in spaces:
            for dataset in DATASETS:
                summary, front = study(space_name, dataset)
                summaries.append(summary)
                if front:
                    _write(args.out / f"front_{space_name}_{dataset}.csv", front)
                print(f"{space_name} {dataset}: floor {summary['accuracy_floor_pct']:.2f} %, "
                      f"{summary['measured']} measured networks, front {summary['front_size']}, "
                      f"largest share {summary['max_share_deploy']:.3f} (origin measure "
                      f"{summary['max_share_origin_all']:.3f}, log axes without floor "
                      f"{summary['max_share_log_no_floor']:.3f})", flush=True)
        _write(args.out / "summary.csv", summaries)
        if args.write_floors:
            write_floors(summaries)
        return 0

    return run_main(run)


if __name__ == "__main__":
    sys.exit(main())
