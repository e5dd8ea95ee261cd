"""Benchmark of the CUDA meter: cost and repeatability per TSS cell.

For ``--cells`` random TSS cells (seeded), every cell is measured ``--repeats`` times
independently in two modes:

* ``throughput``: `CudaMeter` with ``measure_energy=False`` (the fast filter path);
* ``energy``: `CudaMeter` with energy per image.

The coefficient of variation (CV) of a cell is over its independent repeats (not within one
measurement); the cost is each measurement's own ``measure_cost_s``, on a freshly built model each
time (as in a search, so FLOP counting is included; building the model is not). Writes ``cells.csv`` (one
row per measurement), ``summary.csv`` (one row per mode) and ``README.md`` to ``--out``.

Usage (on a GPU machine)::

    PYTHONPATH=. python3 experiments/bench_meter.py --cells 20 --out results/meter_benchmark
"""

from __future__ import annotations

import csv
import datetime as dt
import platform
import statistics
import sys
import time
from pathlib import Path
from nasenergy._cli import OneLineParser
from nasenergy.hardware.cuda_meter import CudaMeter
from nasenergy.hardware.peaks import PeakCache
from search_spaces import get_space

TARGETS = {"throughput": {"cost_s": 0.15, "cv": 0.01}, "energy": {"cost_s": 1.5, "cv": 0.02}}


def _cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else 0.0


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--precision", default="fp16")
    p.add_argument("--energy-window-s", type=float, help="default: the meter's")
    p.add_argument("--energy-repeats", type=int, help="default: the meter's")
    p.add_argument("--out", type=Path, default=Path("results/meter_benchmark"))
    args = p.parse_args(argv)

    import torch


    if not torch.cuda.is_available():
        print("error: this benchmark needs a CUDA GPU", file=sys.stderr)
        return 2
    space = get_space("tss")
    cells = space.sample(args.cells, seed=args.seed)
    peaks = PeakCache()
    energy_options = {k: v for k, v in (("energy_window_s", args.energy_window_s),
                                         ("energy_repeats", args.energy_repeats)) if v is not None}
    meters = {
        "throughput": CudaMeter(measure_energy=False, peak_cache=peaks),
        "energy": CudaMeter(peak_cache=peaks, **energy_options),
    }
    # One-off costs (idle power, peak matmul, cuDNN autotuning of the common shapes) are paid
    # on a warm-up cell that is not reported.
    warm = space.build(space.arch_at(0), "cifar10")
    for meter in meters.values():
        meter.measure(warm, space.input_shape("cifar10"), batch_size=args.batch_size,
                      precision=args.precision)

    args.out.mkdir(parents=True, exist_ok=True)
    fields = ["cell", "arch_index", "arch", "mode", "repeat", "flops_per_img", "params",
              "throughput_img_per_s", "utilization", "energy_j_per_img", "avg_power_w",
              "sm_clock_mhz", "throughput_cv_within", "energy_cv_within", "measure_cost_s"]
    rows: list[dict[str, object]] = []
    t_all = time.perf_counter()
    for c, arch in enumerate(cells):
        for mode, meter in meters.items():
            for r in range(args.repeats):
                model = space.build(arch, "cifar10")   # fresh: the FLOP count is paid every time
                m = meter.measure(model, space.input_shape("cifar10"), batch_size=args.batch_size,
                                  precision=args.precision)
                rows.append({
                    "cell": c, "arch_index": space.index(arch), "arch": str(arch), "mode": mode,
                    "repeat": r, "flops_per_img": m.flops_per_img, "params": m.params,
                    "throughput_img_per_s": m.throughput_img_per_s, "utilization": m.utilization,
                    "energy_j_per_img": m.energy_j_per_img, "avg_power_w": m.avg_power_w,
                    "sm_clock_mhz": m.sm_clock_mhz, "throughput_cv_within": m.throughput_cv,
                    "energy_cv_within": m.energy_cv, "measure_cost_s": m.measure_cost_s,
                })
        last = [r for r in rows if r["cell"] == c]
        print(f"cell {c + 1}/{len(cells)} {space.index(arch):5d}: "
              f"{statistics.median(r['throughput_img_per_s'] for r in last):,.0f} img/s, "
              f"energy {statistics.median(r['energy_j_per_img'] for r in last if r['mode'] == 'energy') * 1e3:.4f} mJ/img",
              flush=True)
    total_s = time.perf_counter() - t_all
    with open(args.out / "cells.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    summary = []
    for mode in meters:
        per_cell_cost, per_cell_cv, per_cell_ecv = [], [], []
        for c in range(len(cells)):
            rs = [r for r in rows if r["cell"] == c and r["mode"] == mode]
            per_cell_cost.append(statistics.median(float(r["measure_cost_s"]) for r in rs))
            per_cell_cv.append(_cv([float(r["throughput_img_per_s"]) for r in rs]))
            if mode == "energy":
                per_cell_ecv.append(_cv([float(r["energy_j_per_img"]) for r in rs]))
        cv = per_cell_ecv if mode == "energy" else per_cell_cv
        target = TARGETS[mode]
        summary.append({
            "mode": mode, "cells": len(cells), "repeats": args.repeats,
            "cost_s_median": statistics.median(per_cell_cost), "cost_s_max": max(per_cell_cost),
            "cv_quantity": "energy_j_per_img" if mode == "energy" else "throughput_img_per_s",
            "cv_median": statistics.median(cv), "cv_max": max(cv),
            "throughput_cv_median": statistics.median(per_cell_cv),
            "target_cost_s": target["cost_s"], "target_cv": target["cv"],
            "cells_meeting_cost": sum(x <= target["cost_s"] for x in per_cell_cost),
            "cells_meeting_cv": sum(x <= target["cv"] for x in cv),
        })
    with open(args.out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(summary)

    dev = meters["energy"]
    lines = [
        "# Meter benchmark",
        "",
        f"Measured on {dev.device_name} (driver {dev.driver_version}), torch {torch.__version__}, "
        f"Python {platform.python_version()}, {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC. "
        f"Energy counter: {'yes' if dev.has_energy_counter else 'no (power sampling)'}; "
        f"idle power {dev.idle_power_w():.1f} W (measured; "
        f"{'settled' if dev.idle_settled else 'not settled: an upper bound'}). "
        "GPU clocks and settings were left as found.",
        "",
        f"Command: `PYTHONPATH=. python3 experiments/bench_meter.py --cells {args.cells} "
        f"--repeats {args.repeats} --seed {args.seed} --batch-size {args.batch_size} "
        f"--precision {args.precision}`; energy windows: {dev.energy_repeats} of at least "
        f"{dev.energy_window_s} s each, after {dev.energy_warmup_s} s of warm-up.",
        "",
        f"{args.cells} random TSS cells (seed {args.seed}), CIFAR input 3x32x32, {args.precision}, "
        f"batch size {args.batch_size}; each cell measured {args.repeats} times independently per "
        "mode, each time on a freshly built model. CV = std/mean over those independent "
        "measurements; cost = each measurement's wall time including FLOP counting (median over "
        f"its repeats, then per cell). Total benchmark time {total_s:.0f} s.",
        "",
        "| mode | cost median (s) | cost max (s) | target cost (s) | cells within cost | "
        "CV of | CV median | CV max | target CV | cells within CV |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['mode']} | {s['cost_s_median']:.3f} | {s['cost_s_max']:.3f} | "
            f"{s['target_cost_s']} | {s['cells_meeting_cost']}/{s['cells']} | {s['cv_quantity']} | "
            f"{100 * s['cv_median']:.2f} % | {100 * s['cv_max']:.2f} % | {100 * s['target_cv']:.0f} % | "
            f"{s['cells_meeting_cv']}/{s['cells']} |")
    lines += ["", "All figures: measured. Files: `cells.csv` (every measurement), `summary.csv`.", ""]
    (args.out / "README.md").write_text("\n".join(lines))
    print("\n".join(lines))
    for meter in meters.values():
        meter.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
