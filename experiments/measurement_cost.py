"""What one filter decision costs against one full accuracy evaluation, in GPU-seconds and joules.

Filter decision = the cheap GPU measurement of the candidate (throughput, utilization, energy per
image at the default clock), then CPU work: the modelled energy-optimal clock and the filter's
verdict. Its GPU cost comes from

* the recorded H200 profile (``measure_cost_s``: throughput + one energy window of at least
  0.28 or 0.3 s, the settings the profile was recorded with), **measured**, over all rows and per
  board;
* the meter benchmark (``results/meter_benchmark/cells.csv``): the throughput-only path and the
  default energy path (3 windows of at least 0.28 s), **measured**.

Its energy is **estimated** from measured quantities: at most board power during inference x
the measurement's wall time (the board draws less while the model is copied and the graph
captured), at least idle power x that time.

Full evaluation = NATS-Bench training on the 12-epoch schedule plus one evaluation pass (the
search metric; ``nasenergy.oracles`` ``evaluate(...).cost_s``), **recorded** for the cells
NATS-Bench times are stored for in the shared tables, **estimated** by the oracle's rate model for
the others; and, for reference, the 200-epoch schedule (``report``). These times were recorded on
NATS-Bench's own GPUs, not on the H200. Their energy = time x an **assumed** board power
(``--train-power-w``), and x the H200's median inference board power from the profile (measured,
but for inference, not training).

The CPU steps are timed on this machine (**measured**, CPU-seconds).

Writes ``summary.csv`` and ``README.md`` to ``--out`` (default ``results/measurement_cost``)::

    python experiments/measurement_cost.py [--train-power-w 300]
"""

from __future__ import annotations

import csv
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import DataNotFoundError, UsageError
from search_spaces import DATASETS, get_space
from nasenergy.dvfs import optimal_clock_for, params_for_device
from nasenergy.filter import UtilizationFilter
from nasenergy.hardware.recorded import DEFAULT_PROFILE, measurement_from_row, read_profile
from nasenergy.oracles import load_oracle
from nasenergy.pareto import non_dominated_mask
from nasenergy.paths import shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "measurement_cost"
METER_CELLS = ROOT / "results" / "meter_benchmark" / "cells.csv"


@dataclass(frozen=True)
class CostRow:
    """One line of ``summary.csv``.

    Attributes:
        item: what is costed.
        n: how many cells / measurements the figures summarize.
        gpu_s_median: GPU wall-clock seconds, median.
        gpu_s_p90: 90th percentile.
        energy_j_low: energy, median of the lower estimate (joules); NaN if not applicable.
        energy_j_high: energy, median of the upper estimate (joules).
        time_source: provenance of the time (measured | recorded | estimated).
        energy_source: provenance of the energy (estimated | assumed power).
        note: how the energy was obtained.
    """

    item: str
    n: int
    gpu_s_median: float
    gpu_s_p90: float
    energy_j_low: float
    energy_j_high: float
    time_source: str
    energy_source: str
    note: str


def _q(x: np.ndarray, q: float) -> float:
    return float(np.quantile(np.asarray(x, dtype=float), q)) if len(x) else float("nan")


def profile_rows(profile: Path) -> list[dict[str, str]]:
    """The fp16 rows of the recorded profile."""
    rows = [r for r in read_profile(profile) if r["precision"] == "fp16"]
    if not rows:
        raise UsageError(f"{profile} has no fp16 rows")
    return rows


def _windows_text(rows: list[dict[str, str]]) -> str:
    windows = sorted({r.get("energy_window_s", "") for r in rows} - {""}, key=float)
    return ">= " + "-".join(windows) + " s" if windows else "(length not recorded)"


def _profile_cost_row(rows: list[dict[str, str]], label: str) -> CostRow:
    cost = np.array([float(r["measure_cost_s"]) for r in rows])
    power = np.array([float(r["avg_power_w"]) for r in rows])
    idle = np.array([float(r["idle_power_w"]) for r in rows])
    return CostRow(label, len(rows), _q(cost, 0.5), _q(cost, 0.9), _q(idle * cost, 0.5), _q(power * cost, 0.5),
                   "measured", "estimated",
                   "per class; energy between idle power x wall time and inference board power x wall time")


def measurement_costs(rows: list[dict[str, str]], meter_cells: Path | None) -> list[CostRow]:
    """GPU cost of the cheap measurement: the profile's setting and the meter benchmark's modes."""
    out = [_profile_cost_row(rows, f"measurement, profile setting (throughput + 1 energy window "
                                   f"{_windows_text(rows)}), H200, all rows")]
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault((r.get("energy_window_s", ""), r.get("gpu_uuid", "")), []).append(r)
    if len(groups) > 1:
        for (window, uuid), group in sorted(groups.items(), key=lambda kv: min(r["measured_at"] for r in kv[1])):
            board = f"board {uuid[4:12]}" if uuid else "board not recorded"
            out.append(_profile_cost_row(group, f"measurement, profile rows, {board}, 1 energy window "
                                                f"{_windows_text(group)}, H200"))
    if meter_cells is not None and meter_cells.is_file():
        with meter_cells.open(newline="") as fh:
            cells = list(csv.DictReader(fh))
        by_cell_power: dict[str, list[float]] = {}
        for c in cells:
            if c["mode"] == "energy" and c["avg_power_w"]:
                by_cell_power.setdefault(c["cell"], []).append(float(c["avg_power_w"]))
        idle_median = float(np.median([float(r["idle_power_w"]) for r in rows]))
        for mode, label in (("throughput", "measurement, throughput only, H200 (meter benchmark)"),
                            ("energy", "measurement, throughput + 3 energy windows >= 0.28 s, H200 "
                                       "(meter benchmark)")):
            sel = [c for c in cells if c["mode"] == mode and c["cell"] in by_cell_power]
            if not sel:
                continue
            t = np.array([float(c["measure_cost_s"]) for c in sel])
            p = np.array([float(np.median(by_cell_power[c["cell"]])) for c in sel])
            out.append(CostRow(
                label, len(sel), _q(t, 0.5), _q(t, 0.9), _q(idle_median * t, 0.5), _q(p * t, 0.5),
                "measured", "estimated",
                "per measurement; power: the same cell's energy-mode board power; idle: the "
                "profile's median idle power"))
    return out


def cpu_costs(rows: list[dict[str, str]], oracle: Any, space: Any, n: int = 200, seed: int = 0) -> list[CostRow]:
    """CPU seconds of the modelled optimal clock and of one dominance-filter decision (fitted on
    `n` profiled cells), timed here."""
    rng = np.random.default_rng(seed)
    pick = [rows[i] for i in rng.choice(len(rows), size=min(2 * n, len(rows)), replace=False)]
    ms = [measurement_from_row(r) for r in pick]
    params = params_for_device(ms[0].device_name)
    t_clock, clocks = [], []
    for m in ms:
        t0 = time.perf_counter()
        clocks.append(optimal_clock_for(m, params=params))
        t_clock.append(time.perf_counter() - t0)
    archs = [space.parse(r["canonical_arch"]) for r in pick]
    flt = UtilizationFilter.create("dominance", target_recall=0.95, seed=seed)
    train = range(len(ms) // 2)
    for k in train:
        flt.observe(ms[k], oracle.evaluate(archs[k], "cifar10", seed=seed).accuracy_pct,
                    features=space.features(archs[k]),
                    throughput_img_per_s=clocks[k].best.throughput_img_per_s,
                    energy_j_per_img=clocks[k].best.energy_j_per_img)
    front = np.array([[o.accuracy, o.throughput_img_per_s, o.energy_j_per_img] for o in flt.observations])

    front = front[non_dominated_mask(front, ["maximize", "maximize", "minimize"])]
    flt.admit(ms[-1], front, features=space.features(archs[-1]))  # first call fits the model
    t_admit = []
    for k in range(len(ms) // 2, len(ms)):
        t0 = time.perf_counter()
        flt.admit(ms[k], front, features=space.features(archs[k]))
        t_admit.append(time.perf_counter() - t0)
    nan = float("nan")
    return [
        CostRow("modelled optimal clock (CPU, this machine)", len(t_clock), _q(t_clock, 0.5),
                _q(t_clock, 0.9), nan, nan, "measured", "", "CPU-seconds, not GPU"),
        CostRow(f"dominance-filter decision, model fitted on {len(train)} evaluations (CPU, this machine)",
                len(t_admit), _q(t_admit, 0.5), _q(t_admit, 0.9), nan, nan, "measured", "",
                "CPU-seconds, not GPU; refits after new evaluations cost more"),
    ]


def evaluation_costs(oracle: Any, space: Any, train_power_w: float, inference_power_w: float) -> list[CostRow]:
    """GPU cost of a full evaluation (12-epoch search metric; 200-epoch report) per dataset; the
    energy between ``train_power_w`` (assumed) and ``inference_power_w`` x time."""
    out = []
    archs = [space.arch_at(i) for i in range(space.size)]
    lo, hi = sorted((train_power_w, inference_power_w))
    note = (f"NATS-Bench's GPUs (not the H200); energy = time x {train_power_w:.0f} W (assumed) and "
            f"x {inference_power_w:.0f} W (H200 median inference board power)")
    for ds in DATASETS:
        evs = [oracle.evaluate(a, ds, seed=0) for a in archs]
        groups = [("recorded", [e for e in evs if e.cost_source == "recorded"])]
        if ds == DATASETS[0]:
            groups.append(("all cells", evs))
        for which, sel in groups:
            if sel:
                t = np.array([e.cost_s for e in sel])
                src = "recorded" if which == "recorded" else "recorded+estimated"
                out.append(CostRow(f"full evaluation, {ds}, 12 epochs + eval ({which})", len(t), _q(t, 0.5),
                                   _q(t, 0.9), _q(t * lo, 0.5), _q(t * hi, 0.5), src, "assumed power", note))
        rep = [e for e in (oracle.report(a, ds) for a in archs) if e.cost_source == "recorded"]
        if rep:
            t = np.array([e.cost_s for e in rep])
            out.append(CostRow(f"full training, {ds}, 200 epochs + eval (recorded)", len(t), _q(t, 0.5),
                               _q(t, 0.9), _q(t * lo, 0.5), _q(t * hi, 0.5), "recorded", "assumed power", note))
    return out


def write_summary(rows: list[CostRow], path: Path) -> None:
    """``summary.csv``."""
    cols = list(CostRow.__dataclass_fields__)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([format(v, ".5g") if isinstance(v, float) else v for v in (getattr(r, c) for c in cols)])


def _fmt_j(x: float) -> str:
    if np.isnan(x):
        return "-"
    return f"{x / 1000:.3g} kJ" if x >= 1000 else f"{x:.3g} J"


def write_readme(rows: list[CostRow], path: Path, profile: Path, powers_w: dict[str, float], command: str) -> None:
    """The README with the table and the ratios."""
    meas = rows[0]
    ev = next(r for r in rows if r.item == "full evaluation, cifar10, 12 epochs + eval (recorded)")
    ev_all = next(r for r in rows if r.item == "full evaluation, cifar10, 12 epochs + eval (all cells)")
    lines = [
        "# Cost of a filter decision against a full evaluation",
        "",
        f"Produced by `{command}`. Inputs: `{profile.name}` (H200, fp16, batch 1024), "
        "`results/meter_benchmark/cells.csv`, and the NATS-Bench tables of the shared data folder "
        "through `nasenergy.oracles`.",
        "",
        "| item | n | GPU-s (median) | GPU-s (p90) | energy (median), low | high | time | energy | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.item} | {r.n} | {r.gpu_s_median:.3g} | {r.gpu_s_p90:.3g} | {_fmt_j(r.energy_j_low)} | "
                     f"{_fmt_j(r.energy_j_high)} | {r.time_source} | {r.energy_source or '-'} | {r.note} |")
    lines += [
        "",
        "## Ratios (median full evaluation / median filter decision)",
        "",
        f"* GPU time: a 12-epoch CIFAR-10 evaluation (recorded cells: {ev.gpu_s_median:.0f} s; all cells, "
        f"recorded or estimated: {ev_all.gpu_s_median:.0f} s) costs **{ev.gpu_s_median / meas.gpu_s_median:.0f}x** "
        f"the profile's measurement ({meas.gpu_s_median:.2f} s).",
    ]
    for name, p in powers_w.items():
        lines.append(
            f"* Energy with {name} ({p:.0f} W) while training: {_fmt_j(ev.gpu_s_median * p)} per evaluation, "
            f"**{ev.gpu_s_median * p / meas.energy_j_high:.0f}-{ev.gpu_s_median * p / meas.energy_j_low:.0f}x** "
            f"the measurement's estimated {_fmt_j(meas.energy_j_low)}-{_fmt_j(meas.energy_j_high)}.")
    lines += [
        "",
        "## Caveats",
        "",
        "* The evaluation times were recorded by NATS-Bench on its own GPUs; an H200 would train "
        "faster, so the ratios overstate what the same GPU would show by that speed factor (not "
        "measured here).",
        "* The training power is **assumed** (or borrowed from H200 inference); no training power "
        "was measured. Energies scale linearly with it.",
        "* Measurement energy is an estimate between idle power and inference board power over the "
        "measurement's wall time. That time covers copying the built network to the GPU, FLOP "
        "counting, graph capture and the timed runs; building the network on the CPU is not in it.",
        *(["* The profile's rows come from more than one board or run setting (the per-board rows); "
           "where two boards were measured at once by two processes on one host, the per-class time "
           "includes that host's contention. The all-rows median is used for the ratios."]
          if any(r.item.startswith("measurement, profile rows") for r in rows) else []),
        "* The CPU rows are this (shared, 2-core) machine's times for the modelled clock and the "
        "filter's verdict; they do not hold the GPU.",
        "",
        "Files: `summary.csv`.",
        "",
    ]
    path.write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", type=Path, default=DEFAULT_PROFILE)
    p.add_argument("--meter-cells", type=Path, default=METER_CELLS)
    p.add_argument("--train-power-w", type=float, default=300.0,
                   help="assumed board power while training, W (default 300, an assumption)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    def body() -> int | None:
        if not args.train_power_w > 0:
            raise UsageError(f"--train-power-w must be positive, got {args.train_power_w}")
        if not args.profile.is_file():
            raise DataNotFoundError(f"profile not found: {args.profile}")

        data = shared_data_dir()
        if not data.is_dir():
            raise DataNotFoundError(f"shared data folder not found: {data}")
        space = get_space("tss")
        oracle = load_oracle(data, space, seed=0)
        rows = profile_rows(args.profile)
        h200_w = float(np.median([float(r["avg_power_w"]) for r in rows]))
        powers = {"an assumed training power": args.train_power_w,
                  "the H200's median inference board power (measured)": h200_w}
        table = (measurement_costs(rows, args.meter_cells) + cpu_costs(rows, oracle, space)
                 + evaluation_costs(oracle, space, args.train_power_w, h200_w))
        args.out.mkdir(parents=True, exist_ok=True)
        write_summary(table, args.out / "summary.csv")
        cmd = "python experiments/measurement_cost.py " + " ".join(argv if argv is not None else sys.argv[1:])
        write_readme(table, args.out / "README.md", args.profile, powers, cmd.strip())
        for r in table:
            print(f"{r.item}: {r.gpu_s_median:.3g} s (p90 {r.gpu_s_p90:.3g}), "
                  f"{_fmt_j(r.energy_j_low)}-{_fmt_j(r.energy_j_high)}")

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
