"""``python -m nasenergy.profile``: measure one architecture and print every figure.

Example::

    python -m nasenergy.profile --space tss --arch '|nor_conv_3x3~0|+|...|' \\
        --precision fp16 --precision fp32 --batch-size 1024 --hardware auto

prints one table per precision (units and the figures' source included); ``--json`` prints the
same as JSON. ``--dvfs`` adds the network's energy-versus-clock curve from ``nasenergy.dvfs``.
Bad input exits with status 2 and one ``error:`` line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from nasenergy import __version__
from nasenergy._cli import ARCH_HELP, OneLineParser, add_version, dataset_arg, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.meter import ArchMeter, RecordedProfile
from nasenergy.hardware.registry import AUTO, METERS
from nasenergy.hardware.select import resolve_hardware
from nasenergy.hardware.deployed import measure_deployed
from nasenergy.measurement import PRECISIONS, Measurement
from nasenergy.dvfs.api import show_curve
from nasenergy.dvfs.params import params_for_device
from nasenergy.dvfs.points import MIN_ENERGY, MODES
from nasenergy.hardware.nvml import NvmlError, device_count, open_device
from nasenergy.hardware.recorded import shape_to_str
from search_spaces import Arch, DATASETS, SPACE_NAMES, SpaceProtocol, get_space


DEFAULT_BATCH_SIZE = 1024


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m nasenergy.profile``."""
    p = OneLineParser(prog="python -m nasenergy.profile",
                description="Measure one architecture's throughput, utilization and energy per image.")
    add_version(p, __version__)
    p.add_argument("--space", default="tss", choices=SPACE_NAMES, help="search space (default tss)")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    p.add_argument("--dataset", type=dataset_arg, default="cifar10", choices=DATASETS,
                   help="sets input shape and classes (any spelling: cifar-10, imagenet16, ...)")
    p.add_argument("--batch-size", type=int, default=None,
                   help=f"images per forward pass (default {DEFAULT_BATCH_SIZE}; with a recorded profile, "
                        "the batch size each precision was recorded at)")
    p.add_argument("--precision", action="append", choices=(*PRECISIONS, "all"),
                   help="repeatable, or 'all' (default fp16)")
    p.add_argument("--hardware", default="auto", choices=METERS.choices(AUTO),
                   help="auto: the GPU if present, else the recorded H200 profile")
    p.add_argument("--peak", default="measured", choices=("measured", "datasheet"),
                   help="utilization denominator on a GPU (default measured)")
    p.add_argument("--energy-basis", default="total", choices=("total", "above_idle"),
                   help="board energy, or energy above idle power")
    p.add_argument("--no-energy", action="store_true", help="throughput and utilization only (faster)")
    p.add_argument("--profile", type=Path, help="recorded profile CSV for --hardware recorded")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--dvfs", action="store_true", help="also show the energy-versus-clock curve")
    p.add_argument("--dvfs-mode", default=MIN_ENERGY, choices=MODES,
                   help=f"how --dvfs picks the clock (default {MIN_ENERGY})")
    p.add_argument("--max-slowdown", type=float,
                   help="with --dvfs-mode bounded-slowdown: largest throughput loss, a fraction")
    p.add_argument("--png", type=_png_arg, help="with --dvfs: save the curve as this PNG (a name ending in .png)")
    return p


def _png_arg(text: str) -> Path:
    """An argparse type for ``--png``: a file name ending in ``.png``."""
    path = Path(text)
    if not text.strip() or path.suffix.lower() != ".png" or not path.stem:
        raise argparse.ArgumentTypeError(f"expected a file name ending in .png, got {text!r}")
    return path


def check_png_place(png: Path) -> None:
    """Refuse, before any measurement, a ``--png`` whose folder is missing or is a file, or that
    names a folder.

    Raises:
        UsageError: the PNG cannot be written there.
    """
    folder = png.parent
    if not folder.is_dir():
        raise UsageError(f"--png {png}: {folder} is not a folder")
    if png.is_dir():
        raise UsageError(f"--png {png} is a folder; name a file")


def _fmt(value: float | None, fmt: str, unit: str = "") -> str:
    if value is None:
        return "unavailable"
    return f"{value:{fmt}}{(' ' + unit) if unit else ''}"


def _pct(value: float | None) -> str:
    return "unavailable" if value is None else f"{100 * value:.2f} %"


def _flops_rate(flops_per_s: float) -> str:
    if flops_per_s >= 1e12:
        return f"{flops_per_s / 1e12:.1f} TFLOP/s"
    return f"{flops_per_s / 1e9:.1f} GFLOP/s"


def _network_form(m: Measurement) -> str:
    form = {"deployed": "deployed (no dead or zero ops)", "as_built": "as built (NATS reference)"}.get(
        m.network_form or "", "the module given")
    return form + (f", {m.memory_format.replace('_', '-')}" if m.memory_format else "")


def _counters(m: Measurement) -> str:
    names = (("SM", m.sm_util_pct), ("occupancy", m.sm_occupancy_pct), ("DRAM bw", m.dram_bw_util_pct),
             ("tensor", m.tensor_util_pct), ("GPU", m.gpu_util_pct), ("memory", m.memory_util_pct))
    return f"{m.counters_kind}: " + ", ".join(f"{k} {v:.0f} %" for k, v in names if v is not None)


def format_measurement(m: Measurement) -> str:
    """A human-readable table of every figure of `m`, with units."""
    e = m.energy_j_per_img
    reading = f"; read from the {m.energy_reading.replace('_', ' ')}" if m.energy_reading else ""
    energy = (f"{e * 1e3:.4f} mJ ({m.energy_basis}; CV {_pct(m.energy_cv)}{reading})" if e is not None
              else "unavailable")
    rows = [
        ("device", m.device_name),
        ("source", m.source),
        ("throughput", f"{m.throughput_img_per_s:,.0f} img/s (CV {_pct(m.throughput_cv)}, "
                       f"{m.n_repeats} repeats)"),
        ("latency", f"{m.latency_ms_per_batch:.3f} ms/batch"),
        ("network measured", _network_form(m)),
        ("FLOPs per image", f"{m.flops_per_img / 1e6:.2f} MFLOP ({m.macs_per_img / 1e6:.2f} MMAC)"
                            + (" of the deployed network" if m.network_form == "deployed" else "")),
        ("parameters", f"{m.params:,}" + (" (deployed)" if m.network_form == "deployed" else "")),
        *((("official FLOPs per image", f"{m.flops_per_img_official / 1e6:.2f} MFLOP (NATS-Bench, as built)"),
           ("official parameters", f"{m.params_official:,} (NATS-Bench, as built)"))
          if m.params_official is not None and m.flops_per_img_official is not None else ()),
        ("peak", f"{_flops_rate(m.peak_flops_per_s)} ({m.peak_source})"),
        ("utilization", _pct(m.utilization)),
        ("energy per image", energy),
        ("average power", _fmt(m.avg_power_w, ".1f", "W")),
        ("idle power", _fmt(m.idle_power_w, ".1f", "W")),
        ("SM clock", _fmt(m.sm_clock_mhz, ".0f", "MHz")),
        *((("GPU counters", _counters(m)),) if m.counters_kind not in (None, "unavailable") else ()),
        ("measurement cost", f"{m.measure_cost_s:.3f} s"),
    ]
    head = (f"{m.precision}, batch size {m.batch_size}, input "
            f"{'x'.join(str(s) for s in m.input_shape)}")
    width = max(len(k) for k, _ in rows)
    return "\n".join([head] + [f"  {k:<{width}}  {v}" for k, v in rows])


def _png_for(png: Path | None, precision: str, many: bool) -> Path | None:
    if png is None or not many:
        return png
    return png.with_name(f"{png.stem}_{precision}{png.suffix}")


def recorded_plan(meter: Any, arch: Arch, precisions: Sequence[str], batch_size: int | None, dataset: str, *,
                  skip_missing: bool, space: SpaceProtocol | None = None) -> list[tuple[str, int]]:
    """The (precision, batch size) pairs to replay from a recorded profile.

    Without `batch_size`, each precision takes the batch size(s) the profile recorded it at. With
    `skip_missing` (``--precision all``), settings the architecture's class lacks are left out with
    a note on stderr, unless none is left: then the first is kept, so that its replay names what
    is missing (a profile without a ``covers`` method is taken to cover every setting it holds).
    `space` defaults to the meter's own.
    """
    shape = shape_to_str((space if space is not None else meter.space).input_shape(dataset))
    plan: list[tuple[str, int]] = []
    for precision in precisions:
        recorded = sorted({b for p, b, s in meter.settings if p == precision and s == shape})
        plan += [(precision, b) for b in ([batch_size] if batch_size is not None else recorded or [DEFAULT_BATCH_SIZE])]
    covers = getattr(meter, "covers", None)
    if not skip_missing or covers is None:
        return plan
    kept = [(p, b) for p, b in plan if covers(arch, precision=p, batch_size=b, dataset=dataset)]
    for p, b in plan:
        if (p, b) not in kept:
            print(f"note: the profile has no {p} batch-{b} record of this architecture's class; skipped",
                  file=sys.stderr)
    return kept or plan[:1]


def _has_shipped_params(device_name: str) -> bool:
    try:
        params_for_device(device_name)
    except UsageError:
        return False
    return True


def nvml_device_named(name: str) -> Any:
    """An open NVML device of this machine whose name is `name` (read only), or ``None``: the
    generic DVFS model of a GPU without a shipped parameter set reads its facts there."""
    for index in range(device_count()):
        try:
            dev = open_device(index)
        except NvmlError:
            continue
        if dev.name == name:
            return dev
        dev.close()
    return None


def _reads_profile(hardware: str) -> bool:
    """Whether the registered meter `hardware` reads a profile file (``--profile``)."""
    return "path" in METERS.get(hardware).context


def meter_options(hardware: str, args: argparse.Namespace) -> dict[str, Any]:
    """The constructor options of the selected meter: ``--peak``, ``--energy-basis`` and
    ``--no-energy`` for a meter that takes the CUDA meter's options (`MeterKind.takes_cuda_options`),
    none for the others."""
    if not METERS.get(hardware).takes_cuda_options:
        return {}
    return {"peak": args.peak, "energy_basis": args.energy_basis, "measure_energy": not args.no_energy}


def run(args: argparse.Namespace) -> int:
    """Carry out a parsed command line; returns the exit status."""
    if args.batch_size is not None and args.batch_size < 1:
        raise UsageError(f"--batch-size must be a positive integer, got {args.batch_size}")
    if args.png is not None and not args.dvfs:
        raise UsageError("--png needs --dvfs")
    if args.png is not None:
        check_png_place(args.png)
    if args.max_slowdown is not None and not 0 < args.max_slowdown < 1:
        raise UsageError(f"--max-slowdown must be a fraction between 0 and 1, got {args.max_slowdown}")
    if args.profile is not None and args.hardware != AUTO and not _reads_profile(args.hardware):
        raise UsageError("--profile is for --hardware recorded")

    space = get_space(args.space)
    arch = space.parse(args.arch)
    hardware = resolve_hardware(args.hardware, announce=lambda line: print(line, file=sys.stderr),
                                space_name=space.name)
    kind = METERS.get(hardware)
    meter: Any = kind.create(path=args.profile, space=space, **meter_options(hardware, args))
    requested = args.precision or ["fp16"]
    every = "all" in requested
    if every:
        precisions = list(getattr(meter, "precisions", None) or kind.precisions or PRECISIONS)
    else:
        precisions = list(dict.fromkeys(requested))
    if isinstance(meter, RecordedProfile):
        plan = recorded_plan(meter, arch, precisions, args.batch_size, args.dataset, skip_missing=every,
                             space=space)
    else:
        plan = [(precision, args.batch_size or DEFAULT_BATCH_SIZE) for precision in precisions]
    measurements: list[Measurement] = []
    for precision, batch_size in plan:
        if isinstance(meter, ArchMeter):
            measurements.append(meter.measure_arch(arch, precision=precision, batch_size=batch_size,
                                                   dataset=args.dataset, space=space))
        else:
            measurements.append(measure_deployed(meter, space, arch, args.dataset, batch_size=batch_size,
                                                 precision=precision))
    curves: list[str | None] = [None] * len(measurements)
    if args.dvfs:
        device = getattr(meter, "nvml_device", None)
        extra = {} if args.max_slowdown is None else {"max_slowdown": args.max_slowdown}
        for i, m in enumerate(measurements):
            if device is None and not _has_shipped_params(m.device_name):
                device = nvml_device_named(m.device_name)
            curves[i] = show_curve(m, device=device,
                                   png_path=_png_for(args.png, m.precision, len(measurements) > 1),
                                   mode=args.dvfs_mode, network=str(arch), **extra)
    if args.json:
        out = {"space": space.name, "arch": str(arch), "dataset": args.dataset,
               "hardware": hardware,
               "measurements": [dict(m.to_dict(), **({"dvfs": c} if args.dvfs else {}))
                                for m, c in zip(measurements, curves)]}
        print(json.dumps(out, indent=1))
    else:
        print(f"{space.name} {arch} ({args.dataset})")
        for m, curve in zip(measurements, curves):
            print()
            print(format_measurement(m))
            if curve:
                print(curve)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m nasenergy.profile``."""
    args = build_parser().parse_args(argv)
    return run_main(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
