"""`run_search`: one command's share of a study, from start-up repairs to the files it leaves.

Start-up: take the run folder's lock; open the storage and the claims; create or load the study
and check it against the settings; with the local journal storage (the folder held exclusively)
end every earlier worker's lease and close its unfinished trials, so a resume after ``kill -9``
adopts the orphaned claims at once. Then run the workers: in this process (``--workers 1``) or as
child processes (one GPU each where GPUs are visible). Finally rebuild the run's files from the
study. Ctrl-C stops every worker after its current candidate (a second Ctrl-C abandons it and
returns its budget slot); the files are still written and the command to resume is printed.

Every database call rides out outages of up to ``--db-retry-s`` seconds (`DbRetry`); a worker
that gives up hands its claims over at once (best effort) and exits with status 6. At the end the
trials no live worker will finish are closed, so a finished study shows none running. The
outcome decides the status: a study whose budget is spent ends ``budget`` even when one of
several worker processes died.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Iterator

import sqlalchemy as sa

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.registry import AUTO, METERS
from nasenergy.run_plots import draw_run
from nasenergy.report import render_report
from nasenergy.search import run_files
from nasenergy.search import outcomes as oc
from nasenergy.search import trial_record as tr
from nasenergy.search.board_step import BOARDS_ATTR, boards_of_run, calibrate_run, normalising
from nasenergy.search.claims import ClaimStore, Heartbeat
from nasenergy.run_quality import declared_floor
from nasenergy.search.components import Components, ComponentsFactory, build_components, check_budget
from nasenergy.search.config import SearchConfig, check_run_folder
from nasenergy.search.coverage import candidate_cap
from nasenergy.search.credentials import has_password, make_private, mask_argv, mask_text, password_of
from nasenergy.search.db_retry import DbRetry
from nasenergy.search.dashboard import dashboard_hint
from nasenergy.search.env_info import collect_env, gpu_info, shell_command
from nasenergy.search.exit_codes import EXIT_DATABASE
from nasenergy.search.locks import RunFolderLock
from nasenergy.search.metric_check import check_search_metric
from nasenergy.search.objectives import objectives_for
from nasenergy.search.pipeline import Worker, WorkerResult, is_stalled, stall_cause
from nasenergy.search.progress import Progress
from nasenergy.search.storage import (
    StorageSpec,
    check_reachable,
    clear_stale_journal_lock,
    open_optuna_storage,
    resolve_storage,
)
from nasenergy.search.filter_yield import YIELD_TEXT
from nasenergy.search.redirect import REDIRECTED_FROM
from nasenergy.search.rescue import RESCUE_ATTR, candidates_after, rescue_of
from nasenergy.search.study import (
    proposed_trials,
    WORKER_ATTR_PREFIX,
    TrialAccess,
    close_abandoned_trials,
    create_or_load_study,
    load_worker_study,
    reconcile_claims,
)
from nasenergy.search.trial_record import row_from_trial

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

    from nasenergy.search.pipeline import StopEvent

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSummary:
    """What one `run_search` call did.

    Attributes:
        out_dir: the run folder.
        study_name: the Optuna study.
        budget: the study's budget of full evaluations.
        evaluated: full evaluations the study has finished (all workers, all sessions).
        candidates: candidates the study has seen.
        outcomes: how many candidates had each outcome (see `nasenergy.search.run_files.OUTCOMES`).
        stop_reason: ``budget``, ``max_candidates``, ``stalled`` (the last ``patience``
            candidates brought no new full evaluation), ``exhausted`` (a partial recorded profile
            has no unseen network left), ``interrupted``, ``worker_failed`` (a worker process
            failed short of the budget) or ``database`` (a worker gave up on an unreachable
            database short of the budget).
        files: the files written.
        resume_command: the command that continues the run.
        dashboard_command: the command that opens the study in optuna-dashboard.
        stall_cause: for a ``stalled`` study, what its last candidates were and what to change
            (`nasenergy.search.pipeline.stall_cause`); else empty.
        rescue: where the study's budget rescue began (`nasenergy.search.rescue.rescue_of`), or
            ``None`` (none began, or ``--budget-rescue off``).
    """

    out_dir: Path
    study_name: str
    budget: int
    evaluated: int
    candidates: int
    outcomes: dict[str, int]
    stop_reason: str
    files: list[Path]
    resume_command: str
    dashboard_command: str
    stall_cause: str = ""
    rescue: dict[str, int] | None = None

    @property
    def complete(self) -> bool:
        """Whether the whole budget has been evaluated."""
        return self.evaluated >= self.budget


def run_search(
    config: SearchConfig,
    *,
    components_factory: ComponentsFactory = build_components,
    resume_command: str | None = None,
) -> RunSummary:
    """Run (or resume, or join) the search ``config`` describes.

    Args:
        config: the settings (validated here).
        components_factory: builds each worker's parts; with ``workers > 1`` an importable
            module-level function.
        resume_command: the command line to print for resuming (default: this process's argv).

    Raises:
        NasEnergyError: bad settings, a study that disagrees with them, an unreachable storage,
            or a run folder in use.
    """
    config.validate()
    check_run_folder(config)
    out = config.out_dir
    secret = password_of(config.storage)
    resume_command = mask_text(resume_command or shell_command(mask_argv(sys.argv[1:])), secrets=[secret])
    spec = resolve_storage(config.storage, out)
    check_reachable(spec)
    # One worker here: build its parts first, so a bad benchmark or meter fails before any storage
    # is touched. Several workers build their own, in their processes.
    components = components_factory(config) if config.workers == 1 else None
    if components is None and components_factory is build_components:
        check_budget(config)  # a budget the space cannot fill is refused before workers start
    if components is not None:
        check_search_metric(components.oracle, config.dataset)
    # Several GPUs: measure the reference networks on each first (refused here, before any storage
    # is touched, under --boards refuse).
    boards = None if components is not None else calibrate_run(config, boards_of_run(config, _pinned_gpus(config)))
    exclusive = spec.kind == "journal"
    private = has_password(config.storage)
    if private:
        make_private(out)
    with RunFolderLock(out) as lock:
        if exclusive:
            lock.acquire_exclusive()
            clear_stale_journal_lock(spec)
        else:
            lock.acquire_shared()
        retry = DbRetry(config.db_retry_s, what=f"the database {spec.display}")
        storage = open_optuna_storage(spec, retry=retry, lease_s=config.lease_s)
        claims = ClaimStore(spec.claims_url, config.resolved_study_name, lease_s=config.lease_s, retry=retry)
        try:
            claims.ensure_study(config.budget, config.study_defining())
            study = create_or_load_study(config, storage)
            study.set_user_attr("nasenergy_settings", config.study_defining())
            if boards is not None:
                study.set_user_attr(BOARDS_ATTR, boards)
            if exclusive:
                claims.expire_all_leases()
            reconcile_claims(study, claims, everyone_dead=exclusive, where=spec.display)
            close_abandoned_trials(study, TrialAccess(storage, study.study_name), claims, everyone_dead=exclusive)
            run_files.write_json(out / run_files.CONFIG_JSON, config.public_dict(), private=private)
            if exclusive:
                lock.acquire_shared()  # let this run's worker processes in, keep other runs out
            progress = Progress(study, claims, objectives_for(config.objectives), enabled=not config.quiet,
                                floor=declared_floor(config.public_dict()))
            try:
                if components is not None:
                    reason = _run_here(config, spec, components, progress, retry)
                else:
                    reason = _run_processes(config, spec, components_factory, progress, boards)
            finally:
                progress.close()
            if reason != "interrupted":
                close_abandoned_trials(study, TrialAccess(storage, study.study_name), claims, everyone_dead=False)
            status = claims.status()
            trials = proposed_trials(study)
            rescue = rescue_of(study.user_attrs) if config.budget_rescue else None
            if status.complete and reason in ("budget", "worker_failed", "database"):
                reason = "budget"  # every evaluation is done, whichever worker died on the way
            elif reason == "budget":  # worker processes stopped short
                reason = _short_reason(study, trials, config.patience, candidates_after(rescue))
            files = write_outputs(config, study, spec, resume_command, stop_reason=reason)
        finally:
            claims.close()
    return RunSummary(
        out_dir=out,
        study_name=config.resolved_study_name,
        budget=status.budget,
        evaluated=status.done,
        candidates=len(trials),
        outcomes=dict(Counter(str(t.user_attrs.get(tr.OUTCOME)) for t in trials)),
        stop_reason=reason,
        files=files,
        resume_command=resume_command,
        dashboard_command=spec.dashboard_command(),
        stall_cause=_stall_cause(config, trials, rescue) if reason == "stalled" else "",
        rescue=rescue,
    )


def _stall_cause(config: SearchConfig, trials: list[FrozenTrial], rescue: dict[str, int] | None) -> str:
    """`stall_cause` with the budget keeping settings in effect when the study stalled."""
    redirect_after, filter_yield_after = config.keeping_in_effect(rescue is not None)
    cause = stall_cause(trials, redirect_after=redirect_after, filter_yield_after=filter_yield_after)
    if rescue is not None:
        cause = (f"{cause} (in the budget rescue that began after evaluation {rescue['evaluations']} at "
                 f"candidate {rescue['candidates']})")
    return cause


def _short_reason(study: optuna.Study, trials: list[FrozenTrial], patience: int, after_trial: int = -1) -> str:
    """Why worker processes stopped before the budget: the candidate cap they recorded, else the
    stall guard (counted after trial ``after_trial``, a budget rescue's start), else a partial
    profile with no unseen network left."""
    caps = [v.get("candidate_cap") for k, v in study.user_attrs.items() if k.startswith(WORKER_ATTR_PREFIX)]
    caps = [c for c in caps if c]
    if caps and len(trials) >= min(caps):
        return "max_candidates"
    return "stalled" if is_stalled(trials, patience, after_trial) else "exhausted"


# ------------------------------------------------------------------------------------- workers


def run_worker(
    config: SearchConfig,
    spec: StorageSpec,
    components: Components,
    *,
    stop: StopEvent,
    on_candidate: Callable[[str], None] | None = None,
    parent_pid: int | None = None,
    retry: DbRetry | None = None,
) -> WorkerResult:
    """One worker's life: register, heartbeat, work, retire.

    Raises:
        DatabaseUnavailableError: the database stayed unreachable for longer than
            ``--db-retry-s``; the worker's lease is ended first (best effort), so other workers
            adopt its claim at once.
    """
    retry = retry or DbRetry(config.db_retry_s, what=f"the database {spec.display}")
    storage = open_optuna_storage(spec, retry=retry, lease_s=config.lease_s)
    claims = ClaimStore(spec.claims_url, config.resolved_study_name, lease_s=config.lease_s, retry=retry)
    try:
        rank = claims.register_worker()
        study = load_worker_study(config, storage, rank=rank)
        study.set_user_attr(
            WORKER_ATTR_PREFIX + claims.worker_id,
            {
                "rank": rank,
                "seed": config.seed + rank,
                "pid": os.getpid(),
                "parts": components.describe,
                "coverage": components.coverage.to_dict() if components.coverage else None,
                "candidate_cap": candidate_cap(config, components.coverage),
                "patience": config.patience,
            },
        )
        with Heartbeat(claims):
            worker = Worker(
                config, study, storage, components, claims, stop=stop, on_candidate=on_candidate, parent_pid=parent_pid
            )
            return worker.run()
    finally:
        try:
            claims.retire_worker()  # ends the lease: a claim left running is adopted at once
        except (NasEnergyError, sa.exc.SQLAlchemyError):
            pass  # the database is gone: the lease runs out by itself
        claims.close()


def _run_here(
    config: SearchConfig, spec: StorageSpec, components: Components, progress: Progress, retry: DbRetry
) -> str:
    stop = threading.Event()
    with _interrupts(stop):
        try:
            result = run_worker(config, spec, components, stop=stop, on_candidate=progress.refresh, retry=retry)
        except KeyboardInterrupt:
            return "interrupted"
    return "interrupted" if stop.is_set() else result.reason


def _visible_gpus() -> list[str]:
    """GPU ids workers may be pinned to: ``CUDA_VISIBLE_DEVICES``, else NVML's count."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]

    return [str(i) for i in range(len(gpu_info()["gpus"]))]


def _pinned_gpus(config: SearchConfig) -> list[str]:
    """The GPUs worker processes are pinned to (worker k: entry k modulo their number): the visible
    GPUs for ``--hardware auto`` and a meter that measures on GPUs (`MeterKind.uses_gpu`); empty: none."""
    return _visible_gpus() if config.hardware == AUTO or METERS.get(config.hardware).uses_gpu else []


def _run_processes(config: SearchConfig, spec: StorageSpec, factory: ComponentsFactory, progress: Progress,
                   boards: dict[str, Any] | None = None) -> str:
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    gpus = _pinned_gpus(config)
    procs = [
        ctx.Process(
            target=_worker_process,
            args=(config.to_dict(), spec, factory, stop, gpus[k % len(gpus)] if gpus else None, os.getpid(), boards),
            name=f"nasenergy-worker-{k}",
        )
        for k in range(config.workers)
    ]

    def hard_stop() -> None:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the worker gives back its claim and exits

    interrupted = False
    with _interrupts(stop):
        for p in procs:
            p.start()
        try:
            while any(p.is_alive() for p in procs):
                for p in procs:
                    p.join(timeout=0.2)
                progress.refresh()
        except KeyboardInterrupt:
            interrupted = True
            hard_stop()
            for p in procs:
                p.join()
    if interrupted or stop.is_set():
        return "interrupted"
    return reason_of_exits([p.exitcode for p in procs])


def reason_of_exits(exit_codes: list[int | None]) -> str:
    """The stop reason of worker processes that ended with ``exit_codes`` (before the study's
    counts are read: a study whose budget is spent ends ``budget`` whatever these say).

    ``budget`` when every process succeeded, ``database`` when one gave up on the database,
    else ``worker_failed``.
    """
    failed = [c for c in exit_codes if c not in (0, None)]
    if not failed:
        return "budget"
    return "database" if EXIT_DATABASE in failed else "worker_failed"


def _worker_process(config_dict: dict, spec: StorageSpec, factory: ComponentsFactory, stop: StopEvent, gpu: str | None, parent_pid: int,
                    boards: dict[str, Any] | None = None) -> None:
    """Entry point of a worker process (spawned): exit status 0, 1 or 2 like the command; `boards`:
    the run's board calibration (its measurements are normalised where it says so)."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent coordinates Ctrl-C through `stop`
    signal.signal(signal.SIGTERM, _raise_interrupt)
    config = SearchConfig.from_dict({**config_dict, "workers": 1, "quiet": True})
    lock = RunFolderLock(config.out_dir)
    lock.acquire_shared()
    try:
        run_worker(config, spec, normalising(factory(config), boards), stop=stop, parent_pid=parent_pid)
    except NasEnergyError as exc:
        logger.error("error: %s", mask_text(str(exc), secrets=[password_of(config.storage)]))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        lock.release()


def _raise_interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


@contextmanager
def _interrupts(stop: StopEvent) -> Iterator[None]:
    """First Ctrl-C: stop after the current candidate. Second Ctrl-C (or SIGTERM): stop now."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(*_: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        logger.warning("\nstopping after the current candidate (Ctrl-C again to stop at once)")

    previous = signal.signal(signal.SIGINT, on_sigint), signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


# ------------------------------------------------------------------------------------- outputs


def write_outputs(config: SearchConfig, study: optuna.Study, spec: StorageSpec, resume_command: str,
                  stop_reason: str | None = None) -> list[Path]:
    """Rebuild every file of the run folder from the study; returns the files written.

    `stop_reason` (a `RunSummary.stop_reason`) is kept in ``env.json`` and shown in the report."""
    out = config.out_dir
    private = has_password(config.storage)
    secrets = [password_of(config.storage)]
    objectives = objectives_for(config.objectives)
    proposed = proposed_trials(study)
    rows = [row_from_trial(t) for t in proposed]
    run_files.write_tables(out, rows, objectives, private=private, min_accuracy=config.min_accuracy)
    workers = {k[len(WORKER_ATTR_PREFIX):]: v for k, v in study.user_attrs.items() if k.startswith(WORKER_ATTR_PREFIX)}
    env = collect_env(seed=config.seed, workers=workers, storage=spec.display, command=resume_command,
                      secrets=secrets)
    if stop_reason is not None:
        env["stop_reason"] = stop_reason
    if study.user_attrs.get(BOARDS_ATTR):
        env["boards"] = study.user_attrs[BOARDS_ATTR]
    rescue = rescue_of(study.user_attrs)
    if rescue is not None:  # where it began, and what it did (counted over the whole study)
        env[RESCUE_ATTR] = {**rescue, "redirected": sum(1 for t in proposed if REDIRECTED_FROM in t.user_attrs),
                            "yielded": sum(1 for r in rows if r.get("outcome") == oc.EVALUATED
                                           and YIELD_TEXT in str(r.get("filter_reason") or ""))}
    run_files.write_json(out / run_files.ENV_JSON, env, private=private)
    record = run_files.RunRecord(out, config.public_dict(), rows, env)
    report = render_report(record, resume_command=mask_text(resume_command, secrets=secrets),
                           dashboard_command=dashboard_hint(spec.dashboard_command()))
    run_files.write_text_atomic(out / run_files.REPORT_MD, report, private=private)
    names = [run_files.CANDIDATES_CSV, run_files.FRONT_CSV, run_files.CONFIG_JSON, run_files.ENV_JSON, run_files.REPORT_MD]
    plots = draw_run(record)
    if private:
        make_private(out, plots)
    return [out / n for n in names] + plots
