"""The user-facing DVFS curve of one measurement: the table (and optional plot) of
``python -m nasenergy.profile ... --dvfs``.

One job: `show_curve` renders the modelled energy and time over SM clocks with the chosen and
default clocks marked, and, with ``png_path``, plots energy (with the saving band) and throughput
against clock (matplotlib, imported only then).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from nasenergy.dvfs.clock_choice import band_members
from nasenergy.dvfs.measurement_clock import (candidate_clocks, measurement_observation, optimal_clock_for,
                                              resolve_params)
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.points import MIN_ENERGY, OptimalClock
from nasenergy.errors import writing
from nasenergy.measurement import Measurement

__all__ = ["show_curve"]


def _rows_to_show(n: int, keep: set[int], max_rows: int) -> list[int]:
    if n <= max_rows:
        return list(range(n))
    step = max(1, int(np.ceil(n / max(1, max_rows - len(keep)))))
    rows = set(range(0, n, step)) | {n - 1}
    for k in keep:
        rows |= {j for j in (k - 1, k, k + 1) if 0 <= j < n}
    return sorted(rows)


def show_curve(measurement: Measurement, *, device: Any = None, png_path: str | Path | None = None,
               mode: str = MIN_ENERGY, params: GpuDvfsParams | None = None,
               max_slowdown: float | None = None, max_rows: int = 30,
               network: str | None = None) -> str:
    """A text table of the modelled energy/time curve over SM clocks, with the chosen point.

    Args:
        measurement: the default-clock measurement of one network.
        device: an open NVML device (`nasenergy.hardware.nvml.NvmlDevice`) whose supported clocks
            are used instead of the parameter set's (read only; clocks are not changed); for a
            GPU without a shipped set, its facts give a ``generic`` set (`resolve_params`).
        png_path: also write a plot of energy and throughput against clock there, with the
            saving band and the network's name.
        mode: ``min-energy`` | ``bounded-slowdown`` | ``min-edp``.
        params: DVFS parameters; default: `resolve_params`.
        max_slowdown: for ``bounded-slowdown``, the largest throughput loss (fraction).
        max_rows: rows of the table (clocks are thinned, keeping the marked ones).
        network: the network's name, shown in the table and the plot.

    Returns:
        The table; ``*`` marks the chosen clock and ``d`` the default clock.

    Raises:
        UsageError: no shipped set matches and no device is given, or no power measured.
    """
    p = resolve_params(measurement, params, device=device)
    p, obs, default = measurement_observation(measurement, p)
    clocks = candidate_clocks(p, obs, device.supported_graphics_clocks_mhz()
                              if device is not None else None)
    opt = optimal_clock_for(measurement, params=p, mode=mode, max_slowdown=max_slowdown,
                            clocks_mhz=clocks)
    model = DvfsModel(p)
    curve = model.curve(obs, clocks)
    f = curve.clocks_mhz
    i_best = int(np.argmin(np.abs(f - opt.sm_clock_mhz)))
    i_def = int(np.argmin(np.abs(f - default.sm_clock_mhz)))
    name = network or "one network"
    band = opt.saving_band_frac or (opt.energy_saving_frac, opt.energy_saving_frac)
    lines = [
        f"DVFS curve of {name} on {measurement.device_name} ({measurement.precision}, "
        f"batch {measurement.batch_size}); parameter set {p.name} ({p.provenance})",
        f"source: default clock {default.sm_clock_mhz:g} MHz {measurement.source}; "
        f"other clocks {opt.label}",
    ]
    if opt.caveat:
        lines.append(f"caveat: {opt.caveat}")
    lines += [
        f"mode {mode}: best {opt.sm_clock_mhz:g} MHz ({opt.label}), energy "
        f"{opt.energy_j_per_img * 1e3:.4g} mJ/img ({_pct1(opt.energy_saving_frac)} % saved vs "
        f"default, band {_pct1(band[0])} % to {_pct1(band[1])} %), throughput "
        f"{_pct1(opt.throughput_change_frac, sign=True)} % vs default, {opt.n_probes} probes",
        "",
        f"{'':2}{'clock_mhz':>9} {'time_us_per_img':>16} {'throughput_img_per_s':>21} "
        f"{'power_w':>8} {'energy_mj_per_img':>18} {'saved_vs_default_pct':>21}",
    ]
    e_def = default.energy_j_per_img
    for i in _rows_to_show(len(f), {i_best, i_def}, max_rows):
        mark = ("*" if i == i_best else "") + ("d" if i == i_def else "")
        e = curve.energy_j_per_img[i]
        lines.append(f"{mark:2}{f[i]:9.0f} {curve.time_s_per_img[i] * 1e6:16.5g} "
                     f"{1.0 / curve.time_s_per_img[i]:21.6g} {curve.power_w[i]:8.1f} "
                     f"{e * 1e3:18.5g} {_pct1(1.0 - e / e_def):>21}")
    text = "\n".join(lines)
    if png_path is not None:
        lo_e, hi_e = _band_curves(model, obs, clocks)
        _plot(curve.clocks_mhz, curve.energy_j_per_img, 1.0 / curve.time_s_per_img, opt,
              Path(png_path), f"{name} on {measurement.device_name}: {opt.label} DVFS curve "
              f"({p.name} parameters)", band=(lo_e, hi_e))
    return text


def _pct1(frac: float, *, sign: bool = False) -> str:
    """``frac`` in percent with one decimal, never ``-0.0``; savings are positive when energy
    falls (the sign convention of every saving nasenergy prints), changes carry their sign."""
    value = round(100.0 * float(frac), 1) + 0.0
    return f"{value:+.1f}" if sign else f"{value:.1f}"


def _band_curves(model: DvfsModel, obs: WorkloadObservation, clocks: Sequence[float] | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest modelled energy per clock over the band of `saving_band`."""
    curves = [DvfsModel(shape).curve(obs, clocks, alpha=a).energy_j_per_img
              for shape, a in band_members(model.params, obs, model.alpha(obs))]
    return np.min(curves, axis=0), np.max(curves, axis=0)


def _plot(f: np.ndarray, e: np.ndarray, thr: np.ndarray, opt: OptimalClock, path: Path,
          title: str, band: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(f, e * 1e3, color="tab:blue", label=f"energy per image ({opt.label})")
    if band is not None:
        ax.fill_between(f, band[0] * 1e3, band[1] * 1e3, color="tab:blue", alpha=0.2,
                        label="band: sensitivity +/- calibration residual"
                              + (" and each reference GPU's shape" if opt.basis == "generic" else ""))
    ax.scatter([opt.default.sm_clock_mhz], [opt.default.energy_j_per_img * 1e3], color="black",
               zorder=3, label=f"default clock ({opt.default.source})")
    lo_s, hi_s = opt.saving_band_frac or (opt.energy_saving_frac, opt.energy_saving_frac)
    ax.scatter([opt.sm_clock_mhz], [opt.energy_j_per_img * 1e3], color="tab:red", zorder=3,
               label=f"chosen: {opt.sm_clock_mhz:g} MHz ({opt.mode}), saving "
                     f"{opt.energy_saving_frac:.0%} ({lo_s:.0%} to {hi_s:.0%})")
    ax.set_xlabel("SM clock (MHz)")
    ax.set_ylabel("energy per image (mJ)")
    ax2 = ax.twinx()
    ax2.plot(f, thr, color="tab:gray", linestyle="--", label=f"throughput ({opt.label})")
    ax2.set_ylabel("throughput (img/s)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center")
    ax.set_title(textwrap.fill(title, 90), fontsize=8)
    fig.tight_layout()
    try:
        with writing(path):
            fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
