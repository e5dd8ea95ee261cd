"""Readers for the published DVFS clock sweeps in `nasenergy.paths.dvfs_data_dir` (read in place).

Each usable set becomes a list of `Sweep`s (one per workload, clocks ascending, the highest clock
being the default). The files are third-party measurements (see ``PROVENANCE.md`` in that
folder); nothing here copies them. `EXCLUDED` lists the files not used, with the reason.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from nasenergy.dvfs.sweeps import Sweep
from nasenergy.errors import UsageError
from nasenergy.paths import dvfs_data_dir


@dataclass(frozen=True)
class PublishedSet:
    """One published sweep set usable for calibration and validation.

    Attributes:
        key: short identifier.
        gpu: the GPU, as the source describes it.
        datacenter: whether it counts toward the data-centre accuracy targets.
        power_limit_w: board power limit used for ``power_frac``, watts.
        power_limit_source: where that figure comes from.
        citation: the paper and repository.
        files: data files read, relative to the data folder.
        notes: what was kept and why.
    """

    key: str
    gpu: str
    datacenter: bool
    power_limit_w: float
    power_limit_source: str
    citation: str
    files: tuple[str, ...]
    notes: str

    def load(self, data_dir: Path | None = None) -> list[Sweep]:
        """Read this set's sweeps from `data_dir` (default `dvfs_data_dir()`)."""
        d = data_dir if data_dir is not None else dvfs_data_dir()
        return _LOADERS[self.key](d, self)


def _f(row: dict[str, str], key: str) -> float:
    return float(row[key])


def _load_ttu(d: Path, ps: PublishedSet) -> list[Sweep]:
    by_app: dict[str, list[dict[str, str]]] = defaultdict(list)
    for rel in ps.files:
        with (d / rel).open(newline="") as fh:
            for row in csv.DictReader(fh):
                by_app[row["application"]].append(row)
    out = []
    for app, rows in sorted(by_app.items()):
        rows.sort(key=lambda r: _f(r, "sm_app_clock"))
        top = rows[-1]
        out.append(Sweep.from_arrays(
            ps.gpu, app, [_f(r, "sm_app_clock") for r in rows], [_f(r, "run_time") for r in rows],
            [_f(r, "power_usage") for r in rows], sm_active=_f(top, "sm_active"),
            dram_active=_f(top, "dram_active"), gpu_busy=_f(top, "gr_engine_active"),
            flop_util=max(_f(top, k) for k in ("fp64_active", "fp32_active", "fp16_active",
                                               "tensor_activity") if top.get(k)),
            origin=f"{ps.key}: {app}"))
    return out


def _load_hkbu(d: Path, ps: PublishedSet) -> list[Sweep]:
    out = []
    for rel in ps.files:
        groups: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
        with (d / rel).open(newline="") as fh:
            for row in csv.DictReader(fh):
                groups[(row["benchmark"], row["kernel"], row["argNo"])].append(row)
        for (bench, kernel, arg), rows in sorted(groups.items()):
            rows.sort(key=lambda r: _f(r, "core_frequency"))
            top = rows[-1]
            out.append(Sweep.from_arrays(
                ps.gpu, f"{bench}/{kernel}/{arg}", [_f(r, "core_frequency") for r in rows],
                [_f(r, "time") for r in rows], [_f(r, "average_power") for r in rows],
                group=bench, sm_active=_f(top, "SMACT"), dram_active=_f(top, "DRAMA"),
                flop_util=max(_f(top, k) for k in ("FP16A", "FP32A", "FP64A", "TENSO")),
                origin=f"{ps.key}: {Path(rel).name}"))
    return out


def _load_inesc(d: Path, ps: PublishedSet) -> list[Sweep]:
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    with (d / ps.files[0]).open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["mem_clock_mhz"] == "3505":
                groups[row["benchmark"]].append(row)
    return [Sweep.from_arrays(ps.gpu, name, [_f(r, "core_clock_mhz") for r in rows],
                              [_f(r, "time_ms") for r in rows], [_f(r, "power_w") for r in rows],
                              origin=f"{ps.key}: {name}")
            for name, rows in sorted(groups.items())]


_LOADERS: dict[str, Callable[[Path, PublishedSet], list[Sweep]]] = {
    "a100_sxm4_ttu": _load_ttu,
    "v100_hkbu": _load_hkbu,
    "rtx8000_hkbu": _load_hkbu,
    "titanx_maxwell_inesc": _load_inesc,
}

_TTU_FILES = tuple(f"ttu_ali_a100_v100/GA100-dvfs-{w}-dcgm.csv"
                   for w in ("accel", "GROMACS", "LAMMPS", "NAMD", "LSTM", "dgemm", "stream"))

SETS: dict[str, PublishedSet] = {s.key: s for s in (
    PublishedSet(
        key="a100_sxm4_ttu", gpu="NVIDIA A100-SXM4 (inferred)", datacenter=True,
        power_limit_w=500.0,
        power_limit_source=("NVIDIA A100 datasheet: 400 W standard SXM4 TDP, up to 500 W for the "
                            "HGX A100 80GB custom-thermal SKU; DGEMM here draws 476 W, so 500 W"),
        citation=("G. Ali et al. (Texas Tech), repo ghazanfarttu/Optimal-GPU-frequency-using-"
                  "DNN-based-models @19c292a, BSD-3-Clause"),
        files=_TTU_FILES,
        notes=("25 applications (SPEC ACCEL x19, GROMACS, LAMMPS, NAMD, LSTM, DGEMM, STREAM) x 61 "
               "application clocks 510-1410 MHz, memory 1215 MHz; time = run_time, power = DCGM "
               "power_usage; sm_active/dram_active at 1410 MHz as features")),
    PublishedSet(
        key="v100_hkbu", gpu="NVIDIA Tesla V100 (PCIe, inferred from 1380 MHz top clock)",
        datacenter=True, power_limit_w=250.0,
        power_limit_source="NVIDIA V100 PCIe datasheet: 250 W",
        citation=("Q. Wang, X. Chu, 'GPGPU Performance Estimation with Core and Memory Frequency "
                  "Scaling', ICPADS 2018; repo blackjack2015/NV-DVFS-Benchmark @f189504"),
        files=("hkbu_nv_dvfs_benchmark/v100-dvfs-real-profile.csv",
               "hkbu_nv_dvfs_benchmark/v100-dvfs-microbenchmark-profile.csv"),
        notes=("20 CUDA SDK/Rodinia kernels + 138 microbenchmark inputs (6 benchmarks) x 10 core "
               "clocks 405-1380 MHz, memory 877 MHz; time = kernel time; inputs of one benchmark "
               "form one hold-out group")),
    PublishedSet(
        key="rtx8000_hkbu", gpu="NVIDIA Quadro RTX 8000", datacenter=False, power_limit_w=260.0,
        power_limit_source="NVIDIA Quadro RTX 8000 datasheet: 260 W board power",
        citation="as v100_hkbu (same repository and protocol)",
        files=("hkbu_nv_dvfs_benchmark/rtx8000-dvfs-real-profile.csv",
               "hkbu_nv_dvfs_benchmark/rtx8000-dvfs-microbenchmark-profile.csv"),
        notes="same workloads as v100_hkbu, 10 core clocks 705-1710 MHz, memory 6500 MHz"),
    PublishedSet(
        key="titanx_maxwell_inesc", gpu="NVIDIA GTX Titan X (Maxwell)", datacenter=False,
        power_limit_w=250.0, power_limit_source="NVIDIA GTX Titan X specification: 250 W",
        citation=("J. Guerreiro et al., 'GPU Static Modeling using PTX and Deep Structured "
                  "Learning', IEEE Access 2019; repo hpc-ulisboa/gpuPTXModel @db54a50, BSD-3-Clause"),
        files=("inesc_gpuptxmodel_titanx/gtxtitanx_realbenchmarks_tidy.csv",),
        notes=("25 applications x 16 core clocks 595-1164 MHz at memory 3505 MHz (the 810 MHz "
               "memory rows are a different operating point and are not used); no activity "
               "features; power counts GPU-active samples only")),
)}

#: Files in the data folder that are not used, with the reason.
EXCLUDED: dict[str, str] = {
    "ttu_ali_a100_v100/GV100-dvfs-dgemm-perf.csv": "V100 runtime only, no power",
    "ttu_ali_a100_v100/GV100-dvfs-stream-perf.csv": "V100 runtime only, no power",
    "ttu_ali_a100_v100/GA100-dvfs-accel-perf.csv":
        "per-run runtimes without power; the paired -dcgm file is used",
    "ttu_ali_a100_v100/GA100-dvfs-dgemm-perf.csv": "no power; the paired -dcgm file is used",
    "ttu_ali_a100_v100/GA100-dvfs-stream-perf.csv": "no power; the paired -dcgm file is used",
    "hkbu_dlbench_dvfs/*": ("training or fwd+bwd timing over only the top ~20% of the core-clock "
                            "range (4-5 clocks), two files use clock offsets, one GPU unverified"),
    "hkbu_gpu_dvfs_job_schedule/*": ("consumer GPUs, 5 core clocks covering only the top ~20% of "
                                     "the range, crossed with memory clocks"),
    "zeus_nsdi23_power_limit/*": "power-limit sweeps, the SM clock is not recorded",
    "kerneltuner_fp32_synthetic/a100_pcie_40gb_fp32_kernel_81clocks.csv":
        "a single synthetic kernel: no other workload to calibrate on (leave-one-out impossible)",
    "kerneltuner_fp32_synthetic/rtx_a4000_fp32_kernel_10clocks.csv":
        "single kernel, power-capped at the top clocks (requested clock not reached)",
    "ilager_gpu_ddvfs_p100/p100_final_data_extract.csv":
        "low quality per its provenance: near-idle powers, runtimes barely follow the clock",
}


def load_set(key: str, data_dir: Path | None = None) -> list[Sweep]:
    """The sweeps of published set `key` (one of `SETS`).

    Raises:
        UsageError: unknown key.
        DataNotFoundError: the data folder is missing.
    """
    if key not in SETS:
        raise UsageError(f"unknown published sweep set {key!r}; known: {', '.join(SETS)}")
    return SETS[key].load(data_dir)


#: The power-capped sweep (`load_capped_sweep`): Kernel Tuner's FP32 kernel on an RTX A4000,
#: whose top requested clocks are held near 1740 MHz by its power limit.
CAPPED_SWEEP_FILE = "kerneltuner_fp32_synthetic/rtx_a4000_fp32_kernel_10clocks.csv"
#: RTX A4000 board power: NVIDIA RTX A4000 datasheet, 140 W.
CAPPED_SWEEP_POWER_LIMIT_W = 140.0


def load_capped_sweep(data_dir: Path | None = None) -> dict[str, list[float]]:
    """The power-capped sweep's columns: ``requested_mhz``, ``held_mhz`` (NVML clock observed
    during the run), ``time_s`` (per kernel launch) and ``power_w``."""
    d = data_dir if data_dir is not None else dvfs_data_dir()
    path = d / CAPPED_SWEEP_FILE
    if not path.is_file():
        raise UsageError(f"power-capped sweep not found: {path}")
    cols: dict[str, list[float]] = {"requested_mhz": [], "held_mhz": [], "time_s": [],
                                    "power_w": []}
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            cols["requested_mhz"].append(_f(row, "requested_gr_clock_mhz"))
            cols["held_mhz"].append(_f(row, "observed_core_freq_mhz"))
            cols["time_s"].append(_f(row, "time_ms_mean") / 1e3)
            cols["power_w"].append(_f(row, "nvml_power_w"))
    return cols
