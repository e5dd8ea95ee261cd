"""How short may an energy window be? NVML's energy sources on one GPU, compared per network.

The profiler's energy window dominates its cost per class. This probe measures, read-only, what a
shorter window would give on the GPU it runs on:

1. **Update periods** of NVML's total-energy counter, the instantaneous power field
   (``NVML_FI_DEV_POWER_INSTANT``), the power reading (``nvmlDeviceGetPowerUsage``) and the
   power-sample buffer (``nvmlDeviceGetSamples``), while a network runs continuously.
2. **Per network** (deployed TSS networks at fp16 batch 1024, channels-last, CUDA graphs), energy
   per image from: a reference counter window of at least ``--reference-s``; counter windows of
   one and two counter updates; windows of ``--instant-s`` integrating the instantaneous power
   field; windows of ``--samples-s`` averaging the power-sample buffer (its samples' own
   timestamps pick the samples inside the window; the host waits until the buffer holds a sample
   past the window's end, and that wait is part of the cost). Every class is measured in two
   passes, so each source's pass-to-pass agreement is measured too, alongside its difference from
   the reference; ``first``: the same for each source's first window alone, as a profiler taking
   one window per setting would see it.

    PYTHONPATH=. python3 experiments/energy_source_probe.py run --classes 40 --out DIR
    python experiments/energy_source_probe.py summarise DIR/windows.csv --out results/energy_sources

Nothing about the GPU is changed: clocks, power limit and settings are only read.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Sequence

from nasenergy._cli import OneLineParser, run_main
from nasenergy.hardware.cuda_meter import CudaMeter
from nasenergy.hardware.cuda_steps import StreamWorkload, backlog_steps, make_step, time_repeats
from nasenergy.hardware.energy_window import CounterSource, PowerSampler, run_energy_windows, run_sample_windows
from nasenergy.hardware.nvml import open_device
from profile_tss_space import class_order, prepare
from search_spaces import get_space

SOURCES = ("counter_1tick", "counter_2tick", "instant", "samples")
WINDOW_COLUMNS = ("pass", "arch_index", "source", "window", "energy_j", "host_s", "images", "device_s",
                  "energy_j_per_img", "cost_s")


# ------------------------------------------------------------------------------ analysis (CPU)
def rel_diff(a: float, b: float) -> float:
    """|a - b| / b."""
    return abs(a - b) / b


def summarise(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per source: difference of its energy per image (median over a pass's windows) from the
    same pass's reference window, and from the other pass's figure for the same class, over all
    classes; plus the source's mean cost per class and pass (seconds of GPU time)."""
    per: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    cost: dict[tuple[str, int, str], float] = {}
    for r in rows:
        key = (str(r["source"]), int(r["pass"]), str(r["arch_index"]))
        per[key].append(float(r["energy_j_per_img"]))
        cost[key] = float(r["cost_s"])
        if str(r["source"]) != "reference" and int(r["window"]) == 0:
            first = (f"{r['source']}_first", key[1], key[2])
            per[first].append(float(r["energy_j_per_img"]))
            cost[first] = float(r["cost_s"])
    med = {k: statistics.median(v) for k, v in per.items()}
    out = []
    for source in ("reference",) + tuple(x for s in SOURCES for x in (s, f"{s}_first")):
        vs_ref, vs_pass, costs = [], [], []
        for (s, p, a), e in med.items():
            if s != source:
                continue
            costs.append(cost[(s, p, a)])
            ref = med.get(("reference", p, a))
            if ref is not None and source != "reference":
                vs_ref.append(rel_diff(e, ref))
            other = med.get((s, 1 - p, a))
            if other is not None and p == 0:
                vs_pass.append(rel_diff(e, other))
        if not costs:
            continue
        out.append({
            "source": source,
            "classes": len({a for (s, _, a) in med if s == source}),
            "vs_reference_median_pct": _pct(statistics.median(vs_ref)) if vs_ref else "",
            "vs_reference_worst_pct": _pct(max(vs_ref)) if vs_ref else "",
            "pass_to_pass_median_pct": _pct(statistics.median(vs_pass)) if vs_pass else "",
            "pass_to_pass_worst_pct": _pct(max(vs_pass)) if vs_pass else "",
            "cost_s_per_class_mean": f"{statistics.fmean(costs):.3f}",
        })
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def update_periods(changes: dict[str, list[float]]) -> dict[str, float | None]:
    """Median seconds between observed changes of each reading (``None``: fewer than 3 changes)."""
    out: dict[str, float | None] = {}
    for name, times in changes.items():
        gaps = [b - a for a, b in zip(times, times[1:])]
        out[name] = statistics.median(gaps) if len(gaps) >= 2 else None
    return out


# ----------------------------------------------------------------------------- device (GPU)
def _field_reader(nvml: Any, handle: Any, field_id: int) -> Callable[[], tuple[float, int]]:
    """A reader of one NVML field: (value in watts, NVML timestamp in microseconds)."""
    names = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}

    def read() -> tuple[float, int]:
        (v,) = nvml.nvmlDeviceGetFieldValues(handle, [field_id])
        if v.nvmlReturn != 0:
            raise RuntimeError(f"NVML field {field_id} not readable (return code {v.nvmlReturn})")
        return float(getattr(v.value, names.get(v.valueType, "uiVal"))) / 1000.0, int(v.timestamp)

    return read


def probe_periods(nvml: Any, handle: Any, workload: Any, seconds: float) -> dict[str, Any]:
    """Observed change times of each reading while `workload` runs for `seconds`."""
    instant = _field_reader(nvml, handle, getattr(nvml, "NVML_FI_DEV_POWER_INSTANT", 186))
    readers: dict[str, Callable[[], Any]] = {
        "energy_counter": lambda: nvml.nvmlDeviceGetTotalEnergyConsumption(handle),
        "power_instant_field": lambda: instant()[0],
        "power_usage": lambda: nvml.nvmlDeviceGetPowerUsage(handle),
    }
    last: dict[str, Any] = {}
    changes: dict[str, list[float]] = {k: [] for k in readers}
    polls = 0
    t0 = time.perf_counter()
    while (t := time.perf_counter()) - t0 < seconds:
        workload.keep_busy()
        for name, read in readers.items():
            value = read()
            if name in last and value != last[name]:
                changes[name].append(t)
            last[name] = value
        polls += 1
    out: dict[str, Any] = {"polls_per_s": polls / seconds, "periods_s": update_periods(changes)}
    try:
        _, samples = nvml.nvmlDeviceGetSamples(handle, getattr(nvml, "NVML_TOTAL_POWER_SAMPLES", 0), 0)
        stamps = sorted(int(s.timeStamp) for s in samples)
        gaps = [(b - a) / 1e6 for a, b in zip(stamps, stamps[1:])]
        out["power_samples_buffer"] = {"samples": len(stamps),
                                       "median_gap_s": statistics.median(gaps) if gaps else None}
    except Exception as exc:  # not offered on every GPU
        out["power_samples_buffer"] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np
    import pynvml
    import torch


    if not torch.cuda.is_available():
        print("error: the probe needs a CUDA GPU", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    space = get_space("tss")
    order = class_order(space, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    picked = [order[int(i)] for i in sorted(rng.choice(len(order), size=args.classes, replace=False))]
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    meter = CudaMeter(measure_energy=False)
    instant = _field_reader(pynvml, handle, getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", 186))
    counter = lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)  # noqa: E731
    samples = open_device(0).power_samples_w
    counts: list[int] = []
    info: dict[str, Any] = {"device": pynvml.nvmlDeviceGetName(handle),
                            "uuid": pynvml.nvmlDeviceGetUUID(handle),
                            "driver": pynvml.nvmlSystemGetDriverVersion(),
                            "torch": torch.__version__,
                            "sm_clock_mhz_at_start": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)}
    try:
        instant()
        has_instant = True
    except Exception as exc:  # older GPUs and drivers lack the field
        has_instant, info["instant_error"] = False, f"{type(exc).__name__}: {exc}"
    rows: list[dict[str, Any]] = []
    with torch.inference_mode():
        for p in range(2):
            prepared = [prepare(space, a, [("fp16", 1024, True)]) for a in picked]  # host copies are single-use
            for arch, prep in zip(picked, prepared):
                net = prep.copies["fp16"].take(True).to("cuda")
                x = torch.randn((1024, 3, 32, 32), device="cuda", dtype=torch.float16).contiguous(
                    memory_format=torch.channels_last)
                step, keep = make_step(net, x, meter.device, meter.cuda_graphs)
                (one_s,) = time_repeats(step, 1, 1)
                work = StreamWorkload(step, 1024, backlog_steps(one_s))
                if p == 0 and not rows:
                    info["periods"] = probe_periods(pynvml, handle, work, 1.5)
                plans = [("reference", CounterSource(counter), 1, args.reference_s),
                         ("counter_1tick", CounterSource(counter), 3, 0.05),
                         ("counter_2tick", CounterSource(counter), 2, 0.15),
                         ("instant", PowerSampler(lambda: instant()[0]), 3, args.instant_s)][:4 if has_instant else 3]
                for name, source, n, min_s in plans + [("samples", None, 3, args.samples_s)]:
                    t0 = time.perf_counter()
                    if source is None:
                        wins = run_sample_windows(samples, work, time.time, n_windows=n, window_s=min_s)
                        counts.extend(w.readings or 0 for w in wins)
                    else:
                        wins = run_energy_windows(source, work, time.perf_counter, n_windows=n, min_window_s=min_s)
                    cost = time.perf_counter() - t0
                    for k, w in enumerate(wins):
                        rows.append({"pass": p, "arch_index": space.index(arch), "source": name, "window": k,
                                     "energy_j": w.energy_j, "host_s": w.host_s, "images": w.images,
                                     "device_s": w.device_s, "energy_j_per_img": w.energy_j_per_img,
                                     "cost_s": cost})
                torch.cuda.synchronize()
                step = keep = net = x = work = None
                torch.cuda.empty_cache()
            print(f"pass {p} done", flush=True)
    if counts:
        info["samples"] = {"window_s": args.samples_s, "samples_per_window_median": statistics.median(counts)}
    info["sm_clock_mhz_at_end"] = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    pynvml.nvmlShutdown()
    with open(args.out / "windows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=WINDOW_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    (args.out / "device.json").write_text(json.dumps(info, indent=1, default=str) + "\n")
    print(json.dumps(info, default=str))
    for r in summarise(rows):
        print(r)
    return 0


def step_rows(samples: Sequence[tuple[int, float]], start_s: float) -> list[dict[str, Any]]:
    """Power samples as rows of seconds after `start_s` (wall clock) and watts."""
    return [{"t_s": f"{ts / 1e6 - start_s:.4f}", "power_w": f"{w:.1f}"} for ts, w in samples]


def cmd_step(args: argparse.Namespace) -> int:
    """How the power-sample buffer follows a step from idle to a running network: do its samples
    describe the 20 ms before their stamp, or a longer running mean?"""
    import torch

    if not torch.cuda.is_available():
        print("error: the probe needs a CUDA GPU", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    space = get_space("tss")
    meter = CudaMeter(measure_energy=False)
    dev = open_device(0)
    rows: list[dict[str, Any]] = []
    with torch.inference_mode():
        for k, arch in enumerate(class_order(space, args.seed)[:args.classes]):
            net = prepare(space, arch, [("fp16", 1024, True)]).copies["fp16"].take(True).to("cuda")
            x = torch.randn((1024, 3, 32, 32), device="cuda", dtype=torch.float16).contiguous(
                memory_format=torch.channels_last)
            step, keep = make_step(net, x, meter.device, meter.cuda_graphs)
            (one_s,) = time_repeats(step, 1, 1)
            torch.cuda.synchronize()
            time.sleep(args.idle_s)
            work = StreamWorkload(step, 1024, backlog_steps(one_s))
            start = time.time()
            while time.time() - start < args.load_s:
                work.keep_busy()
            torch.cuda.synchronize()
            time.sleep(0.1)
            got = dev.power_samples_w(int((start - args.idle_s / 2) * 1e6))
            rows += [{"class": k, **r} for r in step_rows(got, start)]
            step = keep = net = x = work = None
            torch.cuda.empty_cache()
    with open(args.out / "step.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["class", "t_s", "power_w"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(r["class"], r["t_s"], r["power_w"])
    return 0


def cmd_summarise(args: argparse.Namespace) -> int:
    with open(args.windows, newline="") as f:
        rows = list(csv.DictReader(f))
    summary = summarise(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(summary)
    for r in summary:
        print(r)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="measure on the GPU (read-only)")
    r.add_argument("--reference-s", type=float, default=1.0)
    r.add_argument("--instant-s", type=float, default=0.1)
    r.add_argument("--samples-s", type=float, default=0.1)
    t = sub.add_parser("step", help="the power-sample buffer's response to a step from idle to load (GPU)")
    t.add_argument("--idle-s", type=float, default=1.0)
    t.add_argument("--load-s", type=float, default=0.4)
    for on_gpu, classes, func in ((r, 40, cmd_run), (t, 3, cmd_step)):
        on_gpu.add_argument("--classes", type=int, default=classes)
        on_gpu.add_argument("--seed", type=int, default=0)
        on_gpu.add_argument("--out", type=Path, required=True)
        on_gpu.set_defaults(func=func)
    s = sub.add_parser("summarise", help="summarise windows.csv")
    s.add_argument("windows", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.set_defaults(func=cmd_summarise)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
