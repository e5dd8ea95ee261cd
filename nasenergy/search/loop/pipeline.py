"""One search worker: the loop over candidates, and what happens to each, top to bottom.

For each candidate (one Optuna trial, ask-and-tell):

1. **suggest** an architecture and find its **network key** (`Components.key_of`: its canonical
   class, and its deployed structure where the figures belong to deployed networks, see
   `nasenergy.run.network_key`); a network the study has already seen is a *duplicate*: it is recorded with the earlier trial's figures (``duplicate_of``) without
   measuring it again or spending budget, and told ``PRUNED``: its values are in the study once
   already, and telling them again would weight that network twice in the sampler's model and
   make TPE propose it over and over.
2. **measure** it cheaply (throughput, utilization, energy per image at the default clock). A
   network a recorded profile lacks is recorded ``not_recorded`` and told ``PRUNED`` (it spends
   no budget, and the sampler learns to avoid such cells; the duplicate-aware TPE passes over
   them among its draws, `Components.covers`).
3. **filter**: a rejected candidate is told ``PRUNED`` with its cheap figures. With screening
   (``--screen K``, `nasenergy.search.loop.screening`) an admitted candidate waits, its trial open,
   until ``K`` candidates were measured since the last screening; the one of largest expected
   hypervolume improvement goes on, the few next best that still promise one wait for the next
   screening, the others are recorded ``filtered`` (screened out) and told ``FAIL``, which the
   sampler's model leaves out.
4. **claim** a budget slot for its network (atomic across workers, see
   `nasenergy.search.storage.claims`); when the budget is spent the candidate is recorded ``over_budget``.
5. **evaluate** its accuracy (the expensive step the budget counts), drawing the benchmark's
   training run with `evaluation_seed` (the study's seed and the trial number, so the answer does
   not depend on which worker evaluates it or when), and ask the oracle for the final reported
   figure.
6. find its **energy-optimal clock** (DVFS) and score throughput and energy there.
7. **tell** the study the objective values, then close the claim.

Before taking new work a worker adopts orphaned claims (their worker died) and finishes them, so a
study always ends with exactly ``budget`` finished evaluations. A worker that was silent for longer
than ``--lease-s`` (paused, or cut off from the database) may find that another worker adopted its
claim meanwhile: it then discards its own result with one line and goes on (`LOST`), so the network
is still counted once.

A worker whose sampler proposed ``--redirect-after`` known networks in a row enqueues a few networks
not yet seen near the last one (`nasenergy.search.loop.redirect`), which the study's next trial proposes,
so candidates per full evaluation stay bounded when the sampler converges; likewise a filter that
rejected ``--filter-yield-after`` candidates in a row yields to the next promising one
(`nasenergy.search.loop.filter_yield`). 0 turns either off; left at their defaults, both are off until
the stall guard's condition first holds, when a budget rescue switches them on for every worker
(`nasenergy.search.loop.rescue`) and the guard counts again.

Two guards stop a study that cannot fill its budget: the candidate cap (``--max-candidates``) and
the stall guard (``--patience``): the study's last ``patience`` finished candidates brought no new
full evaluation (`candidates_since_evaluation`).

This module holds the loop (`Worker`); each step lives in a module of its own:
`nasenergy.search.loop.worker_context` (the state the loop carries), `nasenergy.search.loop.candidate_step`
(steps 1-3), `nasenergy.search.loop.screening_pool`, `nasenergy.search.loop.claim_step` (step 4, duplicates
and orphans), `nasenergy.search.loop.evaluation_step` (steps 5-7), `nasenergy.search.loop.budget_keeping`
(redirection, filter yield, rescue), `nasenergy.search.loop.exhaustion` and `nasenergy.search.loop.stall`
(the guards). Their public names are importable from here too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nasenergy.measurement import Measurement
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.record import ScoredFigures
from nasenergy.search.command.components import Components
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.coverage import candidate_cap
from nasenergy.search.loop.budget_keeping import BudgetKeeping
from nasenergy.search.loop.candidate_step import CANNOT_LEARN, CANNOT_LEARN_REASON, CandidateStep
from nasenergy.search.loop.claim_step import ClaimStep
from nasenergy.search.loop.evaluation_step import (
    MIN_ACCURACY,
    EnergyUnavailableError,
    EvaluationStep,
    evaluation_seed,
)
from nasenergy.search.loop.exhaustion import Exhaustion
from nasenergy.search.loop.rescue import candidates_after, is_trickling
from nasenergy.search.loop.screening_pool import ScreeningPool
from nasenergy.search.loop.stall import (
    STALL_ADVICE,
    STALL_ADVICE_WHEN_OFF,
    candidates_since_evaluation,
    is_stalled,
    stall_cause,
)
from nasenergy.search.loop.worker_context import (
    CANDIDATE_ERRORS,
    LOST,
    POLL_S,
    WorkerContext,
    is_candidate_error,
)
from nasenergy.search.sampling.study import proposed_trials
from nasenergy.search.storage.claims import ClaimStore

if TYPE_CHECKING:
    import optuna
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial

    from nasenergy.search.loop.worker_context import StopEvent

__all__ = [
    "CANDIDATE_ERRORS",
    "CANNOT_LEARN",
    "CANNOT_LEARN_REASON",
    "LOST",
    "MIN_ACCURACY",
    "POLL_S",
    "STALL_ADVICE",
    "STALL_ADVICE_WHEN_OFF",
    "EnergyUnavailableError",
    "Worker",
    "WorkerResult",
    "candidates_since_evaluation",
    "evaluation_seed",
    "is_candidate_error",
    "is_stalled",
    "stall_cause",
]


@dataclass(frozen=True)
class WorkerResult:
    """Why a worker stopped.

    Attributes:
        reason: ``budget`` (every slot finished), ``max_candidates`` (the safety cap),
            ``stalled`` (the last ``patience`` candidates brought no new full evaluation),
            ``exhausted`` (every network the recorded profile holds has been seen),
            ``stopped`` (asked to stop) or ``parent_gone`` (its launching process died).
        candidates: candidates this worker handled.
    """

    reason: str
    candidates: int


class Worker:
    """Runs candidates of one study until the budget is finished or it is told to stop.

    Args:
        config, study, storage, components, claims, stop, on_candidate: as `WorkerContext`, which
            the worker builds from them.
        parent_pid: stop when the process's parent is no longer this pid (``None``: never).
    """

    def __init__(
        self,
        config: SearchConfig,
        study: optuna.Study,
        storage: BaseStorage,
        components: Components,
        claims: ClaimStore,
        *,
        stop: StopEvent,
        on_candidate: Callable[[str], None] | None = None,
        parent_pid: int | None = None,
    ) -> None:
        self.config = config
        self.study = study
        self.components = components
        self.claims = claims
        self.stop = stop
        self.parent_pid = parent_pid
        self.cap = candidate_cap(config, components.coverage)
        ctx = self._ctx = WorkerContext(config, study, storage, components, claims, stop=stop,
                                        on_candidate=on_candidate)
        self.on_candidate = ctx.on_candidate
        self.objectives = ctx.objectives
        self._observed: set[int] = set()
        self._handled = 0
        evaluation = EvaluationStep(ctx)
        self._claim_step = ClaimStep(ctx, evaluation)
        # budget keeping: settings left at their defaults are off until a budget rescue
        self._keeping = BudgetKeeping(ctx, self._claim_step, evaluation)
        self._pool = ScreeningPool(ctx, self._claim_step)
        self._candidate_step = CandidateStep(ctx, self._claim_step, self._keeping, self._pool)
        self._exhaustion = Exhaustion(components, claims)

    @property
    def redirected(self) -> int:
        """Networks this worker enqueued by redirection (`nasenergy.search.loop.redirect`)."""
        return self._keeping.redirected

    def run(self) -> WorkerResult:
        """Work until the budget is finished, the candidate cap or the stall guard stops the
        study, or `stop` is set."""
        try:
            return self._loop()
        except BaseException:
            self._pool.drain(oc.ABANDONED, "the worker stopped before the screened candidates were settled")
            raise

    def _loop(self) -> WorkerResult:
        keeping, pool = self._keeping, self._pool
        while True:
            if self.stop.is_set():
                return self._stopping("stopped", oc.ABANDONED)
            if self.parent_pid is not None and os.getppid() != self.parent_pid:
                return self._stopping("parent_gone", oc.ABANDONED)
            status = self.claims.status()
            if status.complete:
                return self._stopping("budget", oc.OVER_BUDGET)
            if status.orphans or status.claimed >= status.budget:
                orphan = self.claims.adopt_orphan()
                if orphan is not None:
                    self._claim_step.finish_orphan(orphan)
                    continue
            keeping.follow_rescue()
            if self._exhaustion.is_exhausted(status):
                if self._reopen_rejected():
                    continue
                if keeping.begin_rescue():
                    continue
                if pool.settle_early():
                    continue
                return WorkerResult("exhausted", self._handled)
            if status.claimed >= status.budget:
                if pool.waiting:  # the slots went to other workers: these can no longer be evaluated
                    pool.drain(oc.OVER_BUDGET, "the budget was spent before it was screened")
                time.sleep(POLL_S)  # every slot is held by a live worker: wait for them
                continue
            trials = proposed_trials(self.study)
            if len(trials) >= self.cap:
                if pool.settle_early():
                    continue
                return WorkerResult("max_candidates", self._handled)
            if is_stalled(trials, self.config.patience, candidates_after(keeping.rescue)):
                if pool.settle_early():
                    continue
                if keeping.begin_rescue(trials):
                    continue
                return WorkerResult("stalled", self._handled)
            if keeping.rescue is None and self.config.rescue_possible and is_trickling(trials, self.config.patience):
                keeping.begin_rescue(trials)  # off or nothing to switch on: search on as before
            self._learn(trials)
            self._ctx.seen.update(trials)
            if self._ctx.known is not self._ctx.seen:
                self._ctx.known.update(trials)
            self._next_candidate()

    def _next_candidate(self) -> None:
        """Handle one new candidate and report its outcome."""
        outcome = self._candidate_step.next_candidate()
        self._handled += 1
        self.on_candidate(outcome)

    def _stopping(self, reason: str, outcome: str) -> WorkerResult:
        """Close the screening pool's trials as ``outcome`` and stop for ``reason``."""
        self._pool.drain(outcome, f"the worker stopped ({reason}) before it was screened")
        return WorkerResult(reason, self._handled)

    def _reopen_rejected(self) -> bool:
        """With every network the study can evaluate seen and budget left, let the filter yield on
        the most promising network it rejected (`nasenergy.search.loop.filter_yield`): enqueue it and
        handle the next candidate. ``False`` when the yield is off or no rejected network is left."""
        if not self._keeping.enqueue_rejected():
            return False
        self._learn(proposed_trials(self.study))
        self._next_candidate()
        return True

    def _learn(self, trials: list[FrozenTrial]) -> None:
        """Teach the filter every evaluation finished since the last call (by any worker) and
        update the Pareto front it is given."""
        states = self._ctx.states
        new_points = []
        for t in trials:
            if t.number in self._observed or t.state != states.COMPLETE:
                continue
            if t.user_attrs.get(tr.OUTCOME) != oc.EVALUATED:
                continue
            self._observed.add(t.number)
            stored = tr.measurement_of(t)
            if stored is None:  # an evaluation without its cheap measurement teaches the filter nothing
                continue
            scored = ScoredFigures.from_attr(tr.scored_of(t))
            measurement = Measurement.from_dict(stored)
            features = self._ctx.features_of(t.user_attrs[tr.CANDIDATE]["arch"])
            self.components.filter.observe(
                measurement,
                scored.accuracy_pct,
                features=features,
                throughput_img_per_s=scored.throughput_img_per_s,
                energy_j_per_img=scored.energy_j_per_img,
            )
            row = scored.values(self.objectives)
            self._pool.observe(measurement, features, row, t.user_attrs[tr.CANDIDATE]["arch"])
            if self.config.min_accuracy is None or scored.accuracy_pct >= self.config.min_accuracy:
                new_points.append(row)  # a network below --min-accuracy never stands on the front
        if new_points:
            self._ctx.front.extend(np.asarray(new_points, dtype=float))
