"""What the filter saves in real work: searches that train every evaluated network (``--oracle
train``) with the default filter and with ``--filter none``, same budget, same data, declared
seeds, both rivals run by this script.

Quality measure (fixed before any run): the 2-D hypervolume of the trained networks' front in
(validation accuracy, log10 throughput), both maximised, in the box from (chance accuracy, the
lowest throughput measured in either run of the seed) to (100 %, the highest), normalised to 1.
The saving: training seconds spent per unit of final quality, and the training seconds the
default needs to reach the final quality of ``--filter none`` (paired by seed; bootstrap 95 %
intervals over the seeds).

    python experiments/train_filter_saving.py --out results/train_filter_saving --seeds 100,101,102,103,104
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RIVALS = {"default": [], "none": ["--filter", "none"]}


def run_search(rival: str, seed: int, args: argparse.Namespace, runs: Path) -> Path:
    """One search (skipped when its run folder already finished)."""
    out = runs / f"{rival}-seed{seed}"
    if (out / "report.md").is_file():
        return out
    command = [sys.executable, "-m", "nasenergy.search", "--oracle", "train", "--data", args.data, "--budget",
               str(args.budget), "--epochs", str(args.epochs), "--seed", str(seed), "--out", str(out), "--quiet",
               *RIVALS[rival]]
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{rival} seed {seed} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    print(f"{rival} seed {seed}: {time.perf_counter() - t0:.0f} s", flush=True)
    return out


def evaluations(out: Path) -> list[dict[str, float]]:
    """The run's trained networks in evaluation order: accuracy, throughput, training seconds."""
    with open(out / "candidates.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["outcome"] == "evaluated"]
    rows.sort(key=lambda r: int(r["evaluation_number"]))
    return [{"acc": float(r["accuracy_pct"]), "thr": float(r["throughput_img_per_s"]), "train_s": float(r["eval_cost_s"]),
             "measure_s": float(r["measure_cost_s"] or 0.0),
             "train_j": float(r["train_energy_j"]) if r.get("train_energy_j") else float("nan"),
             "device": r.get("train_device") or ""} for r in rows]


def hypervolume(points: list[tuple[float, float]], acc0: float, lt0: float, lt1: float) -> float:
    """Normalised 2-D hypervolume of (accuracy %, log10 throughput) points, both maximised."""
    if lt1 <= lt0:
        return 0.0
    pts = sorted(((min(max(a, acc0), 100.0) - acc0) / (100.0 - acc0), (min(max(t, lt0), lt1) - lt0) / (lt1 - lt0))
                 for a, t in points)
    area, best_t = 0.0, 0.0
    for a, t in reversed(pts):  # from the most accurate down
        if t > best_t:
            area += a * (t - best_t)
            best_t = t
    return area


def boot(values: np.ndarray, rng: np.random.Generator, n: int = 5000) -> tuple[float, float, float]:
    means = [values[rng.integers(0, len(values), len(values))].mean() for _ in range(n)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(values.mean()), float(lo), float(hi)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "train_filter_saving")
    parser.add_argument("--data", default="digits")
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--chance-pct", type=float, default=10.0)
    parser.add_argument("--seeds", default="100,101,102,103,104")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    per_seed = []
    devices: set[str] = set()
    for seed in seeds:
        runs = {rival: evaluations(run_search(rival, seed, args, args.runs)) for rival in RIVALS}
        thr = [e["thr"] for ev in runs.values() for e in ev]
        lt0, lt1 = math.log10(min(thr)), math.log10(max(thr))
        row: dict[str, float] = {"seed": seed}
        curves = {}
        for rival, ev in runs.items():
            curve = [hypervolume([(e["acc"], math.log10(e["thr"])) for e in ev[:k]], args.chance_pct, lt0, lt1)
                     for k in range(1, len(ev) + 1)]
            spent = np.cumsum([e["train_s"] for e in ev])
            curves[rival] = (curve, spent)
            row[f"{rival}_evaluated"] = len(ev)
            row[f"{rival}_quality"] = curve[-1]
            row[f"{rival}_best_acc_pct"] = max(e["acc"] for e in ev)
            row[f"{rival}_train_s"] = float(spent[-1])
            row[f"{rival}_measure_s"] = float(sum(e["measure_s"] for e in ev))
            row[f"{rival}_train_s_per_quality"] = float(spent[-1] / curve[-1]) if curve[-1] > 0 else float("inf")
            row[f"{rival}_train_j"] = float(sum(e["train_j"] for e in ev))  # nan where no energy counter
            row[f"{rival}_train_j_per_quality"] = row[f"{rival}_train_j"] / curve[-1] if curve[-1] > 0 else float("inf")
            devices.update(e["device"] for e in ev)
        target = curves["none"][0][-1]
        reach = next((float(s) for q, s in zip(*curves["default"]) if q >= target), float("nan"))
        row["default_train_s_to_none_quality"] = reach
        per_seed.append(row)
    fields = list(per_seed[0])
    with open(args.out / "per_seed.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(per_seed)
    rng = np.random.default_rng(0)
    summary = {}
    has_energy = all(not math.isnan(r[f"{rival}_train_j"]) for r in per_seed for rival in RIVALS)
    keys = ["quality", "best_acc_pct", "train_s", "train_s_per_quality"]
    keys += ["train_j", "train_j_per_quality"] if has_energy else []
    for key in keys:
        for rival in RIVALS:
            summary[f"{rival}_{key}"] = boot(np.array([r[f"{rival}_{key}"] for r in per_seed]), rng)
    for unit in ("s", "j") if has_energy else ("s",):
        ratio = np.array([r[f"default_train_{unit}_per_quality"] / r[f"none_train_{unit}_per_quality"] for r in per_seed])
        summary[f"train_{unit}_per_quality_ratio_default_over_none"] = boot(ratio, rng)
    reached = [r for r in per_seed if not math.isnan(r["default_train_s_to_none_quality"])]
    summary["seeds_where_default_reached_none_quality"] = [len(reached), len(per_seed)]
    if reached:
        share = np.array([r["default_train_s_to_none_quality"] / r["none_train_s"] for r in reached])
        summary["default_train_s_to_none_quality_share"] = boot(share, rng)
    summary["settings"] = {"data": args.data, "budget": args.budget, "epochs": args.epochs, "seeds": seeds,
                           "chance_pct": args.chance_pct, "training_devices": sorted(devices),
                           "energy": "measured (NVML board counter)" if has_energy else "none (no energy counter)"}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
