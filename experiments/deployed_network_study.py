"""The deployed network against the as-built one on a GPU: throughput, energy, memory format, counters.

For a seeded random sample of TSS deployed classes (one network per `space.deployed_key`), on the
CIFAR input shape at one precision and batch size, this measures with `CudaMeter` (CUDA graphs,
NVML energy counter, clocks never changed):

* the **deployed** network in channels-last and in contiguous memory format (throughput, energy
  per image, and the GPU counters over the energy window: NVML GPM metrics where the GPU has them);
* the **as-built** NATS network of the same cell in channels-last (throughput only), the form the
  earlier profile recorded.

Subcommands: ``measure`` (on a GPU; one CSV per process, ``--shard K/N`` for several GPUs) and
``summarize`` (here; merges CSVs into ``--out`` with a README).

Usage::

    CUDA_VISIBLE_DEVICES=0 PYTHONPATH=. python3 experiments/deployed_network_study.py measure --n 400 --out-csv $OUT/a.csv
    python experiments/deployed_network_study.py summarize a.csv b.csv --out results/deployed_network
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.cuda_meter import CudaMeter
from profile_tss_space import parse_shard
from search_spaces import get_space

FIELDS = ("arch", "arch_index", "deployed_key", "precision", "batch_size",
          "params_as_built", "flops_as_built", "params_deployed", "flops_deployed",
          "tput_as_built_cl", "tput_deployed_cl", "tput_deployed_contig",
          "energy_deployed_cl", "energy_deployed_contig", "power_deployed_cl", "power_deployed_contig",
          "sm_clock_cl", "sm_clock_contig", "counters_kind",
          "sm_util_cl", "sm_occ_cl", "dram_bw_cl", "tensor_cl", "gpu_util_cl", "mem_util_cl",
          "sm_util_contig", "sm_occ_contig", "dram_bw_contig", "tensor_contig", "gpu_util_contig", "mem_util_contig",
          "device", "driver", "torch", "seconds")


def sample_classes(space: Any, n: int, seed: int) -> list[Any]:
    """`n` deployed-class representatives in a seeded random order."""
    import numpy as np

    reps = space.deployed_classes()
    order = np.random.default_rng(seed).permutation(len(reps))
    return [reps[int(i)] for i in order[:n]]


def _counter_cols(counters: Any, suffix: str) -> dict[str, Any]:
    names = ("sm_util_pct", "sm_occupancy_pct", "dram_bw_util_pct", "tensor_util_pct", "gpu_util_pct", "memory_util_pct")
    cols = ("sm_util", "sm_occ", "dram_bw", "tensor", "gpu_util", "mem_util")
    return {f"{c}_{suffix}": ("" if counters is None or getattr(counters, n) is None else getattr(counters, n))
            for c, n in zip(cols, names)}


def cmd_measure(args: argparse.Namespace) -> int:
    import torch


    if not torch.cuda.is_available():
        print("error: measuring needs a CUDA GPU", file=sys.stderr)
        return 2
    t_start = time.perf_counter()
    space = get_space("tss")
    shard, n_shards = args.shard
    todo = sample_classes(space, args.n, args.seed)[shard::n_shards]
    meter = CudaMeter(energy_repeats=1, energy_window_s=args.energy_window_s)
    throughput_only = CudaMeter(measure_energy=False)
    shape = space.input_shape("cifar10")
    args.out_csv.parent.mkdir(parents=True, exist_ok=True)

    def build(arch: Any) -> tuple[Any, Any]:
        return space.build(arch, "cifar10"), space.build_deployed(arch, "cifar10")

    with open(args.out_csv, "w", newline="") as f, concurrent.futures.ThreadPoolExecutor(1) as pool:
        writer = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        future = pool.submit(build, todo[0])
        for k, arch in enumerate(todo):
            if time.perf_counter() - t_start > args.time_limit_s:
                print(f"stopping at the time limit after {k} classes", flush=True)
                break
            t0 = time.perf_counter()
            built, deployed = future.result()
            if k + 1 < len(todo):
                future = pool.submit(build, todo[k + 1])
            kw = {"batch_size": args.batch_size, "precision": args.precision}
            cl = meter.measure(deployed, shape, channels_last=True, **kw)
            cl_counters = meter.last_counters
            contig = meter.measure(deployed, shape, channels_last=False, **kw)
            contig_counters = meter.last_counters
            old = throughput_only.measure(built, shape, channels_last=True, **kw)
            c_built, c_dep = space.count(arch), space.count_deployed(arch)
            writer.writerow({
                "arch": str(arch), "arch_index": space.index(arch), "deployed_key": space.deployed_key(arch),
                "precision": args.precision, "batch_size": args.batch_size,
                "params_as_built": c_built.params, "flops_as_built": c_built.flops,
                "params_deployed": c_dep.params, "flops_deployed": c_dep.flops,
                "tput_as_built_cl": old.throughput_img_per_s, "tput_deployed_cl": cl.throughput_img_per_s,
                "tput_deployed_contig": contig.throughput_img_per_s,
                "energy_deployed_cl": cl.energy_j_per_img, "energy_deployed_contig": contig.energy_j_per_img,
                "power_deployed_cl": cl.avg_power_w, "power_deployed_contig": contig.avg_power_w,
                "sm_clock_cl": cl.sm_clock_mhz, "sm_clock_contig": contig.sm_clock_mhz,
                "counters_kind": cl_counters.kind if cl_counters else "unavailable",
                **_counter_cols(cl_counters, "cl"), **_counter_cols(contig_counters, "contig"),
                "device": cl.device_name, "driver": meter.driver_version or "", "torch": torch.__version__,
                "seconds": round(time.perf_counter() - t0, 3),
            })
            f.flush()
    meter.close()
    throughput_only.close()
    print(f"{args.out_csv}: done in {time.perf_counter() - t_start:.0f} s", flush=True)
    return 0


def _f(row: dict[str, str], key: str) -> float:
    return float(row[key]) if row.get(key) not in ("", None) else float("nan")


def summarize(rows: list[dict[str, str]]) -> list[str]:
    """README lines: the comparisons the deployed-network work needs, all from measured rows."""
    import numpy as np
    from scipy.stats import spearmanr

    n = len(rows)
    speedup = np.array([_f(r, "tput_deployed_cl") / _f(r, "tput_as_built_cl") for r in rows])
    fmt_gain = np.array([_f(r, "tput_deployed_contig") / _f(r, "tput_deployed_cl") for r in rows])
    contig_faster = fmt_gain > 1
    best_tput = np.maximum([_f(r, "tput_deployed_contig") for r in rows], [_f(r, "tput_deployed_cl") for r in rows])
    avg_pools = np.array([r["deployed_key"].count("avg_pool_3x3") for r in rows])
    convs = np.array([r["deployed_key"].count("nor_conv") for r in rows])
    rule = avg_pools >= convs  # a cheap rule: contiguous when pools are at least as many as convs
    rule_tput = np.where(rule, [_f(r, "tput_deployed_contig") for r in rows], [_f(r, "tput_deployed_cl") for r in rows])
    flops = np.array([_f(r, "flops_deployed") for r in rows])
    rho_cl = spearmanr(flops, [_f(r, "tput_deployed_cl") for r in rows]).statistic
    rho_best = spearmanr(flops, best_tput).statistic
    lines = [
        "# The deployed network on the H200", "",
        f"{n} TSS deployed classes (seeded sample), {rows[0]['precision']} batch {rows[0]['batch_size']}, "
        f"CIFAR shape, CUDA graphs, default clocks (never changed); {rows[0]['device']}, driver "
        f"{rows[0]['driver']}, torch {rows[0]['torch']}. All figures measured.", "",
        "| comparison | median | 5th pct | 95th pct |", "|---|---|---|---|",
        f"| deployed / as-built throughput (both channels-last) | {np.median(speedup):.3f} | {np.percentile(speedup, 5):.3f} | {np.percentile(speedup, 95):.3f} |",
        f"| contiguous / channels-last throughput (deployed) | {np.median(fmt_gain):.3f} | {np.percentile(fmt_gain, 5):.3f} | {np.percentile(fmt_gain, 95):.3f} |",
        f"| cheap rule / best-format throughput | {np.median(rule_tput / best_tput):.3f} | {np.percentile(rule_tput / best_tput, 5):.3f} | {np.percentile(rule_tput / best_tput, 95):.3f} |",
        "",
        f"- Contiguous is faster for {int(contig_faster.sum())} of {n} networks.",
        f"- Cheap rule (contiguous when the deployed cell has at least as many avg-pools as convolutions) "
        f"picks the faster format for {int((rule == contig_faster).sum())} of {n}.",
        f"- Spearman of deployed FLOPs with throughput: {rho_cl:.3f} always channels-last, {rho_best:.3f} at the faster format.",
    ]
    for suffix, label in (("cl", "channels-last"), ("contig", "contiguous")):
        vals = {k: [_f(r, f"{k}_{suffix}") for r in rows] for k in ("sm_util", "sm_occ", "dram_bw", "tensor", "mem_util")}
        parts = [f"{k} {np.nanmin(v):.0f}-{np.nanmax(v):.0f} %" for k, v in vals.items() if not np.all(np.isnan(v))]
        if parts:
            lines.append(f"- Counters ({rows[0]['counters_kind']}, {label}): " + ", ".join(parts) + ".")
    secs = [_f(r, "seconds") for r in rows]
    lines += [f"- GPU seconds per class for the three measurements: median {statistics.median(secs):.2f} s.", ""]
    return lines


def cmd_summarize(args: argparse.Namespace) -> int:
    rows: list[dict[str, str]] = []
    for path in args.csvs:
        try:
            with open(path, newline="") as f:
                rows += [r for r in csv.DictReader(f) if r.get("seconds")]
        except (OSError, csv.Error, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
    if not rows:
        print("error: no complete rows in the given CSVs", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: int(r["arch_index"]))
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "measurements.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    lines = summarize(rows)
    lines += ["Made with:", "", "```", "python experiments/deployed_network_study.py " + " ".join(sys.argv[1:]), "```", ""]
    (args.out / "README.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure a sample of deployed classes (GPU)")
    m.add_argument("--n", type=int, default=400)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="K/N")
    m.add_argument("--precision", default="fp16")
    m.add_argument("--batch-size", type=int, default=1024)
    m.add_argument("--energy-window-s", type=float, default=0.28)
    m.add_argument("--time-limit-s", type=float, default=480.0)
    m.add_argument("--out-csv", type=Path, required=True)
    s = sub.add_parser("summarize", help="merge CSVs and write the README")
    s.add_argument("csvs", type=Path, nargs="+")
    s.add_argument("--out", type=Path, default=Path("results/deployed_network"))
    args = p.parse_args(argv)
    return run_main(lambda: {"measure": cmd_measure, "summarize": cmd_summarize}[args.command](args))


if __name__ == "__main__":
    sys.exit(main())
