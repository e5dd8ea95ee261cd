"""The workers of one command: one worker's life (`run_worker`), run in this process (`run_here`)
or as spawned child processes (`run_processes`, one GPU each where GPUs are visible), and Ctrl-C.

Ctrl-C stops every worker after its current candidate (a second Ctrl-C, or SIGTERM, abandons it
and returns its budget slot). A worker process exits with the command's status; `reason_of_exits`
turns the processes' statuses into a stop reason.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.registry import AUTO, METERS
from nasenergy.search.command.components import Components, ComponentsFactory
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.coverage import candidate_cap
from nasenergy.search.command.env_info import gpu_info
from nasenergy.search.command.exit_codes import EXIT_DATABASE
from nasenergy.search.loop.board_step import normalising
from nasenergy.search.loop.pipeline import Worker, WorkerResult
from nasenergy.search.sampling.study import WORKER_ATTR_PREFIX, load_worker_study
from nasenergy.search.storage.claims import ClaimStore, Heartbeat
from nasenergy.search.storage.credentials import mask_text, password_of
from nasenergy.search.storage.db_retry import DbRetry, database_failure
from nasenergy.search.storage.locks import RunFolderLock
from nasenergy.search.storage.storages import StorageSpec, open_optuna_storage
from nasenergy.search.workers.progress import Progress

if TYPE_CHECKING:
    from nasenergy.search.loop.worker_context import StopEvent

logger = logging.getLogger(__name__)


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
                "seed": (config.seed + rank) % 2**32,
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


def run_here(
    config: SearchConfig, spec: StorageSpec, components: Components, progress: Progress, retry: DbRetry
) -> str:
    """Run the one worker in this process; returns its stop reason (``interrupted`` after Ctrl-C)."""
    stop = threading.Event()
    oracle = components.oracle
    if getattr(oracle, "on_epoch", False) is None:  # a training oracle: redraw the bar after every epoch
        oracle.on_epoch = lambda *_: progress.refresh(force=True)  # type: ignore[attr-defined]
    with _interrupts(stop):
        try:
            result = run_worker(config, spec, components, stop=stop, on_candidate=progress.refresh, retry=retry)
        except KeyboardInterrupt:
            return "interrupted"
    return "interrupted" if stop.is_set() else result.reason


def visible_gpus() -> list[str]:
    """GPU ids workers may be pinned to: ``CUDA_VISIBLE_DEVICES``, else NVML's count."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]

    return [str(i) for i in range(len(gpu_info()["gpus"]))]


def pinned_gpus(config: SearchConfig) -> list[str]:
    """The GPUs worker processes are pinned to (worker k: entry k modulo their number): the visible
    GPUs for ``--hardware auto`` and a meter that measures on GPUs (`MeterKind.uses_gpu`); empty: none."""
    return visible_gpus() if config.hardware == AUTO or METERS.get(config.hardware).uses_gpu else []


def run_processes(config: SearchConfig, spec: StorageSpec, factory: ComponentsFactory, progress: Progress,
                  boards: dict[str, Any] | None = None) -> str:
    """Run ``config.workers`` worker processes (spawned, pinned to GPUs where `pinned_gpus` names
    some) until all have ended; returns their stop reason (`reason_of_exits`, or ``interrupted``)."""
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    gpus = pinned_gpus(config)
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
    except sa.exc.SQLAlchemyError as exc:  # one the retries did not mend: a full disk, a damaged file
        failure = database_failure(exc, spec.claims_display)
        logger.error("error: %s", mask_text(str(failure), secrets=[password_of(config.storage)]))
        sys.exit(failure.exit_code)
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
