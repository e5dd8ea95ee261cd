"""``python -m nasenergy.train``: train one network of a NATS-Bench space on image data and print
what the training measured, as JSON (accuracy, seconds, images/s, memory, energy, settings)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from nasenergy import __version__
from nasenergy._cli import ARCH_HELP, OneLineParser, add_version, run_main
from nasenergy.train.data import load_data
from nasenergy.train.network import train_arch
from nasenergy.train.oracle import TrainingFailedError
from nasenergy.train.options import PRECISIONS, STEP_MODES, TrainOptions
from nasenergy.train.recipe import NATS_RECIPE, TrainRecipe
from search_spaces import get_space, space_names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m nasenergy.train``."""
    p = OneLineParser(prog="python -m nasenergy.train", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("--space", choices=space_names(), default="tss", help="search space (default %(default)s)")
    p.add_argument("--arch", required=True, help=ARCH_HELP)
    p.add_argument("--data", required=True, metavar="PATH",
                   help="digits, a CIFAR-10/100 folder (python format), a folder of class subfolders, or an .npz")
    p.add_argument("--epochs", type=int, default=NATS_RECIPE.epochs, help="default %(default)s")
    p.add_argument("--no-flip", action="store_true", help="no horizontal flips (for data such as digits)")
    p.add_argument("--val-fraction", type=float, default=0.2, metavar="SHARE",
                   help="validation share where the data has none of its own (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="initial weights and batches (default %(default)s)")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default %(default)s)")
    p.add_argument("--precision", choices=PRECISIONS, default="auto")
    p.add_argument("--step", choices=STEP_MODES, default="auto")
    p.add_argument("--checkpoint", type=Path, default=None, metavar="NPZ",
                   help="epoch checkpoint: a training given the same path continues after its last epoch")
    add_version(p, __version__)
    return p


def _run(args: argparse.Namespace) -> int:
    device = args.device
    if device == "auto":
        import torch  # lazy: imports torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    recipe = TrainRecipe(epochs=args.epochs, hflip=not args.no_flip)
    options = TrainOptions(device=device, precision=args.precision, step=args.step)
    space = get_space(args.space)
    arch = space.parse(args.arch)
    data = load_data(args.data, val_fraction=args.val_fraction)
    try:
        result = train_arch(space, arch, data, recipe=recipe, options=options, seed=args.seed,
                            checkpoint=args.checkpoint)
    except RuntimeError as exc:  # torch's out-of-memory and CUDA errors
        raise TrainingFailedError.of(exc) from None
    print(json.dumps({"arch": str(arch), "data": data.describe(), **result.as_dict()}, indent=2, default=str))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status (0 done, 2 bad input, 130 interrupted)."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    return run_main(lambda: _run(args))
