"""`run_search`: one command's share of a study, from start-up repairs to the files it leaves.

Start-up: take the run folder's lock; refuse a damaged ``claims.sqlite``; open the storage and the
claims; create or load the study and check it against the settings and the budget (the study is
the record of what was spent: `nasenergy.search.sampling.study_budget`); reconcile the claims with
it and restore what it proves; with the local journal storage (the folder held exclusively)
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

The workers themselves run in `nasenergy.search.workers.worker_processes`; the files are written by
`nasenergy.search.workers.run_outputs`.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from nasenergy.run import files as run_files
from nasenergy.run import trial_record as tr
from nasenergy.run.objectives import objectives_for
from nasenergy.run.quality import declared_floor
from nasenergy.search.command.components import ComponentsFactory, build_components, check_budget
from nasenergy.search.command.config import SearchConfig, check_run_folder
from nasenergy.search.command.env_info import shell_command
from nasenergy.search.loop.board_step import BOARDS_ATTR, boards_of_run, calibrate_run
from nasenergy.search.loop.metric_check import check_search_metric
from nasenergy.search.loop.rescue import candidates_after, rescue_of
from nasenergy.search.loop.stall import is_stalled, stall_cause
from nasenergy.search.sampling.study import (
    WORKER_ATTR_PREFIX,
    TrialAccess,
    close_abandoned_trials,
    create_or_load_study,
    proposed_trials,
    reconcile_claims,
)
from nasenergy.search.sampling.study_budget import (
    SETTINGS_ATTR,
    check_study_budget,
    check_study_not_lost,
    evaluations_of,
    record_budget,
    recorded_budget,
)
from nasenergy.search.storage.claims import ClaimStore
from nasenergy.search.storage.credentials import has_password, make_private, mask_argv, mask_text, password_of
from nasenergy.search.storage.db_retry import DbRetry, database_failure
from nasenergy.search.storage.locks import RunFolderLock
from nasenergy.search.storage.sqlite_files import check_claims_file
from nasenergy.search.storage.storages import (
    CLAIMS_FILE,
    check_reachable,
    clear_stale_journal_lock,
    open_optuna_storage,
    resolve_storage,
)
from nasenergy.search.workers.progress import Progress
from nasenergy.search.workers.run_outputs import write_outputs
from nasenergy.search.workers.worker_processes import pinned_gpus, reason_of_exits, run_here, run_processes, run_worker

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

# `run_worker` and `reason_of_exits` live in `nasenergy.search.workers.worker_processes`, `write_outputs` in
# `nasenergy.search.workers.run_outputs`; they stay importable from here
__all__ = ["RunSummary", "reason_of_exits", "run_search", "run_worker", "write_outputs"]


@dataclass(frozen=True)
class RunSummary:
    """What one `run_search` call did.

    Attributes:
        out_dir: the run folder.
        study_name: the Optuna study.
        budget: the study's budget of full evaluations.
        evaluated: full evaluations the study has finished (all workers, all sessions).
        candidates: candidates the study has seen.
        outcomes: how many candidates had each outcome (see `nasenergy.run.files.OUTCOMES`).
        stop_reason: ``budget``, ``max_candidates``, ``stalled`` (the last ``patience``
            candidates brought no new full evaluation), ``exhausted`` (a partial recorded profile
            has no unseen network left), ``interrupted``, ``worker_failed`` (a worker process
            failed short of the budget) or ``database`` (a worker gave up on an unreachable
            database short of the budget).
        files: the files written.
        resume_command: the command that continues the run.
        dashboard_command: the command that opens the study in optuna-dashboard.
        stall_cause: for a ``stalled`` study, what its last candidates were and what to change
            (`nasenergy.search.loop.stall.stall_cause`); else empty.
        rescue: where the study's budget rescue began (`nasenergy.search.loop.rescue.rescue_of`), or
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
        DatabaseFailedError: a database error no retry mends (a full disk, a damaged file).
    """
    try:
        return _run_search(config, components_factory=components_factory, resume_command=resume_command)
    except sa.exc.SQLAlchemyError as exc:  # one the retries did not mend: a full disk, a damaged file
        raise database_failure(exc, resolve_storage(config.storage, config.out_dir).claims_display) from None


def _run_search(
    config: SearchConfig,
    *,
    components_factory: ComponentsFactory,
    resume_command: str | None,
) -> RunSummary:
    """`run_search` without its translation of database errors."""
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
    boards = None if components is not None else calibrate_run(config, boards_of_run(config, pinned_gpus(config)))
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
        if exclusive:
            check_claims_file(out.resolve() / CLAIMS_FILE, Path(spec.location))
        retry = DbRetry(config.db_retry_s, what=f"the database {spec.display}")
        storage = open_optuna_storage(spec, retry=retry, lease_s=config.lease_s)
        claims = ClaimStore(spec.claims_url, config.resolved_study_name, lease_s=config.lease_s, retry=retry)
        try:
            study = create_or_load_study(config, storage)
            check_study_budget(study, budget=config.budget, settings=config.study_defining(), where=spec.display)
            # the study is the record: a claims file alone (the folder held exclusively) takes its budget
            # and settings from it; a shared database keeps both in one place and checks them again
            claims.ensure_study(config.budget, config.study_defining(),
                                from_study=exclusive and recorded_budget(study) is not None)
            check_study_not_lost(study, claimed_done=claims.status().done, where=spec.display)
            study.set_user_attr(SETTINGS_ATTR, config.study_defining())
            record_budget(study, config.budget)
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
                                floor=declared_floor(config.public_dict()),
                                training_dir=out / "training" if config.oracle == "train" else None)
            try:
                if components is not None:
                    reason = run_here(config, spec, components, progress, retry)
                else:
                    reason = run_processes(config, spec, components_factory, progress, boards)
            finally:
                progress.close()
            if reason != "interrupted":
                close_abandoned_trials(study, TrialAccess(storage, study.study_name), claims, everyone_dead=False)
            status = claims.status()
            trials = proposed_trials(study)
            evaluated = evaluations_of(trials)  # the study's count: what the report and the status say
            rescue = rescue_of(study.user_attrs) if config.budget_rescue else None
            if evaluated >= status.budget and reason in ("budget", "worker_failed", "database"):
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
        evaluated=evaluated,
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
