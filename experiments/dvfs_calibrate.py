"""Fit the shipped DVFS parameter sets to the published clock sweeps, and extrapolate the H200 set.

Writes ``nasenergy/dvfs/params/<name>.json`` (one per GPU) and ``results/dvfs_calibration/``
(``params_summary.csv``, ``README.md``, one ``fit_<name>.png`` per calibrated GPU). Reads the sweeps
in place from `nasenergy.paths.dvfs_data_dir()`.

    python experiments/dvfs_calibrate.py
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from nasenergy.dvfs.calibration import Calibration, calibrate
from nasenergy.dvfs.model import power_w, time_ratio
from nasenergy.dvfs.params import GpuDvfsParams, extrapolate_params
from nasenergy.dvfs.published import SETS, PublishedSet
from nasenergy._cli import OneLineParser, run_main

ROOT = Path(__file__).resolve().parent.parent

#: (published set, parameter-set name, NVML device-name patterns)
TARGETS = (
    ("a100_sxm4_ttu", "a100-sxm4", ("A100",)),
    ("v100_hkbu", "v100-pcie", ("V100",)),
    ("rtx8000_hkbu", "quadro-rtx8000", ("RTX 8000",)),
    ("titanx_maxwell_inesc", "gtx-titan-x-maxwell", ("GTX TITAN X",)),
)

H200_CAVEAT = ("EXTRAPOLATED: no measured H200 clock sweep exists. The voltage knee (as a fraction "
               "of the highest clock), v_floor, v_exponent, per_cycle_share, overlap_exponent, "
               "static/idle power ratio and alpha predictors are carried over from the A100-SXM4 "
               "calibration; only the clock list, idle power and power limit are the H200's")
H200_CLOCKS = tuple(float(c) for c in range(345, 1981, 15))
H200_SOURCES = {
    "supported_clocks_mhz": "read-only NVML probe of an H200: 110 graphics clocks 345-1980 MHz",
    "default_clock_mhz": "highest supported graphics clock of the probed H200",
    "power_limit_w": "read-only NVML probe of an H200 (limit range 200-700 W) and the H200 SXM "
                     "datasheet (up to 700 W)",
    "idle_power_w": "read-only NVML probe of an idle H200 (about 84 W)",
}


def _caveat(ps: PublishedSet) -> str | None:
    notes = []
    if "inferred" in ps.gpu:
        notes.append(f"calibrated on {ps.gpu}; other boards of this GPU may differ")
    if not ps.datacenter:
        notes.append("not a data-centre GPU")
    notes.append(f"power limit {ps.power_limit_w:g} W is the sweeps' board's ({ps.power_limit_source}); "
                 "where NVML gives the board's own limit, it replaces this one")
    return "; ".join(notes) or None


def calibrate_set(key: str, name: str, patterns: tuple[str, ...]) -> Calibration:
    ps = SETS[key]
    sweeps = ps.load()
    return calibrate(
        sweeps, name=name, gpu=ps.gpu, device_patterns=patterns, power_limit_w=ps.power_limit_w,
        caveat=_caveat(ps),
        sources={"power_limit_w": ps.power_limit_source,
                 "sweeps": f"{ps.citation}; {ps.notes}",
                 "supported_clocks_mhz": "the clocks of the calibration sweeps (model range)"})


def plot_fit(cal: Calibration, key: str, path: Path, n_show: int = 8) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweeps = SETS[key].load()
    pick = [sweeps[i] for i in np.linspace(0, len(sweeps) - 1, min(n_show, len(sweeps))).astype(int)]
    prm = cal.params
    fig, axes = plt.subplots(2, (len(pick) + 1) // 2, figsize=(3 * ((len(pick) + 1) // 2), 5.5),
                             squeeze=False)
    for ax, s in zip(axes.ravel(), pick):
        a = cal.alphas[s.workload]
        tau = time_ratio(s.f, s.default_clock_mhz, a, prm.overlap_exponent)
        e = power_w(s.f, s.default_clock_mhz, s.power_w[-1], tau, prm) * tau * s.t[-1]
        ax.plot(s.f, s.energy / s.energy[-1], "o", ms=3, label="measured")
        ax.plot(s.f, e / s.energy[-1], "-", label=f"model (fitted alpha={a:.2f})")
        ax.set_title(s.workload[:28], fontsize=7)
        ax.tick_params(labelsize=6)
    axes.ravel()[0].legend(fontsize=6)
    fig.suptitle(f"{prm.gpu}: energy / energy at default clock vs SM clock (MHz); "
                 "calibration fit, in-sample", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def readme(rows: list[dict], sets: dict[str, GpuDvfsParams]) -> str:
    cols = list(rows[0])
    lines = [
        "# DVFS model parameters fitted to published clock sweeps",
        "",
        "Produced by `python experiments/dvfs_calibrate.py`, which also writes the shipped "
        "parameter files `nasenergy/dvfs/params/*.json`. The sweeps are measurements published "
        "by others (see `nasenergy/dvfs/published.py` and the data folder's PROVENANCE.md); "
        "nothing here was measured by this project. Equations: `nasenergy/dvfs/model.py`.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    calibrated = [p for p in sets.values() if p.provenance == "calibrated"]
    knees = ", ".join(f"{p.name} {p.knee_clock_mhz / p.max_clock_mhz:.2f}" for p in calibrated)
    lines += [
        "",
        "`power_rms_frac`: RMS relative error of modelled board power over every sweep point; "
        "`time_rms_frac`: of modelled time with each workload's alpha fitted; `energy_rms_log`: "
        "RMS of log(modelled / measured energy). These are in-sample fits; the out-of-sample "
        "test is `results/dvfs_validation`. `fit_<name>.png` shows measured and modelled energy "
        "curves of a few workloads per GPU.",
        "",
        f"Voltage knee as a fraction of the highest clock: {knees}.",
        "",
        f"**H200**: {sets['h200'].caveat}.",
        "",
        "## Sources of the constants",
        "",
    ]
    for p in sets.values():
        lines.append(f"### {p.name}")
        lines += [f"* `{k}`: {v}" for k, v in p.sources]
        if p.caveat:
            lines.append(f"* caveat: {p.caveat}")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params-dir", type=Path, default=ROOT / "nasenergy" / "dvfs" / "params")
    ap.add_argument("--results-dir", type=Path, default=ROOT / "results" / "dvfs_calibration")
    args = ap.parse_args(argv)
    def body() -> int | None:
        args.params_dir.mkdir(parents=True, exist_ok=True)
        args.results_dir.mkdir(parents=True, exist_ok=True)
        rows = []
        written: dict[str, GpuDvfsParams] = {}
        for key, name, patterns in TARGETS:
            cal = calibrate_set(key, name, patterns)
            cal.params.save(args.params_dir / f"{name}.json")
            plot_fit(cal, key, args.results_dir / f"fit_{name}.png")
            written[name] = cal.params
            print(f"{name}: {cal.params.fit}")
        h200 = extrapolate_params(
            written["a100-sxm4"], name="h200", gpu="NVIDIA H200 (extrapolated from A100-SXM4)",
            device_patterns=("H200",), supported_clocks_mhz=H200_CLOCKS, default_clock_mhz=1980.0,
            power_limit_w=700.0, idle_power_w=84.0, caveat=H200_CAVEAT, sources=H200_SOURCES)
        h200.save(args.params_dir / "h200.json")
        written["h200"] = h200
        for p in written.values():
            fit = dict(p.fit)
            rows.append({
                "name": p.name, "gpu": p.gpu, "provenance": p.provenance,
                "n_sweeps": int(fit.get("n_sweeps", 0)) or "",
                "clocks_mhz": f"{p.supported_clocks_mhz[0]:g}-{p.max_clock_mhz:g} "
                              f"({len(p.supported_clocks_mhz)})",
                "power_limit_w": p.power_limit_w, "idle_power_w": round(p.idle_power_w, 1),
                "static_power_w": round(p.static_power_w, 1),
                "knee_clock_mhz": round(p.knee_clock_mhz), "knee_frac_of_max":
                    round(p.knee_clock_mhz / p.max_clock_mhz, 3),
                "v_floor": round(p.v_floor, 3), "v_exponent": round(p.v_exponent, 2),
                "per_cycle_share": round(p.per_cycle_share, 3),
                "overlap_exponent": p.overlap_exponent,
                "power_rms_frac": round(fit["power_rms_frac"], 4) if "power_rms_frac" in fit else "",
                "time_rms_frac": round(fit["time_rms_frac"], 4) if "time_rms_frac" in fit else "",
                "energy_rms_log": round(fit["energy_rms_log"], 4) if "energy_rms_log" in fit else "",
            })
        with (args.results_dir / "params_summary.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        (args.results_dir / "README.md").write_text(readme(rows, written))

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
