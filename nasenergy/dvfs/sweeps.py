"""Clock sweeps: one workload's time and power measured at several SM clocks, and their CSV form.

A `Sweep` is what the ``recorded`` backend replays and what calibration fits. The CSV format (one
row per workload and clock) is::

    workload,sm_clock_mhz,time_s_per_img,power_w

``time_s_per_img`` may be replaced by ``throughput_img_per_s`` and ``power_w`` by
``energy_j_per_img`` (total board energy); ``workload`` is optional when the file holds one
workload. Optional columns ``gpu`` and the activity figures ``sm_active``, ``dram_active``,
``gpu_busy``, ``flop_util`` (read at the default clock, i.e. on its row) are kept. The default clock of a sweep is its highest clock.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.dvfs.points import ClockPoint
from nasenergy.errors import DataNotFoundError, UsageError


@dataclass(frozen=True)
class Sweep:
    """One workload measured at several SM clocks (ascending).

    Attributes:
        gpu: GPU description.
        workload: workload name.
        clocks_mhz: SM clocks, MHz, ascending and distinct.
        time_s: seconds per unit of work (per image for our own sweeps; per run or per kernel
            for published ones; only ratios matter to calibration).
        power_w: mean board power at each clock, watts.
        group: workloads in one group are held out together in validation (e.g. inputs of one
            benchmark); defaults to the workload.
        sm_active: fraction of time SMs were busy at the default clock, or ``None``.
        dram_active: DRAM bandwidth utilisation at the default clock, or ``None``.
        gpu_busy: fraction of time a kernel was running at the default clock, or ``None``.
        flop_util: achieved / peak arithmetic rate at the default clock, or ``None``.
        origin: where the data came from (a file and its provenance).
    """

    gpu: str
    workload: str
    clocks_mhz: tuple[float, ...]
    time_s: tuple[float, ...]
    power_w: tuple[float, ...]
    group: str = ""
    sm_active: float | None = None
    dram_active: float | None = None
    gpu_busy: float | None = None
    flop_util: float | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        n = len(self.clocks_mhz)
        if n < 2 or len(self.time_s) != n or len(self.power_w) != n:
            raise UsageError(f"sweep {self.workload!r}: need >= 2 clocks with one time and power each")
        if any(b <= a for a, b in zip(self.clocks_mhz, self.clocks_mhz[1:])):
            raise UsageError(f"sweep {self.workload!r}: clocks must be ascending and distinct")
        for name in ("clocks_mhz", "time_s", "power_w"):
            if not all(math.isfinite(v) and v > 0 for v in getattr(self, name)):
                raise UsageError(f"sweep {self.workload!r}: {name} must be positive numbers")
        if not self.group:
            object.__setattr__(self, "group", self.workload)

    @classmethod
    def from_arrays(cls, gpu: str, workload: str, clocks_mhz: Iterable[float],
                    time_s: Iterable[float], power_w: Iterable[float], **kw: Any) -> "Sweep":
        """Build a sweep from unsorted arrays (sorted by clock here)."""
        f, t, p = (np.asarray(list(x), dtype=float) for x in (clocks_mhz, time_s, power_w))
        order = np.argsort(f)
        clocks, times, powers = (tuple(float(v) for v in a[order]) for a in (f, t, p))
        return cls(gpu, workload, clocks, times, powers, **kw)

    @property
    def f(self) -> np.ndarray:
        """Clocks as an array, MHz."""
        return np.asarray(self.clocks_mhz)

    @property
    def t(self) -> np.ndarray:
        """Times as an array, seconds per unit of work."""
        return np.asarray(self.time_s)

    @property
    def p(self) -> np.ndarray:
        """Powers as an array, watts."""
        return np.asarray(self.power_w)

    @property
    def energy(self) -> np.ndarray:
        """Energy per unit of work at each clock, joules."""
        return self.t * self.p

    @property
    def default_clock_mhz(self) -> float:
        """The default clock: the highest in the sweep, MHz."""
        return self.clocks_mhz[-1]

    def point(self, sm_clock_mhz: float, source: str = "recorded") -> ClockPoint:
        """The recorded point at exactly `sm_clock_mhz`.

        Raises:
            UsageError: the clock is not in the sweep.
        """
        idx = int(np.argmin(np.abs(self.f - sm_clock_mhz)))
        if abs(self.clocks_mhz[idx] - sm_clock_mhz) > 1e-6:
            raise UsageError(f"clock {sm_clock_mhz:g} MHz was not recorded for {self.workload!r}")
        return ClockPoint.from_time_power(self.clocks_mhz[idx], self.time_s[idx],
                                          self.power_w[idx], source)


_ACTIVITY = ("sm_active", "dram_active", "gpu_busy", "flop_util")
_TIME_COLS = ("time_s_per_img", "throughput_img_per_s")
_POWER_COLS = ("power_w", "energy_j_per_img")


def _num(row: dict[str, str], col: str, where: str) -> float:
    try:
        v = float(row[col])
    except (TypeError, ValueError):
        raise UsageError(f"{where}: column {col!r} is not a number: {row.get(col)!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise UsageError(f"{where}: column {col!r} must be positive, got {v}")
    return v


def _opt(row: dict[str, str], col: str) -> float | None:
    raw = (row.get(col) or "").strip()
    return float(raw) if raw else None


def read_sweeps_csv(path: str | Path) -> list[Sweep]:
    """Every workload's sweep in a CSV file (format in the module docstring).

    Raises:
        DataNotFoundError: no such file.
        UsageError: missing columns, bad values, duplicate clocks, fewer than two clocks.
    """
    p = Path(path)
    if not p.is_file():
        raise DataNotFoundError(f"sweep file not found: {p}")
    with p.open(newline="") as fh:
        reader = csv.DictReader(fh)
        cols = set(reader.fieldnames or [])
        need = ["sm_clock_mhz"]
        if "sm_clock_mhz" not in cols or not cols & set(_TIME_COLS) or not cols & set(_POWER_COLS):
            raise UsageError(
                f"{p}: a sweep CSV needs columns {need[0]}, one of {_TIME_COLS} and one of "
                f"{_POWER_COLS}; found {sorted(cols)}")
        rows: dict[str, list[tuple[float, float, float]]] = {}
        gpus: dict[str, str] = {}
        by_clock: dict[str, dict[str, dict[float, float]]] = {}
        for line, row in enumerate(reader, start=2):
            where = f"{p}:{line}"
            name = (row.get("workload") or "").strip() or p.stem
            f = _num(row, "sm_clock_mhz", where)
            t = (_num(row, "time_s_per_img", where) if row.get("time_s_per_img")
                 else 1.0 / _num(row, "throughput_img_per_s", where))
            w = (_num(row, "power_w", where) if row.get("power_w")
                 else _num(row, "energy_j_per_img", where) / t)
            rows.setdefault(name, []).append((f, t, w))
            gpus.setdefault(name, (row.get("gpu") or "").strip())
            activity = by_clock.setdefault(name, {})
            try:
                for k in _ACTIVITY:
                    v = _opt(row, k)
                    if v is not None:
                        activity.setdefault(k, {})[f] = v
            except ValueError:
                raise UsageError(f"{where}: sm_active/dram_active must be numbers") from None
    if not rows:
        raise UsageError(f"{p}: no sweep rows")
    out = []
    for name, pts in rows.items():
        clocks = [q[0] for q in pts]
        if len(set(clocks)) != len(clocks):
            raise UsageError(f"{p}: workload {name!r} has the same clock twice")
        top = max(clocks)
        acts = {k: by_clock[name].get(k, {}).get(top) for k in _ACTIVITY}
        out.append(Sweep.from_arrays(gpus[name] or "unknown GPU", name, clocks,
                                     [q[1] for q in pts], [q[2] for q in pts],
                                     origin=str(p), **acts))
    return out


def read_sweep_csv(path: str | Path, workload: str | None = None) -> Sweep:
    """One workload's sweep from a CSV file; `workload` is required if the file holds several.

    Raises:
        UsageError: the workload is missing or ambiguous.
    """
    sweeps = read_sweeps_csv(path)
    if workload is None:
        if len(sweeps) != 1:
            names = ", ".join(s.workload for s in sweeps[:10])
            raise UsageError(f"{path} holds {len(sweeps)} workloads ({names}...); name one")
        return sweeps[0]
    for s in sweeps:
        if s.workload == workload:
            return s
    raise UsageError(f"workload {workload!r} not in {path}")


def write_sweeps_csv(sweeps: Iterable[Sweep], path: str | Path) -> Path:
    """Write sweeps in the CSV format `read_sweeps_csv` reads (times taken as per image)."""
    p = Path(path)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["gpu", "workload", "sm_clock_mhz", "time_s_per_img", "power_w", *_ACTIVITY])
        for s in sweeps:
            for i, (f, t, pw) in enumerate(zip(s.clocks_mhz, s.time_s, s.power_w)):
                top = i == len(s.clocks_mhz) - 1
                acts = [getattr(s, k) for k in _ACTIVITY]
                w.writerow([s.gpu, s.workload, *(repr(float(v)) for v in (f, t, pw)),
                            *("" if not top or a is None else repr(float(a)) for a in acts)])
    return p
