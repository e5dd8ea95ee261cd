"""Benchmark of a live candidate's cheap measurement: cost and repeatability per meter setting.

For ``--networks`` seeded TSS deployed networks (distinct, each able to learn: what a live search
measures), every network is measured ``--repeats`` times independently in each ``--setting``
(`nasenergy.hardware.meter_settings`: ``full``, the search's earlier default; ``fast``, its default
now; or a variant ``NAME:KEY=VALUE,...``), each time exactly as the search measures a candidate
(`nasenergy.hardware.deployed.deployed_measurer`: build the deployed network, measure it, attach
its official counts) on a freshly built model. The settings take turns, the first of a round
rotating with the repeat, so that drift of the board falls on all of them alike.

Cost = wall seconds of that whole per-candidate call (build included), over every measurement
and as the median per network. CV = std / mean of a network's figures over its independent
repeats. The relative difference compares each setting's per-network median with the first
setting's. Each meter's first measurement (idle power, the peak matrix product, cuDNN autotuning)
is paid on a warm-up network that is not reported. GPU clocks and settings are only read.

Writes ``measurements.csv`` (one row per measurement, with the meter's phases), ``networks.csv``
(one row per network and setting), ``summary.csv`` (one row per setting) and ``README.md`` to
``--out``. ``--time-limit-s`` stops before a network that would not finish in time, and the files
then say so.

Usage (on a GPU machine, from the repository root)::

    PYTHONPATH=. python3 experiments/bench_live_candidate.py --networks 20 --repeats 5 --out $OUT/live_candidate
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.deployed import deployed_measurer
from nasenergy.hardware.meter_settings import MeterSetting, parse_setting
from search_spaces import get_space

TARGET_COST_S = 0.6
"""Median wall seconds per live candidate the default setting should stay within."""
TARGET_CV = {"throughput_img_per_s": 0.01, "energy_j_per_img": 0.02}
"""Repeatability targets: CV over independent measurements of one network."""
DEFAULT_SETTINGS = ("full", "fast")
PHASES = ("host", "copy", "capture", "prepare", "throughput", "energy", "release")
MEASUREMENT_FIELDS = (
    "network", "arch_index", "deployed_key", "setting", "repeat", "order", "wall_s", "measure_cost_s",
    "outside_meter_s", *(f"phase_{p}_s" for p in PHASES), "window_runs", "windows", "window_s",
    "throughput_img_per_s", "energy_j_per_img", "avg_power_w", "memory_format", "flops_per_img", "params",
    "sm_clock_mhz", "busy_frac", "gpu_uuid",
)

MeterFactory = Callable[[MeterSetting], Any]


def pick_networks(space: Any, n: int, seed: int) -> list[Any]:
    """``n`` architectures of distinct deployed networks that can learn, in a seeded random order."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(space.size)
    picked, seen = [], set()
    for index in order:
        arch = space.arch_at(int(index))
        key = space.deployed_key(arch)
        if key in seen or not space.output_depends_on_input(arch):
            continue
        seen.add(key)
        picked.append(arch)
        if len(picked) == n:
            return picked
    raise UsageError(f"the space has fewer than {n} deployed networks that can learn")


def _cv(values: Sequence[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else math.nan


def _q(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (linear interpolation); NaN for no values."""
    xs = sorted(v for v in values if not math.isnan(v))
    if not xs:
        return math.nan
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _median(values: Sequence[float]) -> float:
    return _q(values, 0.5)


def _float(row: dict[str, Any], key: str) -> float:
    value = row.get(key)
    return math.nan if value is None or value == "" else float(value)


def network_rows(rows: list[dict[str, Any]], settings: Sequence[str]) -> list[dict[str, Any]]:
    """Per network and setting: medians, CVs over the repeats, and the relative difference of the
    medians from the first setting's (``new / reference - 1``)."""
    out = []
    networks = sorted({r["network"] for r in rows})
    for net in networks:
        ref: dict[str, float] = {}
        for name in settings:
            rs = [r for r in rows if r["network"] == net and r["setting"] == name]
            if not rs:
                continue
            tput = [_float(r, "throughput_img_per_s") for r in rs]
            energy = [_float(r, "energy_j_per_img") for r in rs]
            row = {
                "network": net, "arch_index": rs[0]["arch_index"], "deployed_key": rs[0]["deployed_key"],
                "setting": name, "repeats": len(rs),
                "cost_s_median": _median([_float(r, "wall_s") for r in rs]),
                "throughput_img_per_s_median": _median(tput), "throughput_cv": _cv(tput),
                "energy_j_per_img_median": _median(energy), "energy_cv": _cv(energy),
                "memory_formats": "/".join(sorted({str(r["memory_format"]) for r in rs})),
                "flops_per_img": rs[0]["flops_per_img"],
            }
            if name == settings[0]:
                ref = {"throughput": row["throughput_img_per_s_median"], "energy": row["energy_j_per_img_median"],
                       "flops": _float(rs[0], "flops_per_img")}
            row["throughput_rel_diff"] = row["throughput_img_per_s_median"] / ref["throughput"] - 1 if ref else math.nan
            row["energy_rel_diff"] = row["energy_j_per_img_median"] / ref["energy"] - 1 if ref else math.nan
            row["flops_equal_to_reference"] = (_float(rs[0], "flops_per_img") == ref["flops"]) if ref else ""
            out.append(row)
    return out


def summary_rows(rows: list[dict[str, Any]], nets: list[dict[str, Any]], settings: Sequence[str]) -> list[dict[str, Any]]:
    """One row per setting: cost, phases, repeatability and the difference from the first setting."""
    out = []
    for name in settings:
        rs = [r for r in rows if r["setting"] == name]
        ns = [n for n in nets if n["setting"] == name]
        if not rs:
            continue
        wall = [_float(r, "wall_s") for r in rs]
        tcv = [n["throughput_cv"] for n in ns if n["repeats"] > 1]
        ecv = [n["energy_cv"] for n in ns if n["repeats"] > 1]
        row: dict[str, Any] = {
            "setting": name, "networks": len(ns), "measurements": len(rs),
            "cost_s_median": _median(wall), "cost_s_p90": _q(wall, 0.9), "cost_s_max": max(wall),
            "cost_s_median_of_network_medians": _median([n["cost_s_median"] for n in ns]),
            "measure_cost_s_median": _median([_float(r, "measure_cost_s") for r in rs]),
            "outside_meter_s_median": _median([_float(r, "outside_meter_s") for r in rs]),
            **{f"phase_{p}_s_median": _median([_float(r, f"phase_{p}_s") for r in rs]) for p in PHASES},
            "window_s_median": _median([_float(r, "window_s") for r in rs]),
            "window_runs_mean": statistics.fmean(_float(r, "window_runs") for r in rs),
            "throughput_cv_median": _median(tcv), "throughput_cv_p90": _q(tcv, 0.9),
            "throughput_cv_max": max(tcv, default=math.nan),
            "energy_cv_median": _median(ecv), "energy_cv_p90": _q(ecv, 0.9), "energy_cv_max": max(ecv, default=math.nan),
            "networks_within_throughput_cv": sum(v <= TARGET_CV["throughput_img_per_s"] for v in tcv),
            "networks_within_energy_cv": sum(v <= TARGET_CV["energy_j_per_img"] for v in ecv),
            "throughput_rel_diff_median": _median([n["throughput_rel_diff"] for n in ns]),
            "throughput_rel_diff_abs_median": _median([abs(n["throughput_rel_diff"]) for n in ns]),
            "throughput_rel_diff_abs_max": max((abs(n["throughput_rel_diff"]) for n in ns), default=math.nan),
            "energy_rel_diff_median": _median([n["energy_rel_diff"] for n in ns]),
            "energy_rel_diff_abs_median": _median([abs(n["energy_rel_diff"]) for n in ns]),
            "energy_rel_diff_abs_max": max((abs(n["energy_rel_diff"]) for n in ns), default=math.nan),
            "flops_differ_from_reference": sum(n["flops_equal_to_reference"] is False for n in ns),
            "source": "measured",
        }
        out.append(row)
    return out


def _write_csv(path: Path, rows: list[dict[str, Any]], fields: Sequence[str] | None = None) -> None:
    fields = list(fields or (rows[0].keys() if rows else []))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.2f} %"


def readme_text(summary: list[dict[str, Any]], settings: list[MeterSetting], context: dict[str, Any]) -> str:
    """The README of a run (every figure measured)."""
    lines = [
        "# Cost and repeatability of a live candidate's measurement",
        "",
        f"Measured on {context['device']} (driver {context['driver']}, `{context['gpu_uuid']}`), torch "
        f"{context['torch']}, Python {platform.python_version()}, {context['when']} UTC. Energy counter: "
        f"{context['counter']}. GPU clocks and settings were left as found.",
        "",
        f"Command: `{context['command']}`",
        "",
        f"{context['networks_done']} of {context['networks']} seeded TSS deployed networks (seed {context['seed']}, "
        f"distinct, each able to learn), {context['dataset']} input, {context['precision']}, batch "
        f"{context['batch_size']}; each measured {context['repeats']} times independently per setting, as the "
        "search measures a candidate (build the deployed network, measure, attach its official counts), on "
        "a freshly built model each time; settings take turns. Cost = wall time of that whole call. "
        f"CV = std/mean over a network's repeats. Wall time of the benchmark: {context['total_s']:.0f} s "
        f"(warm-up {context['warmup_s']:.1f} s).{context['stopped']}",
        "",
        "Settings:",
        "",
    ]
    lines += [f"- `{s.name}`: {s.summary}." for s in settings]
    lines += [
        "",
        f"| setting | cost median (s) | p90 | max | target | throughput CV median / max | energy CV median / max "
        f"| within CV (thr ≤ 1 %, energy ≤ 2 %) | vs `{settings[0].name}`: throughput median / worst abs. "
        "| energy median / worst abs. |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        n = s["networks"]
        lines.append(
            f"| `{s['setting']}` | {s['cost_s_median']:.3f} | {s['cost_s_p90']:.3f} | {s['cost_s_max']:.3f} | "
            f"{TARGET_COST_S} | {_pct(s['throughput_cv_median'])} / {_pct(s['throughput_cv_max'])} | "
            f"{_pct(s['energy_cv_median'])} / {_pct(s['energy_cv_max'])} | "
            f"{s['networks_within_throughput_cv']}/{n}, {s['networks_within_energy_cv']}/{n} | "
            f"{_pct(s['throughput_rel_diff_median'])} / {_pct(s['throughput_rel_diff_abs_max'])} | "
            f"{_pct(s['energy_rel_diff_median'])} / {_pct(s['energy_rel_diff_abs_max'])} |")
    lines += [
        "",
        "Where the time goes (median seconds per measurement; `outside` = building the deployed network and "
        "its official counts; `host` = the host copies; `prepare` holds host, copy and capture and the "
        "format probe; `energy` = warm-up, the wait for the first counter update, the windows and re-runs):",
        "",
        "| setting | outside | host | copy | capture | prepare | throughput | energy | window | release | window runs (mean) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| `{s['setting']}` | {s['outside_meter_s_median']:.3f} | {s['phase_host_s_median']:.3f} | "
            f"{s['phase_copy_s_median']:.3f} | {s['phase_capture_s_median']:.3f} | {s['phase_prepare_s_median']:.3f} | "
            f"{s['phase_throughput_s_median']:.3f} | {s['phase_energy_s_median']:.3f} | {s['window_s_median']:.3f} | "
            f"{s['phase_release_s_median']:.3f} | {s['window_runs_mean']:.2f} |")
    differ = [s for s in summary if s["flops_differ_from_reference"]]
    lines += [
        "",
        "FLOP counts: " + ("equal to the first setting's for every network." if not differ else
                           "; ".join(f"`{s['setting']}` differs on {s['flops_differ_from_reference']} networks"
                                     for s in differ)),
        "",
        "All figures: measured. Files: `measurements.csv` (every measurement with its phases), "
        "`networks.csv` (per network and setting), `summary.csv` (per setting).",
        "",
    ]
    return "\n".join(lines)


def _cuda_meter_factory(peaks: Any) -> MeterFactory:
    """CUDA meters sharing one peak cache; the first measures the idle power, the others reuse it
    (the default ``total`` energy basis does not use it; measuring it costs up to 6 s per meter)."""
    made: list[Any] = []

    def make(setting: MeterSetting) -> Any:
        from nasenergy.hardware.cuda_meter import CudaMeter  # lazy: torch

        idle = {"idle_power_w": made[0].idle_power_w()} if made else {}
        meter = CudaMeter(peak_cache=peaks, **idle, **dict(setting.meter_options))
        made.append(meter)
        return meter

    return make


def main(argv: list[str] | None = None, *, make_meter: MeterFactory | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--networks", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=100, help="seeds the choice of networks (default %(default)s)")
    p.add_argument("--dataset", default="cifar10")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--precision", default="fp16")
    p.add_argument("--setting", action="append", metavar="SPEC",
                   help="a meter setting (repeat for several; the first is the reference): full, fast, or "
                        "NAME:KEY=VALUE,... (default: full, then fast)")
    p.add_argument("--time-limit-s", type=float, default=400.0,
                   help="stop before a network that would end past this many seconds (default %(default)s)")
    p.add_argument("--out", type=Path, default=Path("results/live_candidate_cost"))
    args = p.parse_args(argv)
    t_all = time.perf_counter()
    if args.networks < 1 or args.repeats < 2:
        raise UsageError("need --networks >= 1 and --repeats >= 2 (a CV needs two measurements)")
    settings = [parse_setting(s) for s in (args.setting or DEFAULT_SETTINGS)]
    if len({s.name for s in settings}) != len(settings):
        raise UsageError("a setting is named twice")

    space = get_space("tss")
    archs = pick_networks(space, args.networks + 1, args.seed)
    warm_arch, archs = archs[0], archs[1:]
    shape = space.input_shape(args.dataset)
    if make_meter is None:
        import torch  # lazy: the GPU run only

        if not torch.cuda.is_available():
            raise UsageError("this benchmark needs a CUDA GPU")
        from nasenergy.hardware.peaks import PeakCache  # lazy: the GPU run only

        make_meter = _cuda_meter_factory(PeakCache())
    meters = {s.name: make_meter(s) for s in settings}
    measurers = {s.name: deployed_measurer(meters[s.name], space, args.dataset, batch_size=args.batch_size,
                                           precision=args.precision, analytic_counts=s.analytic_counts)
                 for s in settings}
    t0 = time.perf_counter()
    for s in settings:  # one-off costs: idle power, peak FLOP/s, cuDNN autotuning, first CUDA graphs
        measurers[s.name](warm_arch)
    warmup_s = time.perf_counter() - t0

    rows: list[dict[str, Any]] = []
    stopped = ""
    longest_network_s = 0.0
    for n, arch in enumerate(archs):
        elapsed = time.perf_counter() - t_all
        if n and elapsed + 1.2 * longest_network_s > args.time_limit_s:
            stopped = (f" Stopped by --time-limit-s {args.time_limit_s:g} after {n} networks "
                       f"({elapsed:.0f} s).")
            print(stopped.strip(), flush=True)
            break
        t_net = time.perf_counter()
        for r in range(args.repeats):
            for k in range(len(settings)):
                s = settings[(k + r) % len(settings)]
                meter = meters[s.name]
                t = time.perf_counter()
                m = measurers[s.name](arch)
                wall = time.perf_counter() - t
                phases = dict(getattr(meter, "last_phases_s", {}) or {})
                windows = list(getattr(meter, "last_windows", []) or [])
                rows.append({
                    "network": n, "arch_index": space.index(arch), "deployed_key": space.deployed_key(arch),
                    "setting": s.name, "repeat": r, "order": k, "wall_s": wall, "measure_cost_s": m.measure_cost_s,
                    "outside_meter_s": wall - m.measure_cost_s if m.measure_cost_s is not None else math.nan,
                    **{f"phase_{p}_s": phases.get(p, math.nan) for p in PHASES},
                    "window_runs": getattr(meter, "last_window_runs", math.nan),
                    "windows": len(windows), "window_s": sum(w.host_s for w in windows) if windows else math.nan,
                    "throughput_img_per_s": m.throughput_img_per_s, "energy_j_per_img": m.energy_j_per_img,
                    "avg_power_w": m.avg_power_w, "memory_format": m.memory_format,
                    "flops_per_img": m.flops_per_img, "params": m.params, "sm_clock_mhz": m.sm_clock_mhz,
                    "busy_frac": getattr(meter, "last_busy_frac", None), "gpu_uuid": m.gpu_uuid,
                })
        longest_network_s = max(longest_network_s, time.perf_counter() - t_net)
        last = [r for r in rows if r["network"] == n]
        print(f"network {n + 1}/{len(archs)} (cell {space.index(arch)}): " + ", ".join(
            f"{s.name} {_median([r['wall_s'] for r in last if r['setting'] == s.name]):.3f} s" for s in settings),
            flush=True)

    names = [s.name for s in settings]
    nets = network_rows(rows, names)
    summary = summary_rows(rows, nets, names)
    args.out.mkdir(parents=True, exist_ok=True)
    _write_csv(args.out / "measurements.csv", rows, MEASUREMENT_FIELDS)
    _write_csv(args.out / "networks.csv", nets)
    _write_csv(args.out / "summary.csv", summary)
    first = meters[names[0]]
    dev = getattr(first, "nvml_device", None)
    context = {
        "device": getattr(first, "device_name", "unknown"), "driver": getattr(first, "driver_version", None),
        "gpu_uuid": getattr(dev, "uuid", None), "torch": _torch_version(),
        "when": f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M}",
        "counter": "yes" if getattr(first, "has_energy_counter", False) else "no",
        "command": "PYTHONPATH=. python3 experiments/bench_live_candidate.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "networks": args.networks, "networks_done": len({r["network"] for r in rows}), "seed": args.seed,
        "dataset": args.dataset, "precision": args.precision, "batch_size": args.batch_size,
        "repeats": args.repeats, "total_s": time.perf_counter() - t_all, "warmup_s": warmup_s, "stopped": stopped,
    }
    text = readme_text(summary, settings, context)
    (args.out / "README.md").write_text(text)
    print(text)
    for meter in meters.values():
        close = getattr(meter, "close", None)
        if close is not None:
            close()
    return 0


def _torch_version() -> str:
    try:
        import torch  # lazy: only to name it
    except ImportError:
        return "not installed"
    return str(torch.__version__)


if __name__ == "__main__":
    sys.exit(run_main(main))
