"""``nasenergy``: one command for every tool, ``nasenergy <command> [flags]``.

Each command is the module a user can also run as ``python -m nasenergy.<module>``, with the same
flags and ``--help``; ``nasenergy --version`` prints the version.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from nasenergy import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "search": ("nasenergy.search.command.cli", "search the NATS-Bench spaces (accuracy, throughput, energy)"),
    "plot": ("nasenergy.plot", "draw a run's figures, or compare several runs"),
    "profile": ("nasenergy.profile", "measure one network: throughput, energy and its DVFS curve"),
    "benchmark": ("nasenergy.benchmark", "install, inspect and query the accuracy benchmarks"),
    "proxies": ("nasenergy.proxies.cli", "zero-cost proxies of a network or a table of them"),
    "train": ("nasenergy.train.cli", "train one network on your data and print what it cost"),
}
"""Subcommand -> (the module whose ``main(argv)`` runs it, one line of help)."""


def usage() -> str:
    """The top-level help: the commands and their one-line descriptions."""
    width = max(map(len, COMMANDS))
    lines = [f"usage: nasenergy <command> [flags]   (nasenergy <command> --help for its flags)", "",
             "Energy-aware neural architecture search.", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "  --version   print the version and exit", "  -h, --help  show this help and exit"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``nasenergy <command> ...``; returns the command's exit status (2 for an unknown one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    if args[0] == "--version":
        print(f"nasenergy {__version__}")
        return 0
    entry = COMMANDS.get(args[0])
    if entry is None:
        print(f"error: unknown command {args[0]!r}; choose one of {', '.join(COMMANDS)} (see nasenergy --help)",
              file=sys.stderr)
        return 2
    module = importlib.import_module(entry[0])
    sys.argv[0] = f"nasenergy {args[0]}"
    return int(module.main(args[1:]) or 0)
