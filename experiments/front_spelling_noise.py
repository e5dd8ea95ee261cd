"""Spelling noise on the true front: how much of the normalised hypervolume one deployed network holds, and what a perfect search could reach.

Many TSS cells compute the same function: they deploy to the same network (`deployed_key`: the
same structure once ``none`` edges and dead ops are gone). NATS-Bench trained every cell on its
own, so the cells that spell one deployed network carry different recorded accuracies, the
training noise of one function. The search-efficiency yardstick (``experiments/search_efficiency.py``)
takes its true front over cells and every recorded run, so a front point holds the *luckiest*
cell's accuracy. A search, however, evaluates each network once (`nasenergy.run.network_key`:
canonical class and deployed structure), with the accuracy of whichever cell of the class it
proposed first; a later cell of the class is a duplicate.

For each dataset this script scores every profiled network as the search does (recorded
default-clock figures of the deployed profile, optimal-clock figures **modelled**, accuracies
**recorded**: the 12-epoch search metric, every recorded run), and writes:

* ``shares.csv``: each deployed network on the true front, the share of the true front's
  normalised hypervolume it holds (the ratio lost when its points are left out), its cells, the
  networks (search keys) they fall into, and their accuracy range;
* ``spellings_<dataset>.csv``: for the deployed network of the largest share, each search key and
  accuracy its cells were recorded at, how many cells (a cell's recorded runs spread evenly) have
  it, and the normalised-hypervolume ratio of a search that found every other true-front point and
  this network at that accuracy;
* ``ceiling.csv``: a perfect search, simulated: every network of the profile evaluated once, each
  with a random cell of its class and a random recorded run (``--draws`` times); the mean, 5th and
  95th percentile of its normalised-hypervolume ratio and the share of draws at or above 0.99.

::

    python experiments/front_spelling_noise.py [--datasets cifar10,cifar100] [--draws 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from lib.efficiency_front import build_subspace, normalised_hv, possible_accuracies, search_config

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.pareto import non_dominated_mask

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "front_spelling_noise"
LEVEL = 0.99
DATASETS = ("cifar10", "cifar100", "ImageNet16-120")
SENSES = ("maximize", "maximize", "minimize")


def spelling_distribution(values_per_cell: Sequence[Sequence[float]]) -> dict[float, float]:
    """The accuracy an evaluation of a random cell returns: each cell weighs 1, spread evenly over
    its recorded runs' values; value -> weight (cells), ascending."""
    weights: dict[float, float] = {}
    for values in values_per_cell:
        vals = list(values)
        for v in (round(float(v), 6) for v in vals):
            weights[v] = weights.get(v, 0.0) + 1.0 / len(vals)
    return dict(sorted(weights.items()))


def possible_front(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Which networks can be on the front for some draw of their accuracies: ``low`` and ``high``
    are ``(n, 3)`` rows (accuracy %, img/s, J/img) at each network's lowest and highest recorded
    accuracy; a network is left out when another one, at its lowest accuracy, dominates it at its
    highest."""
    keep = np.ones(len(high), dtype=bool)
    for i in range(len(high)):
        h = high[i]
        dom = (low[:, 0] >= h[0]) & (low[:, 1] >= h[1]) & (low[:, 2] <= h[2]) & (
            (low[:, 0] > h[0]) | (low[:, 1] > h[1]) | (low[:, 2] < h[2]))
        dom[i] = False
        keep[i] = not dom.any()
    return keep


def simulate_ceiling(cells: Sequence[Sequence[Sequence[float]]], hardware: np.ndarray, ratio: Callable[[np.ndarray], float],
                     draws: int, seed: int) -> np.ndarray:
    """The ratio of a search that evaluated every network once, ``draws`` times: network ``k``'s
    accuracy is a random run of a random cell of ``cells[k]`` (a list of each cell's recorded
    values), its throughput and energy ``hardware[k]``; ``ratio`` scores the front of the rows."""
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    for d in range(draws):
        acc = np.array([_draw(rng, c) for c in cells])
        rows = np.column_stack([acc, hardware])
        out[d] = ratio(rows[non_dominated_mask(rows, SENSES)])
    return out


def _draw(rng: np.random.Generator, cells: Sequence[Sequence[float]]) -> float:
    runs = cells[int(rng.integers(len(cells)))]
    return float(runs[int(rng.integers(len(runs)))])


def _run(args: argparse.Namespace) -> int:
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    bad = [d for d in datasets if d not in DATASETS]
    if bad or not datasets:
        raise UsageError(f"--datasets: unknown {', '.join(bad) or '(none)'}; choose from {', '.join(DATASETS)}")
    if args.draws < 1:
        raise UsageError(f"--draws must be at least 1, got {args.draws}")
    from nasenergy.search.command.components import build_components  # lazy: loads the profile and the tables

    args.out.mkdir(parents=True, exist_ok=True)
    shares_rows: list[dict[str, Any]] = []
    ceiling_rows: list[dict[str, Any]] = []
    for ds in datasets:
        config = search_config("tpe", 0, 200, dataset=ds, profile=args.profile)
        comp = build_components(config)
        sub = build_subspace(config, comp)
        space, oracle = comp.space, comp.oracle
        values: dict[str, list[list[float]]] = {}  # network key -> each cell's recorded values
        structure: dict[str, str] = {}
        for i in range(space.size):
            arch = space.arch_at(i)
            key = comp.key_of(arch)
            if key in sub.classes:
                values.setdefault(key, []).append(sorted(possible_accuracies(oracle, arch, ds)))
                structure[key] = str(space.deployed_key(arch))

        def ratio(points: np.ndarray) -> float:
            return normalised_hv(points, sub.lower, sub.upper) / sub.true_hv_norm if len(points) else 0.0

        front = np.asarray(sub.true_front, dtype=float)
        groups = [str(space.deployed_key(space.arch_at(i))) for i in sub.true_front_arch_index]
        per_group = []
        first_row = {g: front[groups.index(g)] for g in dict.fromkeys(groups)}  # a front row of each network
        for g, row_of_g in first_row.items():
            keys = [k for k in values if structure[k] == g]
            flat = [a for k in keys for cell in values[k] for a in cell]
            row = {"dataset": ds, "deployed_network": g, "cells": sum(len(values[k]) for k in keys),
                   "networks": len(keys), "distinct_accuracies": len({round(a, 6) for a in flat}),
                   "accuracy_min_pct": round(min(flat), 4), "accuracy_mean_pct": round(float(np.mean(flat)), 4),
                   "accuracy_max_pct": round(max(flat), 4),
                   "throughput_img_per_s": float(row_of_g[1]), "energy_j_per_img": float(row_of_g[2]),
                   "share_of_normalised_hv": round(1.0 - ratio(front[[x != g for x in groups]]), 6)}
            per_group.append((row, keys))
        per_group.sort(key=lambda t: -t[0]["share_of_normalised_hv"])
        shares_rows += [t[0] for t in per_group]
        top, top_keys = per_group[0]
        rest = front[[x != top["deployed_network"] for x in groups]]
        point = first_row[top["deployed_network"]].copy()
        with open(args.out / f"spellings_{ds}.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["network", "accuracy_pct", "cells", "ratio_with_every_other_front_point"])
            for k in top_keys:
                for v, n in spelling_distribution(values[k]).items():
                    point[0] = v
                    w.writerow([k, v, round(n, 4), round(ratio(np.vstack([rest, point[None, :]])), 6)])

        keys = list(values)
        hardware = np.array([[sub.classes[k].throughput_img_per_s, sub.classes[k].energy_j_per_img] for k in keys])
        low = np.column_stack([[min(min(c) for c in values[k]) for k in keys], hardware])
        high = np.column_stack([[max(max(c) for c in values[k]) for k in keys], hardware])
        keep = possible_front(low, high)
        sims = simulate_ceiling([values[k] for k, kept in zip(keys, keep) if kept], hardware[keep], ratio,
                                args.draws, args.seed)
        ceiling_rows.append({"dataset": ds, "networks": len(keys), "networks_that_can_be_on_the_front": int(keep.sum()),
                             "draws": args.draws, "ratio_mean": round(float(sims.mean()), 5),
                             "ratio_p05": round(float(np.percentile(sims, 5)), 5),
                             "ratio_p95": round(float(np.percentile(sims, 95)), 5),
                             f"share_ge_{LEVEL}": round(float(np.mean(sims >= LEVEL)), 4)})
        print(f"{ds}: {top['deployed_network']!r} ({top['cells']} cells, {top['networks']} networks) holds "
              f"{top['share_of_normalised_hv']:.3f} of the normalised hypervolume; a perfect search reaches "
              f"{sims.mean():.4f} on average ({np.mean(sims >= LEVEL):.1%} of draws >= {LEVEL})", flush=True)
    _write(args.out / "shares.csv", shares_rows)
    _write(args.out / "ceiling.csv", ceiling_rows)
    print(f"wrote {args.out}")
    return 0


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", default="cifar10,cifar100", help="comma-separated, from: " + ", ".join(DATASETS))
    p.add_argument("--draws", type=int, default=2000, help="simulated perfect searches per dataset")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated draws")
    p.add_argument("--profile", default=None, metavar="PATH", help="the recorded profile (default: the shipped one)")
    p.add_argument("--out", type=Path, default=OUT)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return run_main(lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
