"""The cost of each zero-cost proxy per network: median and 90th percentile seconds, on the CPU or a GPU.

Builds a seeded random sample of TSS deployed networks at a dataset's input and classes and times
every proxy of `nasenergy.proxies` on each (the proxies' own timers: the private copy of the
network, the passes and the reduction; building the network is timed apart, ``build``). The first
network is computed twice and its first timing dropped (warm-up: allocator, kernels, lazy imports).

Writes ``cost_<device>_<dataset>.csv`` (one row per network and proxy) and ``summary_<device>_<dataset>.csv``
(median, p90 and mean seconds per proxy, and per network for all proxies together) to ``--out``
(default ``results/proxies_cost``), and prints the summary::

    python experiments/proxies_cost.py --n 10 --device cpu --threads 1
    python experiments/proxies_cost.py --from-table chunks/*.csv --tag cpu_sample   # costs a table recorded
    PYTHONPATH=. python3 experiments/proxies_cost.py --n 200 --device cuda --out $OUT/proxies_cost
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from pathlib import Path

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.proxies.compute import compute_proxies, resolve_device
from nasenergy.proxies.data import DEFAULT_BATCH_SIZE
from nasenergy.proxies.registry import proxy_names
from nasenergy.proxies.table import read_rows
from search_spaces import DATASETS, get_space

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "results" / "proxies_cost"


def summary_rows(rows: list[dict]) -> list[dict[str, object]]:
    """Median, p90 and mean seconds per proxy (and ``build``), and per network for all proxies."""
    by_net: dict[object, float] = {}
    for r in rows:
        if r["proxy"] in proxy_names():
            by_net[r["arch_index"]] = by_net.get(r["arch_index"], 0.0) + r["cost_s"]
    summary = []
    for name in ("build", *proxy_names(), "all_proxies"):
        xs = np.array(list(by_net.values()) if name == "all_proxies" else [r["cost_s"] for r in rows if r["proxy"] == name])
        if len(xs) == 0:
            continue
        summary.append({"proxy": name, "n_networks": len(xs), "median_s": f"{np.median(xs):.4g}",
                        "p90_s": f"{np.percentile(xs, 90):.4g}", "mean_s": f"{xs.mean():.4g}"})
    return summary


def write_summary(out: Path, tag: str, summary: list[dict[str, object]], header: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"summary_{tag}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    print(header)
    for s in summary:
        print(f"{s['proxy']:<12} median {s['median_s']:>8} s  p90 {s['p90_s']:>8} s  mean {s['mean_s']:>8} s")


def run_from_table(args: argparse.Namespace) -> int:
    rows, devices = [], set()
    for path in args.from_table:
        for r in read_rows(Path(path)):
            devices.add(r["device"])
            key = (r["dataset"], r["arch_index"])
            rows.extend({"arch_index": key, "proxy": p, "cost_s": float(r[f"{p}_cost_s"])} for p in proxy_names()
                        if f"{p}_cost_s" in r)
    write_summary(Path(args.out), args.tag, summary_rows(rows),
                  f"{len({r['arch_index'] for r in rows})} rows of {len(args.from_table)} table file(s), "
                  f"device {', '.join(sorted(devices))}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.from_table:
        return run_from_table(args)
    import torch  # lazy: torch is needed only to compute

    device = resolve_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    space = get_space("tss")
    classes = space.deployed_classes()
    archs = sorted(random.Random(args.seed).sample(classes, min(args.n, len(classes))), key=space.index)
    rows = []
    for k, arch in enumerate(archs):
        t0 = time.perf_counter()
        model = space.build_deployed(arch, args.dataset, seed=0)
        build_s = time.perf_counter() - t0
        shape, classes_n = space.input_shape(args.dataset), space.num_classes(args.dataset)
        if k == 0:
            compute_proxies(model, shape, classes_n, device=device, batch_size=args.batch_size)  # warm-up
        report = compute_proxies(model, shape, classes_n, device=device, batch_size=args.batch_size)
        rows.append({"arch_index": space.index(arch), "proxy": "build", "cost_s": build_s})
        rows.extend({"arch_index": space.index(arch), "proxy": r.name, "cost_s": r.cost_s} for r in report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = f"{device.replace(':', '')}_{args.dataset}"
    with open(out / f"cost_{tag}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=("arch_index", "proxy", "cost_s"))
        w.writeheader()
        w.writerows({**r, "cost_s": f"{r['cost_s']:.5g}"} for r in rows)
    device_name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"
    write_summary(out, tag, summary_rows(rows),
                  f"{len(archs)} networks, {args.dataset}, batch {args.batch_size}, {device_name}, "
                  f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="experiments/proxies_cost.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=10, help="networks in the sample (default 10)")
    p.add_argument("--dataset", default="cifar10", choices=DATASETS)
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--seed", type=int, default=0, help="seed of the network sample")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--from-table", nargs="+", help="summarise the costs recorded in these tables or chunks instead")
    p.add_argument("--tag", default="table", help="file name tag of a --from-table summary (default table)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
