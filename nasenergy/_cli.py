"""What every ``python -m nasenergy.*`` command shares: one-line errors and exit statuses.

* `OneLineParser`: an `argparse.ArgumentParser` whose errors are one line on stderr,
  ``error: <message> (see --help)``, with exit status 2 (its sub-command parsers inherit it).
* `run_main`: calls a command's body and turns a `NasEnergyError` into ``error: <message>`` and
  the error's exit status, Ctrl-C into ``error: interrupted`` and status 130, and a reader of
  the output that went away (``| head``) into a quiet stop with status 141, as a shell tool's.
* `ARCH_HELP`: the help of every architecture argument, with an example string of each space.
* `add_version`: the ``--version`` flag every command has (``nasenergy X.Y.Z``, exit 0).
* `dataset_arg`: the ``type`` of every ``--dataset`` option: any spelling of a dataset becomes its
  one name (`search_spaces.canonical_dataset`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import NoReturn, TextIO

from nasenergy.errors import NasEnergyError
from search_spaces import canonical_dataset

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell tool returns when its output's reader closes the pipe."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``error: <message> (see --help)``, exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {message} (see --help)\n")


ARCH_EXAMPLES = {
    "tss": "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|",
    "sss": "64:32:48:64:16",
}
"""One architecture string of each NATS-Bench space, as the commands' ``--help`` shows it."""

ARCH_HELP = (f"architecture string of the space, e.g. for tss '{ARCH_EXAMPLES['tss']}' (three nodes "
             f"joined by '+', each edge 'op~input'), for sss '{ARCH_EXAMPLES['sss']}' (the channels "
             "of its five layers)")
"""The help of every command's architecture argument."""


def add_version(parser: argparse.ArgumentParser, version: str) -> None:
    """Give ``parser`` a ``--version`` flag that prints ``nasenergy <version>`` and exits 0."""
    parser.add_argument("--version", action="version", version=f"nasenergy {version}",
                        help="print the version of nasenergy and exit")


def dataset_arg(text: str) -> str:
    """An argparse ``type`` for ``--dataset``: the name in `search_spaces.DATASETS` of any spelling
    `search_spaces.canonical_dataset` takes (``cifar-10`` -> ``cifar10``); an unknown one is a
    one-line parser error naming the datasets and aliases."""
    try:
        return canonical_dataset(text)
    except NasEnergyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_main(
    body: Callable[[], int | None], *, err: TextIO | None = None, mask: Callable[[str], str] | None = None
) -> int:
    """Run a command's body and return its exit status.

    Args:
        body: the command; returns its exit status (``None`` counts as 0).
        err: where the ``error:`` line goes (default: stderr at the time of the call).
        mask: applied to the error message before printing (to hide secrets).

    Returns:
        ``body()``'s status; a `NasEnergyError`'s ``exit_code`` after printing
        ``error: <message>``; 130 after a Ctrl-C; 141, silently, when standard output's reader
        has gone (its later writes go nowhere, so the interpreter's last flush cannot fail either).
    """
    stream = err if err is not None else sys.stderr
    try:
        return int(body() or 0)
    except NasEnergyError as exc:
        print(f"error: {mask(str(exc)) if mask else exc}", file=stream)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=stream)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def _silence_stdout() -> None:
    """Point standard output at the null device (after its reader closed the pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a file descriptor (e.g. captured in a test)
        pass
