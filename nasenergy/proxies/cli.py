"""``python -m nasenergy.proxies``: every zero-cost proxy of one architecture, with its cost.

Example::

    python -m nasenergy.proxies --space tss --arch '|nor_conv_3x3~0|+|...|' --dataset cifar10 --json

computes each proxy on the architecture's deployed network (``--device cpu|cuda``; costs are timed
after a warm-up on a tiny network), or reads them from the recorded table (``--recorded``). Bad input exits with status 2 and one ``error:`` line.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence

from nasenergy import __version__
from nasenergy._cli import ARCH_HELP, OneLineParser, add_version, dataset_arg, run_main
from nasenergy.errors import UsageError
from nasenergy.proxies.compute import ProxyReport, compute_arch_proxies, compute_proxies, resolve_device
from nasenergy.proxies.data import DATA_CHOICES, DEFAULT_BATCH_SIZE, DEFAULT_DATA
from nasenergy.proxies.registry import PROXIES, proxy_names
from nasenergy.proxies.table import read_proxy_table
from search_spaces import DATASETS, SPACE_NAMES, get_space

__all__ = ["build_parser", "main"]


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in PROXIES]  # a plugin's proxy is loaded when named
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown proxy {', '.join(unknown) or text!r}; "
                                         f"choose from {', '.join(proxy_names())}")
    return names


SEED_LIMIT = 2**32
"""Seeds are 32-bit: the batch's NumPy generator takes 0 to 2^32 - 1."""
MAX_BATCH_SIZE = 4096
"""The largest ``--batch-size``: 4096 ImageNet16-120 images already take a few GiB of activations."""


def _int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m nasenergy.proxies``."""
    p = OneLineParser(prog="python -m nasenergy.proxies",
                      description="Zero-cost proxies (synflow, jacov, NASWOT, snip, grad_norm, FLOPs, params) "
                                  "of one architecture's deployed network, each with its cost in seconds.")
    add_version(p, __version__)
    p.add_argument("--space", default="tss", choices=SPACE_NAMES, help="search space (default tss)")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    p.add_argument("--dataset", type=dataset_arg, default="cifar10", choices=DATASETS,
                   help="sets input shape and classes (any spelling: cifar-10, imagenet16, ...)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--proxies", type=_names, default=None, help="comma-separated subset (default: all)")
    p.add_argument("--batch-size", type=_int_in(2, MAX_BATCH_SIZE), default=DEFAULT_BATCH_SIZE,
                   help=f"images of the data-dependent proxies, 2 to {MAX_BATCH_SIZE} (default {DEFAULT_BATCH_SIZE})")
    p.add_argument("--data", default=DEFAULT_DATA, choices=DATA_CHOICES, help="the input batch (default gaussian)")
    p.add_argument("--seed", type=_int_in(0, SEED_LIMIT - 1), default=0,
                   help="seed of the batch and labels, 0 to 2^32 - 1 (default 0)")
    p.add_argument("--init-seed", type=_int_in(0, SEED_LIMIT - 1), default=0,
                   help="seed of the network's weights, 0 to 2^32 - 1 (default 0)")
    p.add_argument("--recorded", action="store_true", help="read the recorded table instead of computing")
    p.add_argument("--table", default=None, help="recorded table CSV (default: the shipped one)")
    p.add_argument("--no-warm-up", action="store_true",
                   help="skip the warm-up on a tiny network (the first proxy then pays torch's first-use costs)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _text(report: ProxyReport) -> str:
    lines = [f"{report.network} on {report.dataset} ({'x'.join(map(str, report.input_shape))}, "
             f"{report.num_classes} classes)",
             f"{'proxy':<10} {'score':>14} {'unit':<9} {'cost_s':>8}  source    batch  note"]
    for r in report:
        score = f"{r.score:.6g}" if math.isfinite(r.score) else str(r.score)
        lines.append(f"{r.name:<10} {score:>14} {r.unit:<9} {r.cost_s:>8.3f}  {r.source:<9} "
                     f"{r.batch_size:>5}  {r.data}{'; ' + r.reason if r.reason else ''}")
    return "\n".join(lines)


def warm_up(device: str) -> None:
    """Run every proxy once on a tiny network, so that the costs reported next are steady-state (the
    first use of torch's autograd, flop counter and kernels in a process costs seconds)."""
    from torch import nn  # lazy: torch

    tiny = nn.Sequential(nn.Conv2d(3, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(2, 2))
    compute_proxies(tiny, (3, 4, 4), 2, device=device, batch_size=2)


def _run(args: argparse.Namespace) -> int:
    space = get_space(args.space)
    arch = space.parse(args.arch)
    if args.batch_size < 2:
        raise UsageError(f"--batch-size must be at least 2, got {args.batch_size}")
    if args.recorded:
        report = read_proxy_table(space, args.table).report(arch, args.dataset)
        if args.proxies:
            report = ProxyReport(tuple(report[n] for n in args.proxies if n in report.names()), report.input_shape,
                                 report.num_classes, report.network, report.dataset, report.init_seed)
    else:
        if not args.no_warm_up:
            warm_up(resolve_device(args.device))
        report = compute_arch_proxies(space, arch, args.dataset, names=args.proxies, seed=args.seed,
                                      init_seed=args.init_seed, device=args.device, batch_size=args.batch_size,
                                      data=args.data)
    print(json.dumps(report.to_dict(), indent=2) if args.json else _text(report))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status."""
    args = build_parser().parse_args(None if argv is None else list(argv))
    return run_main(lambda: _run(args))
