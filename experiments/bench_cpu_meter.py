"""How long the CPU meter takes per candidate, and how repeatable its throughput is.

For a seeded sample of TSS cells, each setting (batch size, timed repeats) measures every cell's
deployed network as ``python -m nasenergy.search --hardware cpu`` does (`measure_deployed`, fp32,
CIFAR-10 input), twice; it records the wall time of each measurement and the two throughputs.
Writes ``results/cpu_meter/timings.csv`` and ``README.md`` (figures `measured` on this machine).

    python experiments/bench_cpu_meter.py --cells 6 --settings 256x5 64x3 32x3
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

from nasenergy._cli import OneLineParser
from nasenergy.errors import UsageError
from nasenergy.hardware.cpu_meter import CpuMeter
from nasenergy.hardware.deployed import measure_deployed
from search_spaces import get_space

OUT = Path(__file__).resolve().parents[1] / "results" / "cpu_meter"


def _setting(text: str) -> tuple[int, int]:
    try:
        batch, repeats = (int(v) for v in text.split("x"))
    except ValueError:
        raise UsageError(f"a setting is BATCHxREPEATS, e.g. 32x3; got {text!r}") from None
    if batch < 1 or repeats < 1:
        raise UsageError(f"batch and repeats must be positive, got {text!r}")
    return batch, repeats


def run(cells: int, settings: list[tuple[int, int]], seed: int) -> list[dict[str, object]]:
    """One row per (setting, cell): wall seconds of two measurements and their throughputs."""
    import numpy as np  # lazy: heavy
    import torch  # lazy: heavy

    space = get_space("tss")
    indices = sorted(int(i) for i in np.random.default_rng(seed).choice(space.size, cells, replace=False))
    rows: list[dict[str, object]] = []
    for batch, repeats in settings:
        meter = CpuMeter(n_repeats=repeats)
        meter.peak_flops("fp32")  # once per process, as in a search
        for index in indices:
            arch = space.arch_at(index)
            walls, rates = [], []
            for _ in range(2):
                t0 = time.perf_counter()
                m = measure_deployed(meter, space, arch, "cifar10", batch_size=batch, precision="fp32")
                walls.append(time.perf_counter() - t0)
                rates.append(m.throughput_img_per_s)
            rows.append({"batch_size": batch, "n_repeats": repeats, "arch_index": index,
                         "flops_per_img": m.flops_per_img, "wall_s_1": round(walls[0], 3),
                         "wall_s_2": round(walls[1], 3), "throughput_1": round(rates[0], 1),
                         "throughput_2": round(rates[1], 1),
                         "rerun_diff_pct": round(200 * abs(rates[0] - rates[1]) / (rates[0] + rates[1]), 2),
                         "threads": torch.get_num_threads(), "timing_source": "measured"})
            print(rows[-1], flush=True)
    return rows


def write(rows: list[dict[str, object]], command: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "timings.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines = [
        "# CPU meter: seconds per candidate",
        "",
        f"`{command}` on {platform.node() or 'this machine'} ({os.cpu_count()} CPUs, {platform.machine()}, "
        f"Python {platform.python_version()}), {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; load average "
        f"at the end {os.getloadavg()[0]:.2f}.",
        "",
        "Each cell's deployed network measured twice per setting, fp32, CIFAR-10 input, as "
        "`--hardware cpu` measures a candidate (`measure_deployed`); wall time includes building the "
        "network and counting its FLOPs. `rerun diff` is the throughput difference between the two "
        "measurements of a cell (its repeatability).",
        "",
        "| batch | repeats | cells | median s/candidate | max s/candidate | median rerun diff % | max rerun diff % |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key in dict.fromkeys((r["batch_size"], r["n_repeats"]) for r in rows):
        sel = [r for r in rows if (r["batch_size"], r["n_repeats"]) == key]
        walls = [float(r[c]) for r in sel for c in ("wall_s_1", "wall_s_2")]
        diffs = [float(r["rerun_diff_pct"]) for r in sel]
        lines.append(f"| {key[0]} | {key[1]} | {len(sel)} | {statistics.median(walls):.2f} | {max(walls):.2f} | "
                     f"{statistics.median(diffs):.1f} | {max(diffs):.1f} |")
    lines += ["", "`timings.csv` holds every measurement."]
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", type=int, default=6)
    p.add_argument("--settings", nargs="+", default=["256x5", "32x3"], help="BATCHxREPEATS")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    settings = [_setting(s) for s in args.settings]
    rows = run(args.cells, settings, args.seed)
    if not args.no_write:
        write(rows, "python experiments/bench_cpu_meter.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
