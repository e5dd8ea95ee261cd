"""``python -m nasenergy.search``: the command line of the search."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from nasenergy import __version__
from nasenergy._cli import EXIT_INTERRUPTED, OneLineParser, add_version, dataset_arg, run_main
from nasenergy.filter.registry import FILTERS
from nasenergy.hardware.boards import BOARD_POLICIES
from nasenergy.hardware.meter_settings import METER_SETTINGS
from nasenergy.hardware.registry import AUTO, METERS
from nasenergy.measurement import PRECISIONS
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.run.files import load_run
from nasenergy.run.front_table import front_table
from nasenergy.search.command.components import ComponentsFactory, build_components
from nasenergy.search.command.config_defaults import SPACE_TARGET_RECALL
from nasenergy.search.command.config import (
    DEFAULT_PATIENCE,
    ESTIMATES,
    MAX_CANDIDATES_PER_EVALUATION,
    MAX_SCREEN,
    SAMPLERS,
    SearchConfig,
    parse_objectives,
)
from nasenergy.search.command.dashboard import dashboard_hint
from nasenergy.search.command.dvfs_modes import DVFS_MODES
from nasenergy.search.command.env_info import shell_command
from nasenergy.search.command.exit_codes import EXIT_STATUS_HELP, exit_code_for
from nasenergy.search.command.filter_features import parse_filter_features
from nasenergy.search.command.training_setup import training_setup
from nasenergy.search.command.machine_defaults import CPU_BATCH_SIZE, CPU_PRECISION, fit_to_meter, resolved_meter_kind
from nasenergy.search.loop.filter_yield import YIELD_AFTER
from nasenergy.search.loop.redirect import REDIRECT_AFTER, REDIRECT_BATCH
from nasenergy.search.storage.credentials import STORAGE_ENV, has_password, mask_argv, mask_text, password_of
from search_spaces import dataset_names, space_names

_DEFAULTS = SearchConfig()

_DESCRIPTION = """\
Energy-aware architecture search over a NATS-Bench space with Optuna (ask-and-tell), on up to three
objectives: accuracy (up), throughput (up) and energy per image (down), the last two at each
network's energy-optimal GPU clock. Each candidate is suggested, canonicalized (an equal network is
answered from its earlier result), measured cheaply, passed through the utilization filter, and only
then fully evaluated for accuracy (with --screen K, only the most promising of every K measured
candidates is). --budget counts the full evaluations, exactly, over all workers.

Running the same command again resumes the study. The run folder receives candidates.csv,
pareto_front.csv, report.md, env.json, config.json and PNG plots.
"""

_EPILOG = """\
examples:
  python -m nasenergy.search --budget 200
  python -m nasenergy.search --budget 50 --objectives accuracy,energy --filter none --out runs/try
  python -m nasenergy.search --budget 200 --screen 4
  python -m nasenergy.search --budget 500 --storage postgresql://user@db-host:5432/nas --study-name big
      (start the same command on every machine: the workers share the study and its budget)
  NASENERGY_STORAGE=postgresql://user:PASSWORD@db-host:5432/nas python -m nasenergy.search --budget 500
      (a URL with a password is best given in $NASENERGY_STORAGE: it then shows in neither the shell
      history nor the process list; a password is never written or printed, and the run folder is
      made readable by its owner only)

recorded profiles shipped (replayed by --hardware recorded, and by auto without a GPU):
  tss  NVIDIA H200, deployed networks: fp16 batch 1024 every cell; fp32 batch 256 every cell
       (ImageNet16-120's 3x16x16 input: 2,586 of 6,040 deployed networks so far, both settings)
  sss  NVIDIA H200, deployed networks: fp16 batch 1024 4,096 of 32,768 configurations (a seeded
       uniform sample; a search keeps to them; ImageNet16-120's 3x16x16 input: the first 929 of
       them); other settings are measured on a GPU or this CPU
  others, e.g. the earlier TSS profile of the networks as built (nasenergy/data/h200_tss_profile.csv.gz)
  or one of your own GPU: --profile PATH

""" + EXIT_STATUS_HELP


def _int_at_least(minimum: int, described: str) -> Callable[[str], int]:
    """An argparse type: an integer of at least `minimum`, else ``expected <described>``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {described}, got {text!r}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "0 or a positive integer")


def _percent(text: str) -> float:
    """An accuracy in percent, 0 to below 100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an accuracy in percent, got {text!r}") from None
    if not 0.0 <= value < 100.0:
        raise argparse.ArgumentTypeError(f"expected an accuracy in percent from 0 to below 100, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m nasenergy.search``."""
    p = OneLineParser(
        prog="python -m nasenergy.search",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_version(p, __version__)
    what = p.add_argument_group("what to search")
    what.add_argument("--budget", type=_positive_int, default=_DEFAULTS.budget,
                      help="full accuracy evaluations of the whole study, over all workers (default %(default)s)")
    what.add_argument("--space", choices=space_names(), default=_DEFAULTS.space,
                      help="NATS-Bench topology (tss) or size (sss) space (default %(default)s)")
    what.add_argument("--dataset", type=dataset_arg, choices=dataset_names(), default=_DEFAULTS.dataset,
                      help="default %(default)s (any spelling: cifar-10, imagenet16, ...)")
    what.add_argument("--objectives", type=str, default=None,
                      help=f"comma-separated subset of {','.join(OBJECTIVE_NAMES)} (default {','.join(_DEFAULTS.objectives)}; "
                           "accuracy,throughput on the CPU meter, which has no energy counter)")
    how = p.add_argument_group("how candidates are scored")
    how.add_argument("--benchmark", metavar="PATH", default=None,
                     help="accuracy benchmark file or folder (default: the cache installed by "
                          "'python -m nasenergy.benchmark import' when it covers the whole space, else the "
                          "benchmark tables embedded in the package; NATS-Bench pickles are read only when named here)")
    how.add_argument("--oracle", choices=("benchmark", "train"), default=_DEFAULTS.oracle,
                     help="benchmark: accuracies from NATS-Bench's tables; train: train each evaluated network on "
                          "--data (default %(default)s)")
    how.add_argument("--data", metavar="PATH", default=None,
                     help="with --oracle train: digits (scikit-learn's, built in), a CIFAR-10/100 folder (python "
                          "format), a folder of class subfolders of images, or an .npz with x and y")
    how.add_argument("--epochs", type=_positive_int, default=_DEFAULTS.epochs,
                     help="with --oracle train: epochs of NATS-Bench's recipe per training (default %(default)s)")
    how.add_argument("--val-fraction", type=float, default=_DEFAULTS.val_fraction, metavar="SHARE",
                     help="with --oracle train: share of the training images held out for validation where the data "
                          "has no validation split (default %(default)s, stratified, split seed 0)")
    how.add_argument("--search-metric", metavar="SPLIT/EPOCHS", default=_DEFAULTS.search_metric,
                     help="the benchmark accuracy searched on: split (x-valid, x-test, ori-test, valid, test) and "
                          "training epochs, e.g. test/200 (default %(default)s, NATS-Bench's search metric)")
    how.add_argument("--estimate", choices=ESTIMATES, default=_DEFAULTS.estimate,
                     help="training cost of benchmark cells without a recorded time: fit (rate model "
                          "fitted to the recorded times), device (timed training steps on this machine: minutes per "
                          "network on a CPU), none (0 s, labelled unknown), auto (fit where the benchmark records "
                          "enough times, else none; never trains) (default %(default)s)")
    how.add_argument("--hardware", choices=METERS.choices(AUTO), default=_DEFAULTS.hardware,
                     help="meter for the cheap measurement: auto picks cuda on a GPU, else the recorded "
                          "H200 profile (default %(default)s)")
    how.add_argument("--meter-setting", choices=tuple(METER_SETTINGS), default=_DEFAULTS.meter_setting,
                     help="how much a live GPU measurement does per candidate: fast (default: one energy "
                          "window of at least 0.28 s whose own passes give the throughput) or full (5 timed "
                          "throughput repeats, then 3 energy windows; the earlier default, about twice the cost)")
    how.add_argument("--profile", metavar="PATH", default=None,
                     help="replay this recorded profile instead of the shipped one (implies --hardware "
                          "recorded): e.g. nasenergy/data/h200_tss_deployed_profile.csv.gz, or a profile of "
                          "your own GPU recorded with experiments/profile_tss_space.py")
    how.add_argument("--precision", choices=PRECISIONS, default=None,
                     help=f"default {_DEFAULTS.precision}; {CPU_PRECISION} on the CPU meter")
    how.add_argument("--batch-size", type=_positive_int, default=None,
                     help=f"images per forward pass when measuring (default {_DEFAULTS.batch_size}; {CPU_BATCH_SIZE} on "
                          "the CPU meter)")
    how.add_argument("--filter", choices=FILTERS.choices(), default=_DEFAULTS.filter,
                     help="utilization filter in front of the full evaluation (default %(default)s)")
    how.add_argument("--target-recall", type=float, default=None,
                     help="share of would-be front members the filter should let through, in (0, 1] "
                          "(default " + ", ".join(f"{FILTERS.get(k).default_target_recall:g} for {k}" for k in FILTERS.names()
                                                  if "target_recall" in FILTERS.get(k).search_options)
                          + "; " + ", ".join(f"{r:g} for dominance with --space {sp}" for sp, r in SPACE_TARGET_RECALL.items())
                          + ")")
    how.add_argument("--filter-features", metavar="GROUPS", default=",".join(_DEFAULTS.filter_features),
                     help="what the accuracy model of --filter dominance and of --screen reads, a comma list of "
                          "measured (utilization, throughput, energy of the cheap measurement), size (FLOPs, "
                          "params: free), structure (the space's structural features), proxies (zero-cost proxies "
                          "of the recorded table; networks without a row are imputed), proxies-live (computed "
                          "for each network) (default %(default)s)")
    how.add_argument("--dvfs", choices=DVFS_MODES.choices(), default=_DEFAULTS.dvfs,
                     help="source of each network's energy-optimal clock: modelled (the DVFS model of the "
                          "measured GPU: its calibrated parameters, else generic ones from what NVML reports), "
                          "measured (locks clocks; needs --allow-clock-control and a GPU), "
                          "recorded (needs recorded clock sweeps), none (score at the default clock), auto "
                          "(modelled where parameters or NVML facts exist, else none, and says which) "
                          "(default %(default)s)")
    how.add_argument("--allow-clock-control", action="store_true",
                     help="allow changing the GPU's clocks (restored afterwards); needed by --dvfs measured")
    run = p.add_argument_group("how the search runs")
    run.add_argument("--sampler", choices=SAMPLERS, default=_DEFAULTS.sampler,
                     help="Optuna sampler (default %(default)s, Optuna's multi-objective default)")
    run.add_argument("--seed", type=int, default=_DEFAULTS.seed,
                     help="base seed; the k-th worker to join the study samples with seed+k (default %(default)s)")
    run.add_argument("--storage", metavar="URL", default=None,
                     help="database shared by workers on several machines, e.g. "
                          f"postgresql://user@host:5432/db (default: ${STORAGE_ENV} if set, else a journal file "
                          "in the run folder); its password is masked in every file and message")
    run.add_argument("--study-name", default=None,
                     help="Optuna study name (default: the settings that define the study, e.g. "
                          "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0)")
    run.add_argument("--out", metavar="DIR", default=None, help="run folder (default runs/<study-name>)")
    run.add_argument("--workers", type=_positive_int, default=_DEFAULTS.workers,
                     help="worker processes this command starts, one GPU each where GPUs are visible "
                          "(default %(default)s)")
    run.add_argument("--max-candidates", type=_positive_int, default=None,
                     help=f"safety cap on the study's candidates, evaluated or not (default "
                          f"{MAX_CANDIDATES_PER_EVALUATION} x budget, divided by the share of cells a partial "
                          "recorded profile covers)")
    run.add_argument("--screen", type=_positive_int, default=_DEFAULTS.screen, metavar="K",
                     help="screening: measure at least K new candidates per full evaluation (measurements are "
                          "cheap) and evaluate, of those the filter admitted, the one of largest expected "
                          "hypervolume improvement, its accuracy predicted from this run's own evaluations; a "
                          "few of the next best that still promise an improvement wait for the next screening, the "
                          "other admitted ones are recorded as filtered, 'screened out' (default %(default)s: "
                          f"evaluate every admitted candidate; at most {MAX_SCREEN})")
    run.add_argument("--min-accuracy", type=_percent, default=None, metavar="P",
                     help="the accuracy (%%) you need: networks below it are infeasible (the sampler learns this "
                          "through Optuna's constraints), never on the front or in the plots, and P is the floor of "
                          "the quality measure (default: no constraint; the quality floor is the median accuracy of "
                          "the space's deployed networks where the benchmark knows it)")
    run.add_argument("--patience", type=_non_negative_int, default=_DEFAULTS.patience, metavar="N",
                     help="stall guard: stop when the study's last N candidates (duplicates, networks outside "
                          "a recorded profile, filtered ones) brought no new full evaluation; 0 turns it off "
                          f"(default {DEFAULT_PATIENCE}, four times the longest gap between two evaluations seen in "
                          "searches that filled their budget; a sampler stuck on networks it has seen or the filter "
                          "rejects would otherwise crawl on to the candidate cap)")
    run.add_argument("--budget-rescue", choices=("on", "off"), default="on" if _DEFAULTS.budget_rescue else "off",
                     help="when the stall guard's condition first holds (or a partial profile has no unseen network "
                          f"left), switch redirection (after {REDIRECT_AFTER}) and the filter's yield (after "
                          f"{YIELD_AFTER}) on instead of stopping, for every worker of the study; a second stall "
                          "stops the run (default %(default)s)")
    run.add_argument("--redirect-after", type=_non_negative_int, default=_DEFAULTS.redirect_after, metavar="N",
                     help="after N proposals of networks the study has seen in a row, a worker enqueues "
                          f"{REDIRECT_BATCH} unseen networks near the last one, from the start; 0 turns it off, "
                          f"in a budget rescue too (default: off until a budget rescue, then {REDIRECT_AFTER})")
    run.add_argument("--filter-yield-after", type=_non_negative_int, default=_DEFAULTS.filter_yield_after,
                     metavar="N",
                     help="after N filter rejections in a row, the filter yields to the next candidate among the "
                          "most promising --filter-yield-top of them by its optimistic accuracy, after 3N to the "
                          "next one, from the start; 0: the filter never yields, in a budget rescue neither "
                          f"(default: off until a budget rescue, then {YIELD_AFTER})")
    run.add_argument("--filter-yield-top", type=float, default=_DEFAULTS.filter_yield_top, metavar="SHARE",
                     help="the share of the rejected candidates a yielded one must rank among, in (0, 1] "
                          "(default %(default)s)")
    run.add_argument("--lease-s", type=float, default=_DEFAULTS.lease_s,
                     help="seconds without a heartbeat after which a worker counts as dead and another "
                          "worker takes over its claimed evaluation (default %(default)s)")
    run.add_argument("--db-retry-s", type=float, default=_DEFAULTS.db_retry_s, metavar="S",
                     help="how long a worker rides out a database outage (refused or dropped connections, a "
                          "restart, a failover), retrying with backoff, before it gives up with exit status 6 "
                          "(default %(default)s)")
    run.add_argument("--boards", choices=BOARD_POLICIES, default=_DEFAULTS.boards,
                     help="with workers on several GPUs: the reference networks are measured on each GPU first; "
                          "boards whose throughput or energy ratio to the first GPU is off by more than "
                          "--board-tolerance-pct get a one-line warning, then normalise every figure to the first "
                          "GPU (default), refuse the run, or ignore")
    run.add_argument("--board-tolerance-pct", type=float, default=_DEFAULTS.board_tolerance_pct, metavar="PCT",
                     help="the boards' tolerance (default %(default)s: H200 boards were 0-6.7 %% apart in energy "
                          "per image, one board's re-measurements 1-2 %%)")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    return p


def config_from_args(args: argparse.Namespace, notes: list[str] | None = None) -> SearchConfig:
    """The `SearchConfig` of parsed arguments (validated), with the precision, batch size and
    objectives not given fitted to the meter (`nasenergy.search.command.machine_defaults`).

    Args:
        args: the parsed arguments.
        notes: receives one line per setting fitted to the meter (to print before the search).

    Raises:
        UsageError: a bad value, or one the meter cannot measure.
    """
    objectives = None if args.objectives is None else parse_objectives(args.objectives)
    hardware = "recorded" if args.profile is not None and args.hardware == "auto" else args.hardware
    dataset, data = args.dataset, args.data  # a --data without --oracle train is refused by validate()
    if args.oracle == "train" and args.data:
        dataset, data, hardware = training_setup(args.data, args.val_fraction, hardware,
                                                 dataset_given=args.dataset != _DEFAULTS.dataset)
    fitted = fit_to_meter(resolved_meter_kind(hardware, args.space), precision=args.precision,
                          batch_size=args.batch_size, objectives=objectives)
    if notes is not None:
        notes.extend(fitted.notes)
    return SearchConfig(
        budget=args.budget,
        space=args.space,
        dataset=dataset,
        objectives=fitted.objectives,
        benchmark=args.benchmark,
        search_metric=args.search_metric,
        estimate=args.estimate,
        hardware=hardware,
        profile=args.profile,
        precision=fitted.precision,
        batch_size=fitted.batch_size,
        filter=args.filter,
        target_recall=args.target_recall,
        filter_features=parse_filter_features(args.filter_features),
        dvfs=args.dvfs,
        allow_clock_control=args.allow_clock_control,
        sampler=args.sampler,
        seed=args.seed,
        storage=args.storage if args.storage is not None else (os.environ.get(STORAGE_ENV) or None),
        study_name=args.study_name,
        out=args.out,
        workers=args.workers,
        max_candidates=args.max_candidates,
        screen=args.screen,
        patience=args.patience,
        lease_s=args.lease_s,
        db_retry_s=args.db_retry_s,
        quiet=args.quiet,
        min_accuracy=args.min_accuracy,
        boards=args.boards,
        board_tolerance_pct=args.board_tolerance_pct,
        meter_setting=args.meter_setting,
        filter_yield_after=args.filter_yield_after,
        filter_yield_top=args.filter_yield_top,
        redirect_after=args.redirect_after,
        budget_rescue=args.budget_rescue == "on",
        oracle=args.oracle,
        data=data,
        epochs=args.epochs,
        val_fraction=args.val_fraction,
    ).validate()


def main(argv: Sequence[str] | None = None, *, components_factory: ComponentsFactory = build_components) -> int:
    """Run the command; returns its exit status (`nasenergy.search.command.exit_codes`: 0 done, 1 failure,
    2 bad input, 3 candidate cap, 4 stalled, 5 exhausted, 6 database unreachable, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    secrets = [password_of(args.storage), password_of(os.environ.get(STORAGE_ENV))]
    resume_command = mask_text(shell_command(mask_argv(argv)), secrets=secrets)
    if has_password(args.storage):
        resume_command += f"  # put the password back, or give the URL in ${STORAGE_ENV}"
    return run_main(lambda: _run(args, resume_command, components_factory),
                    mask=lambda text: mask_text(text, secrets=secrets))


def _run(args: argparse.Namespace, resume_command: str, components_factory: ComponentsFactory) -> int:
    import optuna

    from nasenergy.search.workers.runner import run_search  # lazy: the runner imports sqlalchemy and optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # the progress bar and report say it all
    notes: list[str] = []
    config = config_from_args(args, notes)
    for note in notes:
        print(note, file=sys.stderr)
    try:
        summary = run_search(config, components_factory=components_factory, resume_command=resume_command)
    except KeyboardInterrupt:  # a Ctrl-C outside the workers' handling (start-up, writing files)
        print(f"interrupted; resume with:\n  {resume_command}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if summary.stop_reason == "interrupted":
        print(
            f"interrupted: {summary.evaluated} of {summary.budget} full evaluations done; files in "
            f"{summary.out_dir}; resume with:\n  {summary.resume_command}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if summary.stop_reason in ("worker_failed", "database"):
        what = ("a worker gave up on the unreachable database" if summary.stop_reason == "database"
                else "a worker process failed")
        print(f"error: {what}; {summary.evaluated} of {summary.budget} evaluations done; "
              f"resume with: {summary.resume_command}", file=sys.stderr)
        return exit_code_for(summary.stop_reason)
    counts = ", ".join(f"{n} {outcome}" for outcome, n in sorted(summary.outcomes.items()) if n)
    if summary.stop_reason == "max_candidates":
        print(
            f"stopped: at the candidate cap after {summary.candidates} candidates with {summary.evaluated} "
            f"of {summary.budget} full evaluations ({counts}); raise --max-candidates or lower --budget",
            file=sys.stderr,
        )
    if summary.stop_reason == "stalled":
        print(
            f"stopped: stalled: the last {config.patience} candidates brought no new full evaluation; stopped after "
            f"{summary.candidates} candidates with {summary.evaluated} of {summary.budget} full evaluations ({counts}); "
            f"since the last evaluation: {summary.stall_cause}; or raise --patience (0 turns the guard off)",
            file=sys.stderr,
        )
    if summary.stop_reason == "exhausted":
        print(
            f"stopped: every network the recorded profile holds has been seen, and only {summary.evaluated} of "
            f"{summary.budget} full evaluations were possible ({counts}: the filter skipped the rest); lower "
            "--budget, loosen the filter (--target-recall, --filter none) or measure on a GPU (--hardware cuda)",
            file=sys.stderr,
        )
    if not config.quiet:
        print(
            f"{summary.study_name}: {summary.evaluated}/{summary.budget} full evaluations over "
            f"{summary.candidates} candidates; report: {summary.out_dir / 'report.md'}\n"
            f"browse the study: {dashboard_hint(summary.dashboard_command)}"
        )
        if summary.rescue is not None:
            print(f"budget rescue: began after evaluation {summary.rescue['evaluations']} at candidate "
                  f"{summary.rescue['candidates']}")
        _print_front(summary.out_dir)
    return exit_code_for(summary.stop_reason)


def _print_front(out_dir: Path) -> None:
    """The run's Pareto front as a short table (the end of the terminal output)."""
    record = load_run(out_dir)
    lines = front_table(record.front, record.objectives)
    if lines:
        print(f"Pareto front ({len(record.front)} of {len(record.evaluated)} evaluated networks):")
        print("\n".join(f"  {line}" for line in lines))
