"""``python -m nasenergy.benchmark``: import and inspect the accuracy benchmarks.

Commands:

* ``import SOURCE``: read a NATS-Bench folder or file, a benchmark table, or a folder of tables
  once, and install it as one fast file in the cache folder (``--cache-dir``, else
  ``$NASENERGY_HOME``, else ``~/.cache/nasenergy``);
* ``info``: what is installed and where (space, datasets, splits, schedules, cells, source, size);
* ``query ARCH``: the search and report metrics of one architecture (string or index);
* ``schema``: the CSV schema of benchmark tables;
* ``build-embedded``: rebuild the benchmark tables embedded in the package
  (``nasenergy/data/benchmarks``, used when nothing is installed) from the shared reference data
  (``--shared-data``, else ``$NASENERGY_SHARED_DATA``).

Example::

    python -m nasenergy.benchmark import ../shared/data
    python -m nasenergy.benchmark info

Errors are one line on stderr (``error: ...``); the exit status is 2 for bad input, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from nasenergy import __version__
from nasenergy._cli import ARCH_HELP, OneLineParser, add_version, run_main
from nasenergy.errors import OutputError, UsageError, writing
from nasenergy.oracles import tables
from nasenergy.oracles.cache import cache_dir, cache_file, install, installed
from nasenergy.oracles.embedded import embedded_dir
from nasenergy.oracles.embedded_build import build_embedded
from nasenergy.oracles.errors import GET_A_BENCHMARK
from nasenergy.oracles.loader import load_oracle
from nasenergy.paths import shared_data_dir
from pathlib import Path
from search_spaces import Arch


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _progress(stream: TextIO) -> Any:
    """A progress callback: a rewritten line on a terminal, else a line every 10%."""
    started = time.perf_counter()
    tty = stream.isatty()
    shown = {"tenth": -1}

    def report(done: int, total: int) -> None:
        if total < 64:
            return
        tenth = 10 * done // total
        if not tty and tenth == shown["tenth"]:
            return
        shown["tenth"] = tenth
        elapsed = time.perf_counter() - started
        line = f"read {done}/{total} NATS-Bench records ({elapsed:.0f} s)"
        stream.write(f"\r{line}" if tty else f"{line}\n")
        if tty and done == total:
            stream.write("\n")
        stream.flush()

    return report


def check_cache_dir(folder: Path) -> None:
    """Make sure the benchmark can be installed in ``folder`` before any source is read: create it
    if missing; refuse a file in its place, or a folder that cannot be written.

    Raises:
        UsageError: a file stands where the folder should be.
        OutputError: the folder cannot be created or written.
    """
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--cache-dir {folder} is a file, not a folder")
    with writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {folder}: Permission denied")


def _cmd_import(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_cache_dir(cache_dir(args.cache_dir))
    started = time.perf_counter()
    result = install(args.source, space_name=args.space, directory=args.cache_dir,
                     workers=args.workers, progress=_progress(err), force=args.force, partial=args.partial)
    elapsed = time.perf_counter() - started
    data = result.data
    out.write(f"installed {data.space_name} benchmark from {data.provenance.get('source')}\n")
    out.write(f"  file: {result.path} ({_human_bytes(result.size_bytes)}), built in {elapsed:.1f} s\n")
    _write_summary(data.provenance, data.coverage(), out)
    return 0


def _write_summary(provenance: dict[str, Any], coverage: dict[str, Any], out: TextIO) -> None:
    if provenance.get("files"):
        out.write(f"  tables: {', '.join(provenance['files'])}\n")
    for name in provenance.get("skipped", []):
        out.write(f"  skipped: {name}\n")
    for file, columns in provenance.get("ignored_columns", {}).items():
        out.write(f"  ignored: {', '.join(columns)} in {file} (no seed column: runs unknown)\n")
    for conflict in provenance.get("conflicts", []):
        out.write(f"  disagreement: {conflict['values']} in {conflict['file']} for "
                  f"{conflict['archs']} archs (kept the earlier table)\n")
    model = provenance.get("cost_model")
    if model:
        out.write(f"  unrecorded costs: estimated from {model['n_fit_archs']} recorded archs "
                  f"(cross-validated median error {100 * model['cv_median_rel_err_train']:.1f}%)\n")
    out.write("  cells (dataset/split/epochs: archs with a value, with runs, with a recorded cost):\n")
    for key, cov in coverage.items():
        nats_dataset, split, schedule = key.split("/")
        out.write(f"    {nats_dataset:15s} {split:9s} {int(schedule):4d} ep: {cov['archs']:6d}"
                  f"  runs {cov['archs_with_runs']:6d} (max {cov['max_runs']})"
                  f"  cost {cov['archs_with_recorded_cost']:6d}\n")


def _cmd_info(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    found = installed(args.cache_dir)
    folder = cache_dir(args.cache_dir)
    if args.json:
        out.write(json.dumps({"cache_dir": str(folder), "benchmarks": [
            {"path": str(b.path), "size_bytes": b.size_bytes, "space": b.space_name,
             "provenance": b.provenance, "coverage": b.coverage} for b in found]}, indent=1) + "\n")
        return 0
    if not found:  # a fresh install: nothing is wrong, searches use the embedded tables
        out.write(f"no benchmark installed in {folder}: searches use the embedded benchmark tables "
                  f"({embedded_dir()}), which need nothing more; for another benchmark, {GET_A_BENCHMARK}\n")
        return 0
    for bench in found:
        prov = bench.provenance
        out.write(f"{bench.space_name}: {bench.path} ({_human_bytes(bench.size_bytes)})\n")
        out.write(f"  source: {prov.get('kind', '?')} at {prov.get('source', '?')}, "
                  f"imported {prov.get('created_utc', '?')}\n")
        datasets = sorted({key.split('/')[0] for key in bench.coverage})
        schedules = sorted({int(key.split('/')[2]) for key in bench.coverage})
        out.write(f"  NATS datasets: {', '.join(datasets)}; schedules (epochs): "
                  f"{', '.join(map(str, schedules))}\n")
        _write_summary(prov, bench.coverage, out)
    return 0


def _cmd_query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    given = [a for a in (args.arch, args.arch_flag) if a is not None]
    if len(given) != 1:
        raise UsageError("query: give one architecture, as ARCH or --arch ARCH (see --help)")
    arch: Arch = int(given[0]) if given[0].strip().isdigit() else given[0]
    benchmark = args.benchmark
    if benchmark is None and cache_file(args.space, args.cache_dir).is_file():
        benchmark = cache_file(args.space, args.cache_dir)  # the installed one, even when partial
    oracle = load_oracle(benchmark, args.space, seed=args.seed, estimate=args.estimate,
                         cache_directory=args.cache_dir)
    rows = [("search", oracle.evaluate(arch, args.dataset, seed=args.seed)),
            ("report", oracle.report(arch, args.dataset))]
    out.write(f"{oracle.describe()}\n")
    for label, ev in rows:
        out.write(f"{label}: {ev.accuracy_pct:.3f}% on {ev.dataset} {ev.split} after "
                  f"{int(ev.schedule)} epochs ({ev.trial}); cost {ev.cost_s:.1f} s "
                  f"({ev.cost_source}); arch {ev.arch_index} {ev.arch}\n")
    return 0


def _cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    out.write((tables.__doc__ or "").strip() + "\n")
    return 0


def _cmd_build_embedded(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:

    shared = Path(args.shared_data).expanduser() if args.shared_data else shared_data_dir()
    if not shared.is_dir():
        raise UsageError(f"--shared-data: {shared} is not a folder")
    target = Path(args.out).expanduser() if args.out else embedded_dir()
    def say(line: str) -> None:
        out.write(f"  {line}\n")

    built = build_embedded(shared, target, progress=say)
    total = sum(t.size_bytes for t in built)
    out.write(f"built {len(built)} embedded tables from {shared} in {target} ({_human_bytes(total)})\n")
    return 0

_IMPORT_DESCRIPTION = """\
Read a benchmark source once and install it as one fast local file (a .npz written without
pickles and read with allow_pickle=False). Tables are checked before anything is replaced:
accuracies outside [0, 100], accuracies written as fractions (every value at most 1 %) and tables
with no usable row are refused, naming the rows; a benchmark covering only part of the space is
refused unless --partial is given. The new file is written beside the installed one and renamed
into place; it never replaces an installed benchmark holding more architectures or metrics, or
other accuracies, unless --force is given.

Security: the official NATS-Bench files (NATS-tss-v1_0-3ffb9*, NATS-sss-v1_0-50262*, *.pickle.pbz2)
are Python pickles, and reading a pickle can run any code it carries. Import only files from a
trusted source (the NATS-Bench release, https://github.com/D-X-Y/NATS-Bench) and keep them where
others cannot write. The short hash in their names (3ffb9, 50262: five hex digits of an MD5, as
the nats_bench package names them) is not checked, as it could not tell a genuine file from a
forged one. Searches on the installed benchmark read only its .npz file, never a pickle.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m nasenergy.benchmark``."""
    parser = OneLineParser(
        prog="python -m nasenergy.benchmark",
        description="Import and inspect the accuracy benchmarks (NATS-Bench files or tables).",
    )
    add_version(parser, __version__)
    sub = parser.add_subparsers(dest="command", required=True)
    cache_help = "cache folder (default: $NASENERGY_HOME, else ~/.cache/nasenergy)"

    p = sub.add_parser("import", help="install a benchmark as one fast local file",
                       description=_IMPORT_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="NATS-Bench folder or file, a .csv(.gz) table, or a folder of tables")
    p.add_argument("--space", choices=("tss", "sss"), default=None,
                   help="search space (default: tss for NATS-Bench, inferred for tables)")
    p.add_argument("--cache-dir", default=None, help=cache_help)
    p.add_argument("--workers", type=int, default=None,
                   help="processes reading NATS-Bench files (default: all cores)")
    p.add_argument("--force", action="store_true",
                   help="replace the installed benchmark even when the new one holds fewer architectures "
                        "or metrics, or other accuracies (refused otherwise)")
    p.add_argument("--partial", action="store_true",
                   help="install a benchmark that covers only part of the space (refused otherwise; searches "
                        "without --benchmark then keep the complete embedded tables)")
    p.set_defaults(run=_cmd_import)

    p = sub.add_parser("info", help="what is installed and where")
    p.add_argument("--cache-dir", default=None, help=cache_help)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=_cmd_info)

    p = sub.add_parser("query", help="search and report metrics of one architecture")
    p.add_argument("arch", nargs="?", default=None, help=ARCH_HELP + "; or its official index")
    p.add_argument("--arch", dest="arch_flag", metavar="ARCH", default=None,
                   help="the same, as the other commands spell it")
    p.add_argument("--dataset", default="cifar10", help="cifar10, cifar100 or ImageNet16-120")
    p.add_argument("--space", choices=("tss", "sss"), default="tss")
    p.add_argument("--benchmark", default=None,
                   help="benchmark path (default: the installed benchmark, else the embedded tables)")
    p.add_argument("--seed", type=int, default=0, help="seed picking the training run")
    p.add_argument("--estimate", choices=("auto", "fit", "device", "none"), default="auto",
                   help="cost of cells without a recorded time: auto (default: fit where possible, else "
                        "none; never trains), fit (rate model), device (timed training steps here), none "
                        "(0 s, labelled unknown)")
    p.add_argument("--cache-dir", default=None, help=cache_help)
    p.set_defaults(run=_cmd_query)

    p = sub.add_parser("schema", help="print the CSV schema of benchmark tables")
    p.set_defaults(run=_cmd_schema)

    p = sub.add_parser("build-embedded",
                       help="rebuild the embedded benchmark tables from the shared reference data")
    p.add_argument("--shared-data", default=None,
                   help="shared reference data folder (default: $NASENERGY_SHARED_DATA, else ../shared/data)")
    p.add_argument("--out", default=None,
                   help="output folder (default: the package's nasenergy/data/benchmarks)")
    p.set_defaults(run=_cmd_build_embedded)
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Run the command line; return the exit status.

    Args:
        argv: arguments (default ``sys.argv[1:]``).
        out: stream for results (default stdout).
        err: stream for progress and errors (default stderr).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)

    def body() -> int:
        if args.command == "import" and args.workers is not None and args.workers < 1:
            raise UsageError("--workers must be at least 1")
        if getattr(args, "cache_dir", None) is not None and not args.cache_dir.strip():
            raise UsageError("--cache-dir: expected a folder, got '' (it would mean the current folder)")
        return args.run(args, out, err)

    return run_main(body, err=err)


if __name__ == "__main__":
    sys.exit(main())
