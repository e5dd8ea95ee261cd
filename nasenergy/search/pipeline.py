"""One search worker: the loop over candidates, and what happens to each, top to bottom.

For each candidate (one Optuna trial, ask-and-tell):

1. **suggest** an architecture and find its **network key** (`Components.key_of`: its canonical
   class, and its deployed structure where the figures belong to deployed networks, see
   `nasenergy.search.network_key`); a network the study has already seen is a *duplicate*: it is recorded with the earlier trial's figures (``duplicate_of``) without
   measuring it again or spending budget, and told ``PRUNED``: its values are in the study once
   already, and telling them again would weight that network twice in the sampler's model and
   make TPE propose it over and over.
2. **measure** it cheaply (throughput, utilization, energy per image at the default clock). A
   network a recorded profile lacks is recorded ``not_recorded`` and told ``PRUNED`` (it spends
   no budget, and the sampler learns to avoid such cells; the duplicate-aware TPE passes over
   them among its draws, `Components.covers`).
3. **filter**: a rejected candidate is told ``PRUNED`` with its cheap figures. With screening
   (``--screen K``, `nasenergy.search.screening`) an admitted candidate waits, its trial open,
   until ``K`` candidates were measured since the last screening; the one of largest expected
   hypervolume improvement goes on, the few next best that still promise one wait for the next
   screening, the others are recorded ``filtered`` (screened out) and told ``FAIL``, which the
   sampler's model leaves out.
4. **claim** a budget slot for its network (atomic across workers, see
   `nasenergy.search.claims`); when the budget is spent the candidate is recorded ``over_budget``.
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
not yet seen near the last one (`nasenergy.search.redirect`), which the study's next trial proposes,
so candidates per full evaluation stay bounded when the sampler converges; likewise a filter that
rejected ``--filter-yield-after`` candidates in a row yields to the next promising one
(`nasenergy.search.filter_yield`). 0 turns either off; left at their defaults, both are off until
the stall guard's condition first holds, when a budget rescue switches them on for every worker
(`nasenergy.search.rescue`) and the guard counts again.

Two guards stop a study that cannot fill its budget: the candidate cap (``--max-candidates``) and
the stall guard (``--patience``): the study's last ``patience`` finished candidates brought no new
full evaluation (`candidates_since_evaluation`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from nasenergy.errors import CandidateError, NasEnergyError
from nasenergy.filter.energy_bound import optimistic_figures
from nasenergy.filter.records import Decision
from nasenergy.filter.trial_attrs import CHEAP_ATTR, cheap_attr, decision_of, record_decision
from nasenergy.hardware.recorded import NotRecordedError
from nasenergy.hardware.select import resolve_hardware
from nasenergy.measurement import Measurement
from nasenergy.pareto import ParetoFront
from nasenergy.search import outcomes as oc
from nasenergy.search import trial_record as tr
from nasenergy.search.claims import DONE, FAILED, FILTERED, NOT_RECORDED, RUNNING, BudgetStatus, Cell, ClaimStore
from nasenergy.search.components import Components
from nasenergy.search.config import SearchConfig
from nasenergy.search.coverage import candidate_cap
from nasenergy.search.filter_features import FeatureFn, cheap_columns, extra_features
from nasenergy.search.filter_yield import REOPEN_REASON, REOPENED_FROM, FilterYield, most_promising_rejected
from nasenergy.search.objectives import objectives_for
from nasenergy.search.screening import Screened, Screener
from nasenergy.search.study import TrialAccess, proposed_trials
from nasenergy.search.redirect import REDIRECT_BATCH, REDIRECTED_FROM, nearby_unseen, redirect_rng
from nasenergy.search.rescue import begin_rescue, candidates_after, is_trickling, rescue_of
from nasenergy.search.tpe_dedup import SeenNetworks, watch_seen_networks
from search_spaces import Arch

if TYPE_CHECKING:
    import multiprocessing.synchronize

    import optuna
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial, TrialState

    from nasenergy.dvfs.points import OptimalClock
    from nasenergy.oracles.evaluation import Evaluation

    StopEvent = threading.Event | multiprocessing.synchronize.Event

logger = logging.getLogger(__name__)

POLL_S = 0.25
"""Seconds between looks at the claims while waiting for other workers."""

MIN_ACCURACY = "min_accuracy"
"""The Optuna constraint of ``--min-accuracy``: the floor minus the accuracy (> 0: below the floor)."""
CANNOT_LEARN = "cannot_learn"
"""The Optuna constraint of a network whose output does not depend on its input (always 1: infeasible)."""
CANNOT_LEARN_REASON = "cannot learn: the network's output does not depend on its input; never evaluated"

LOST = "lost"
"""What `Worker` reports for a candidate whose claim another worker took over (its result is
discarded), or whose trial another process closed under it (a straggler of a finished study)."""


class EnergyUnavailableError(NasEnergyError):
    """Energy per image is an objective but neither the meter nor the DVFS backend provides it."""

    exit_code = 2


def evaluation_seed(study_seed: int, trial_number: int) -> int:
    """The seed of one full evaluation: a 32-bit mix of the study's seed and the trial number.

    The benchmark oracle draws the training run it answers with this seed, so a study's answers
    are reproducible whatever the number of workers or the order in which they finish.
    """
    return int(np.random.SeedSequence([int(study_seed), int(trial_number)]).generate_state(1)[0])


def candidates_since_evaluation(trials: Sequence[FrozenTrial], after_trial: int = -1) -> int:
    """How many finished candidates came after the study's newest full evaluation.

    Args:
        trials: the study's trials in trial order (``study.get_trials()``).
        after_trial: count only trials numbered above it (a budget rescue restarts the count,
            `nasenergy.search.rescue.candidates_after`).

    Returns:
        The candidates after the last trial whose outcome is ``evaluated``, not counting trials
        still in progress (no outcome yet: another worker may be evaluating them).
    """
    count = 0
    for t in reversed(trials):
        if after_trial >= 0 and t.number <= after_trial:
            break
        outcome = t.user_attrs.get(tr.OUTCOME)
        if outcome == oc.EVALUATED:
            break
        if outcome is not None:
            count += 1
    return count


def is_stalled(trials: Sequence[FrozenTrial], patience: int, after_trial: int = -1) -> bool:
    """Whether the stall guard's condition holds: ``patience`` > 0 finished candidates in a row
    without a new full evaluation (see `candidates_since_evaluation`), counted after trial
    ``after_trial`` (a budget rescue's start)."""
    return patience > 0 and candidates_since_evaluation(trials, after_trial) >= patience


STALL_ADVICE = {
    oc.DUPLICATE: "the sampler kept proposing networks the study had seen and no unseen network was found near "
                  "them: few unseen networks are left; lower --budget, or try --sampler random",
    oc.FILTERED: "the filter rejected the new networks: loosen it (--target-recall, --filter none) or lower --budget",
    oc.NOT_RECORDED: "the new networks lie outside the recorded profile: measure on a GPU (--hardware cuda) or "
                     "lower --budget",
    oc.INFEASIBLE: "the new networks cannot learn (output independent of the input): lower --budget",
    oc.FAILED: "the new networks failed to measure or evaluate (see the trials' errors)",
}


STALL_ADVICE_WHEN_OFF = {
    oc.DUPLICATE: "the sampler kept proposing networks the study had seen, and redirection was off: "
                  "turn it on (--budget-rescue on, or --redirect-after 2 from the start) or lower --budget",
    oc.FILTERED: "the filter rejected the new networks and never yields: let it (--budget-rescue on, or "
                 "--filter-yield-after 10 from the start), loosen it (--target-recall, --filter none) or lower --budget",
}
"""`STALL_ADVICE` where the mechanism that would have helped was turned off (``--redirect-after
0``, ``--filter-yield-after 0``)."""


def stall_cause(trials: Sequence[FrozenTrial], *, redirect_after: int = 1, filter_yield_after: int = 1) -> str:
    """Why the study stalled, in one clause: the outcomes of the candidates after its newest full
    evaluation (see `candidates_since_evaluation`), most frequent first, and what to change for the
    most frequent one (`STALL_ADVICE`; `STALL_ADVICE_WHEN_OFF` for the duplicates with
    ``redirect_after`` 0 and the filtered ones with ``filter_yield_after`` 0)."""
    counts: dict[str, int] = {}
    for t in reversed(trials):
        outcome = t.user_attrs.get(tr.OUTCOME)
        if outcome == oc.EVALUATED:
            break
        if outcome is not None:
            counts[outcome] = counts.get(outcome, 0) + 1
    if not counts:
        return "no candidate finished"
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    told = ", ".join(f"{n} {outcome}" for outcome, n in ranked)
    off = {oc.DUPLICATE: redirect_after <= 0, oc.FILTERED: filter_yield_after <= 0}
    table = STALL_ADVICE_WHEN_OFF if off.get(ranked[0][0]) else STALL_ADVICE
    advice = table.get(ranked[0][0], "raise --patience (0 turns the guard off) or lower --budget")
    return f"{told}: {advice}"


CANDIDATE_ERRORS: tuple[type[BaseException], ...] = (CandidateError, LookupError)
"""Errors that fail one candidate (recorded ``failed``; the search goes on) rather than the run:
a `CandidateError` (a measurement that failed, e.g. out of memory; a figure a partial benchmark
lacks) and any `NasEnergyError` that is a `LookupError` (a lookup miss of a custom part). Any other
`NasEnergyError` concerns the run's set-up and stops the search."""


def is_candidate_error(exc: NasEnergyError) -> bool:
    """Whether ``exc`` fails one candidate only (its type is one of `CANDIDATE_ERRORS`)."""
    return isinstance(exc, CANDIDATE_ERRORS)


class _Pooled(NamedTuple):
    """A screening pool member's trial and network (`Screened.payload`)."""

    number: int
    arch: Arch
    key: str
    decision: Decision


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
        config: the run's settings.
        study: the Optuna study (already created, with the run's directions).
        storage: the study's Optuna storage object.
        components: space, meter, oracle, filter and DVFS backend.
        claims: this worker's claim store (registered, heartbeat running).
        stop: set to stop after the current candidate.
        on_candidate: called with each candidate's outcome (e.g. to update a progress bar).
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
        import optuna

        self.config = config
        self.study = study
        self.components = components
        self.claims = claims
        self.stop = stop
        self.on_candidate = on_candidate or (lambda _outcome: None)
        self.parent_pid = parent_pid
        self.objectives = objectives_for(config.objectives)
        self.cap = candidate_cap(config, components.coverage)
        self._trials = TrialAccess(storage, study.study_name)
        self._observed: set[int] = set()
        self._front = ParetoFront(self.objectives)
        self._states = optuna.trial.TrialState
        self._handled = 0
        # TPE avoids seen networks, and those a partial recorded profile lacks
        self._seen = watch_seen_networks(study.sampler, components.space, components.key_of, components.covers)
        self._features = self._feature_fn()
        # the networks seen, for redirecting a converged sampler (`nasenergy.search.redirect`)
        self._known = self._seen if isinstance(self._seen, SeenNetworks) else SeenNetworks(
            components.space, components.key_of, components.covers)
        self._duplicates_in_a_row = 0
        self.redirected = 0
        # budget keeping: settings left at their defaults are off until a budget rescue
        # (`nasenergy.search.rescue`), read from the study as it may have begun elsewhere
        self._rescue = rescue_of(study.user_attrs) if config.budget_rescue else None
        self._redirect_after, yield_after = config.keeping_in_effect(self._rescue is not None)
        # the filter yields rather than leave the budget unspent
        self._yield = FilterYield(yield_after, config.filter_yield_top)
        self._screener = self._make_screener() if config.screen > 1 else None
        self._pool: list[Screened] = []
        self._n_kept = 0  # the first _n_kept of the pool were kept from the last screening
        self._round_measured = 0  # candidates measured since the last screening
        self._unlearnable_seen: set[str] = set()  # census keys that cannot learn, found in the claims

    # ------------------------------------------------------------------ loop

    def run(self) -> WorkerResult:
        """Work until the budget is finished, the candidate cap or the stall guard stops the
        study, or `stop` is set."""
        try:
            return self._loop()
        except BaseException:
            self._drain_pool(oc.ABANDONED, "the worker stopped before the screened candidates were settled")
            raise

    def _loop(self) -> WorkerResult:
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
                    self._finish_orphan(orphan)
                    continue
            self._follow_rescue()
            if self._exhausted(status):
                if self._reopen_rejected():
                    continue
                if self._begin_rescue():
                    continue
                if self._settle_early():
                    continue
                return WorkerResult("exhausted", self._handled)
            if status.claimed >= status.budget:
                if self._pool:  # the slots went to other workers: these can no longer be evaluated
                    self._drain_pool(oc.OVER_BUDGET, "the budget was spent before it was screened")
                time.sleep(POLL_S)  # every slot is held by a live worker: wait for them
                continue
            trials = proposed_trials(self.study)
            if len(trials) >= self.cap:
                if self._settle_early():
                    continue
                return WorkerResult("max_candidates", self._handled)
            if is_stalled(trials, self.config.patience, candidates_after(self._rescue)):
                if self._settle_early():
                    continue
                if self._begin_rescue(trials):
                    continue
                return WorkerResult("stalled", self._handled)
            if self._rescue is None and self.config.rescue_possible and is_trickling(trials, self.config.patience):
                self._begin_rescue(trials)  # off or nothing to switch on: search on as before
            self._learn(trials)
            self._seen.update(trials)
            if self._known is not self._seen:
                self._known.update(trials)
            outcome = self._candidate()
            self._handled += 1
            self.on_candidate(outcome)

    def _follow_rescue(self) -> None:
        """Switch to the budget rescue when another worker began it (read at each candidate)."""
        if self._rescue is None and self.config.rescue_possible:
            began = rescue_of(self.study.user_attrs)
            if began is not None:
                self._switch_on(began)

    def _begin_rescue(self, trials: Sequence[FrozenTrial] | None = None) -> bool:
        """Begin the budget rescue for the whole study instead of stopping (``False`` when it is
        off, has nothing to switch on, or began already)."""
        if self._rescue is not None or not self.config.rescue_possible:
            return False
        trials = proposed_trials(self.study) if trials is None else trials
        evaluations = sum(1 for t in trials if t.user_attrs.get(tr.OUTCOME) == oc.EVALUATED)
        newest = max((t.number for t in trials), default=-1)
        self._switch_on(begin_rescue(self.study, newest, len(trials), evaluations))
        return True

    def _switch_on(self, began: dict[str, int]) -> None:
        """Apply the budget keeping settings of a rescue that began at ``began``."""
        self._rescue = began
        self._redirect_after, yield_after = self.config.keeping_in_effect(True)
        self._yield = FilterYield(yield_after, self.config.filter_yield_top)
        self._duplicates_in_a_row = 0

    def _stopping(self, reason: str, outcome: str) -> WorkerResult:
        """Close the screening pool's trials as ``outcome`` and stop for ``reason``."""
        self._drain_pool(outcome, f"the worker stopped ({reason}) before it was screened")
        return WorkerResult(reason, self._handled)

    def _exhausted(self, status: BudgetStatus) -> bool:
        """Whether every network the study can evaluate has been seen (a new candidate can then
        only be a duplicate or not recorded) while budget slots are still free: every class of a
        partial recorded profile, else every network of the census that can learn
        (`Components.census`; the networks that cannot learn are recorded as filtered once seen)."""
        if status.claimed >= status.budget:
            return False
        seen = status.done + status.running + status.failed + status.filtered
        coverage = self.components.coverage
        if coverage is not None and not coverage.complete:
            return seen >= coverage.covered_classes
        census = self.components.census
        if census is None or seen < census.learnable:
            return False
        # claims are only forgotten when a study is opened, so only keys not found yet are looked up again
        self._unlearnable_seen.update(key for key in census.cannot_learn - self._unlearnable_seen
                                      if self.claims.lookup(key) is not None)
        return seen - len(self._unlearnable_seen) >= census.learnable

    # ------------------------------------------------------------- candidate

    def _candidate(self) -> str:
        from optuna.exceptions import UpdateFinishedTrialError

        space = self.components.space
        trial = self.study.ask()
        try:
            arch = space.suggest(trial)
            key = self.components.key_of(arch)
            trial.set_user_attr(tr.CANDIDATE, self._identity(arch, key))
            cell = self.claims.lookup(key)
            if cell is not None and cell.status == FILTERED and REOPENED_FROM in trial.user_attrs:
                return self._evaluate_rejected(trial, arch, key)
            if cell is not None:
                outcome = self._answer_duplicate(trial.number, cell)
                self._after_duplicate(trial.number, trial.params)
                return outcome
            self._duplicates_in_a_row = 0
            covered = self.components.covers is None or self.components.covers(arch)
            if covered and not self._learns(arch):  # (one a profile lacks stays not_recorded)
                self.claims.record(key, str(arch), trial.number, FILTERED)  # repeats are duplicates
                self._constrain(trial.number, CANNOT_LEARN, 1.0)
                return self._tell(trial.number, oc.INFEASIBLE, self._states.PRUNED, {tr.ERROR: CANNOT_LEARN_REASON})
            try:
                measurement = self.components.measure(arch)
            except NotRecordedError as exc:
                self.claims.record(key, str(arch), trial.number, NOT_RECORDED)  # repeats say so too
                return self._tell(trial.number, oc.NOT_RECORDED, self._states.PRUNED, {tr.ERROR: str(exc)})
            except NasEnergyError as exc:
                if not is_candidate_error(exc):
                    raise
                self.claims.record(key, str(arch), trial.number, FAILED)  # repeats are duplicates
                return self._tell(trial.number, oc.FAILED, self._states.FAIL, {tr.ERROR: str(exc)})
            features = self._features_of(arch)
            decision = self._yield.consider(
                self.components.filter.admit(measurement, self._front.points, features=features))
            record_decision(trial, decision, measurement)
            self._round_measured += 1
            if not decision.admit:
                self.claims.record(key, str(arch), trial.number, FILTERED)
                outcome = self._tell(trial.number, oc.FILTERED, self._states.PRUNED)
            elif self._screener is not None:
                self._pool.append(Screened(measurement, features, _Pooled(trial.number, arch, key, decision),
                                           self._group_of(arch)))
                outcome = oc.RUNNING  # its trial stays open until it is screened
            else:
                return self._claim_and_evaluate(trial.number, arch, key, measurement)
            if self._pool and self._round_measured >= self.config.screen:
                settled = self._settle_pool()
                if outcome == oc.RUNNING:
                    return settled
                self.on_candidate(settled)
            return outcome
        except UpdateFinishedTrialError:
            return LOST  # another process closed this trial (the study spent its budget meanwhile)
        except NasEnergyError as exc:
            self._abandon(trial.number, str(exc))
            raise
        except BaseException as exc:
            self._abandon(trial.number, f"{type(exc).__name__}: {exc}".strip())
            raise

    def _claim_and_evaluate(self, number: int, arch: Arch, key: str, measurement: Measurement) -> str:
        """Steps 4-7 for an admitted candidate."""
        claim = self.claims.claim(key, str(arch), number)
        if claim.kind == "exists":
            return self._answer_duplicate(number, claim.cell)
        if claim.kind == "budget_full":
            return self._tell(number, oc.OVER_BUDGET, self._states.FAIL)
        return self._evaluate(number, arch, key, measurement)

    # ------------------------------------------------------------- screening

    def _make_screener(self) -> Screener:
        """The screener of ``--screen``: hardware figures from the filter's optimistic bound at
        the optimal clock where it has one (the modelled figures themselves under a modelled DVFS
        step), else the default-clock measurement."""
        bound = getattr(self.components.filter, "energy_bound", None)

        def hardware(m: Measurement) -> tuple[float, float]:
            if bound is not None:
                opt = optimistic_figures(bound, m)
                return opt.throughput_img_per_s_upper, opt.energy_j_per_img_lower
            return m.throughput_img_per_s, math.nan if m.energy_j_per_img is None else m.energy_j_per_img

        return Screener(tuple(self.config.objectives), hardware, seed=self.config.seed,
                        cheap_columns=cheap_columns(self.config.filter_features))

    def _group_of(self, arch: Arch | str) -> str | None:
        """The screener's group of ``arch``: the structure of its deployed network where the space
        defines one (`Screened.group`)."""
        deployed_key = getattr(self.components.space, "deployed_key", None)
        return None if deployed_key is None else str(deployed_key(arch))

    def _settle_pool(self) -> str:
        """Screen the pool: a candidate the filter now rejects (another worker's evaluations moved
        the front since it was admitted) is told filtered; the one the screener ranks first is
        evaluated; the others are told screened out."""
        from optuna.exceptions import UpdateFinishedTrialError  # lazy: optuna is imported once a search runs

        assert self._screener is not None
        # this round's candidates first (the cold start evaluates the sampler's first proposal), then those kept
        pool = self._pool[self._n_kept:] + self._pool[:self._n_kept]
        self._pool, self._n_kept = [], 0
        self._round_measured = 0
        try:
            pool = [c for c in pool if self._still_admitted(c)]
            if not pool:
                return oc.FILTERED
            ranking = self._screener.choose(pool)
            chosen = pool[ranking.chosen]
            self._pool = [pool[i] for i in ranking.kept]  # their trials stay open for the next screening
            self._n_kept = len(self._pool)
            for i, cand in enumerate(pool):
                if i != ranking.chosen and i not in ranking.kept:
                    self._dismiss(cand, ranking.reason)
            p = chosen.payload
            if len(pool) > 1:
                reason = f"{p.decision.reason}; chosen by screening among {len(pool)} measured candidates"
                decision = dataclasses.replace(p.decision, reason=reason)
                self._trials.set_attrs(p.number, {CHEAP_ATTR: cheap_attr(chosen.measurement, decision)})
            return self._claim_and_evaluate(p.number, p.arch, p.key, chosen.measurement)
        except UpdateFinishedTrialError:
            return LOST
        except BaseException as exc:
            self._pool, self._n_kept = [], 0
            for cand in pool:
                self._abandon(cand.payload.number, f"{type(exc).__name__}: {exc}".strip())
            raise

    def _still_admitted(self, cand: Screened) -> bool:
        """Ask the filter again about a pooled candidate (against the current front); a rejected
        one is told filtered as the filter's own rejects are."""
        p = cand.payload
        if p.decision.n_observed == getattr(self.components.filter, "n_observed", None):
            return True  # nothing learnt since it was admitted
        decision = self.components.filter.admit(cand.measurement, self._front.points, features=cand.features)
        if decision.admit:
            return True
        self.claims.record(p.key, str(p.arch), p.number, FILTERED)
        self._tell(p.number, oc.FILTERED, self._states.PRUNED, {CHEAP_ATTR: cheap_attr(cand.measurement, decision)})
        return False

    def _dismiss(self, cand: Screened, reason: str) -> None:
        """Tell a screened-out candidate ``filtered``, its decision saying why. Its trial ends
        ``FAIL``, which Optuna's samplers leave out of their models: the filter admitted it, so
        telling it ``PRUNED`` (what TPE reads as a poor candidate) would teach the sampler that
        the promising region it came from is poor."""
        p = cand.payload
        decision = dataclasses.replace(p.decision, admit=False, reason=reason)
        self.claims.record(p.key, str(p.arch), p.number, FILTERED)
        self._tell(p.number, oc.FILTERED, self._states.FAIL, {CHEAP_ATTR: cheap_attr(cand.measurement, decision)})

    def _settle_early(self) -> bool:
        """A guard is about to stop the worker: evaluate the best pooled candidate first, if any.
        Returns whether there was a pool."""
        if not self._pool:
            return False
        self.on_candidate(self._settle_pool())
        return True

    def _drain_pool(self, outcome: str, message: str) -> None:
        """Close every pooled trial as ``outcome`` (``FAIL``; never raises)."""
        pool, self._pool, self._n_kept = self._pool, [], 0
        for cand in pool:
            try:
                self._tell(cand.payload.number, outcome, self._states.FAIL, {tr.ERROR: message})
            except Exception:  # the storage may be what failed; close_abandoned_trials repairs it
                pass

    def _evaluate(
        self, number: int, arch: Arch, key: str, measurement: Measurement, *, seed_number: int | None = None
    ) -> str:
        """Steps 5-7 for a claimed network; closes the claim whatever happens.

        ``seed_number``: the trial number the evaluation seed derives from (default ``number``;
        an adopted claim keeps its original trial's seed).
        """
        seed = evaluation_seed(self.config.seed, number if seed_number is None else seed_number)
        try:
            evaluation = self.components.oracle.evaluate(arch, self.config.dataset, seed=seed)
            final = self._final(arch)
            clock = self.components.optimal_clock(arch, measurement) if self.components.optimal_clock else None
            scored = self._scored(measurement, evaluation, clock)
        except NasEnergyError as exc:
            if not is_candidate_error(exc):
                self.claims.release(key)
                raise
            if not self.claims.finish(key, FAILED, trial_number=number):
                return self._discard(number, key)
            return self._tell(number, oc.FAILED, self._states.FAIL, {tr.ERROR: str(exc)})
        except BaseException:
            self.claims.release(key)
            raise
        if not self.claims.owns(key):
            return self._discard(number, key)
        if self.config.min_accuracy is not None:  # > 0: infeasible, and the sampler learns it
            self._constrain(number, MIN_ACCURACY, float(self.config.min_accuracy) - scored["accuracy_pct"])
        values = [scored[o.column] for o in self.objectives]
        result = {tr.RESULT: tr.result_attr(evaluation, scored, clock, seed=seed, final=final)}
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            outcome = self._tell(number, oc.EVALUATED, self._states.COMPLETE, result, values)
        except UpdateFinishedTrialError:  # the worker that took the claim over told it first
            return self._settle_finished(number, key)
        self.claims.finish(key, DONE, trial_number=number)
        return outcome

    def _settle_finished(self, number: int, key: str) -> str:
        """This worker's claimed trial was finished by another worker: close the claim if it is
        still this worker's (the other worker's result stands), else discard this result."""
        trial = self._trials.get(number)
        if trial.state == self._states.COMPLETE and self.claims.finish(key, DONE):
            return oc.EVALUATED
        if trial.state != self._states.COMPLETE:
            self.claims.release(key)  # its trial was closed unfinished: the slot goes back
        return self._discard(number, key)

    def _discard(self, number: int, key: str) -> str:
        """Drop the result of a claim another worker took over, with one line."""
        logger.warning(
            "note: trial %s: another worker took over the claim on %s while this worker was silent for longer "
            "than --lease-s (%s s); this worker's result is discarded (the network is counted once)",
            number, key, f"{self.config.lease_s:g}",
        )
        return LOST

    def _final(self, arch: Arch) -> dict[str, Any]:
        """The oracle's final reported figure (``report``), or ``{"error": ...}`` when it has none:
        it is reported beside the objectives, never searched on, so its absence fails nothing."""
        report = getattr(self.components.oracle, "report", None)
        if report is None:
            return {"error": f"{type(self.components.oracle).__name__} has no report method"}
        try:
            return report(arch, self.config.dataset).as_dict()
        except NasEnergyError as exc:
            return {"error": str(exc)[:500]}

    def _scored(self, measurement: Measurement, evaluation: Evaluation, clock: OptimalClock | None) -> dict[str, Any]:
        """The objective figures: throughput and energy at the optimal clock (else the default)."""
        if clock is not None:
            throughput, energy = clock.best.throughput_img_per_s, clock.best.energy_j_per_img
            source = str(clock.source)
            thr_source = energy_source = source
        else:
            throughput, energy = measurement.throughput_img_per_s, measurement.energy_j_per_img
            thr_source = energy_source = measurement.source
        if "energy" in self.config.objectives and (energy is None or not math.isfinite(float(energy))):
            raise EnergyUnavailableError(
                f"energy per image is unavailable from the {measurement.device_name} meter; leave energy "
                "out of --objectives (e.g. --objectives accuracy,throughput) or measure on a GPU"
            )
        return {
            "accuracy_pct": float(evaluation.accuracy_pct),
            "throughput_img_per_s": float(throughput),
            "energy_j_per_img": None if energy is None else float(energy),
            "throughput_source": thr_source,
            "energy_source": energy_source if energy is not None else None,
        }

    # ------------------------------------------------------------ duplicates

    def _answer_duplicate(self, number: int, cell: Cell) -> str:
        """Answer a known network from its earlier trial (waiting while it is still evaluated)."""
        while cell.status == RUNNING:
            if self.stop.is_set():
                return self._tell(number, oc.ABANDONED, self._states.FAIL, {tr.DUPLICATE_OF: cell.trial_number})
            orphan = self.claims.adopt_orphan()
            if orphan is not None:
                self._finish_orphan(orphan)
            else:
                time.sleep(POLL_S)
            cell = self.claims.lookup(cell.canonical) or cell
        original = self._trials.get(cell.trial_number)
        attrs = {k: v for k, v in original.user_attrs.items() if k not in tr.IDENTITY_ATTRS and k not in (REDIRECTED_FROM, REOPENED_FROM)}
        attrs[tr.DUPLICATE_OF] = cell.trial_number
        for name, value in original.constraints.items():  # a repeat of an infeasible network is infeasible too
            self._constrain(number, name, value)
        if cell.status == NOT_RECORDED:
            return self._tell(number, oc.NOT_RECORDED, self._states.PRUNED, attrs)
        state = self._states.FAIL if cell.status == FAILED else self._states.PRUNED
        return self._tell(number, oc.DUPLICATE, state, attrs)

    def _after_duplicate(self, number: int, params: dict[str, Any]) -> None:
        """Count a duplicate proposal; after ``redirect_after`` in a row (in effect; 0: never), enqueue
        `REDIRECT_BATCH` networks not yet seen near it (`nasenergy.search.redirect.nearby_unseen`)
        for the study's next trials."""
        self._duplicates_in_a_row += 1
        if self._redirect_after <= 0 or self._duplicates_in_a_row < self._redirect_after:
            return
        self._duplicates_in_a_row = 0
        space = self.components.space
        choices = space.param_choices()
        if not all(name in params for name in choices):
            return
        rng = redirect_rng(self.config.seed, number)
        taken: set[str] = set()

        def is_new(candidate: dict[str, Any]) -> bool:
            return self._is_new(candidate) and self._known.network(candidate) not in taken

        for i in range(REDIRECT_BATCH):
            found = nearby_unseen(choices, params, is_new, rng)
            if found is None:
                if i == 0:  # no unseen network is left to find: yield on a rejected one instead
                    self._enqueue_rejected()
                break
            taken.add(self._known.network(found))
            self.study.enqueue_trial(found, user_attrs={REDIRECTED_FROM: number})
            self.redirected += 1

    def _enqueue_rejected(self) -> bool:
        """Enqueue the most promising network the filter rejected (`most_promising_rejected`) for
        the study's next trial, to be evaluated as yielded; ``False`` when the yield is off or none
        is left."""
        if self._yield.after <= 0:
            return False
        chosen = most_promising_rejected(self.study.get_trials(deepcopy=False))
        if chosen is None:
            return False
        self.study.enqueue_trial(dict(chosen.params), user_attrs={REOPENED_FROM: chosen.number})
        return True

    def _reopen_rejected(self) -> bool:
        """With every network the study can evaluate seen and budget left, let the filter yield on
        the most promising network it rejected (`nasenergy.search.filter_yield`): enqueue it and
        handle the next candidate. ``False`` when the yield is off or no rejected network is left."""
        if not self._enqueue_rejected():
            return False
        self._learn(proposed_trials(self.study))
        outcome = self._candidate()
        self._handled += 1
        self.on_candidate(outcome)
        return True

    def _evaluate_rejected(self, trial: Any, arch: Arch, key: str) -> str:
        """Evaluate a network the filter rejected earlier (`_reopen_rejected`), from the measurement
        its filtered trial stored: its decision is recorded as yielded."""
        original = self._trials.get(int(trial.user_attrs[REOPENED_FROM]))
        stored, decision = tr.measurement_of(original), decision_of(original)
        measurement = Measurement.from_dict(stored) if stored else self.components.measure(arch)
        reason = f"{(decision or {}).get('reason') or 'rejected'}; {REOPEN_REASON}"
        trial.set_user_attr(CHEAP_ATTR, {"measurement": measurement.to_dict(),
                                         "decision": {**(decision or {}), "admit": True, "reason": reason}})
        claim = self.claims.reopen(key, trial.number)
        if claim.kind == "budget_full":
            return self._tell(trial.number, oc.OVER_BUDGET, self._states.FAIL)
        if claim.kind == "exists":
            if claim.cell is None:  # forgotten meanwhile: a new network again
                return self._claim_and_evaluate(trial.number, arch, key, measurement)
            return self._answer_duplicate(trial.number, claim.cell)
        return self._evaluate(trial.number, arch, key, measurement)

    def _is_new(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` name a network worth proposing: unseen, covered, able to learn."""
        if self._known(params):  # seen, or outside a partial profile
            return False
        arch = self.components.space.arch_from_params(params)
        return self._learns(arch) and self.claims.lookup(self.components.key_of(arch)) is None

    # --------------------------------------------------------------- orphans

    def _finish_orphan(self, cell: Cell) -> None:
        """Finish a claim whose worker died: evaluate its network and tell its trial."""
        original = self._trials.get(cell.trial_number)
        if original.state == self._states.COMPLETE:  # it died after telling, before closing
            self.claims.finish(cell.canonical, DONE)
            return
        arch = self.components.space.parse(cell.arch)
        number = cell.trial_number
        if original.state != self._states.RUNNING:  # its trial was closed: record a fresh one
            keep = tuple(k for k in original.user_attrs if k not in (tr.OUTCOME, tr.ERROR))
            number = self._trials.create_running_copy(original, keep)
        identity = self._identity(arch, cell.canonical)
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            self._trials.set_attrs(number, {tr.CANDIDATE: identity})
        except UpdateFinishedTrialError:  # its first worker came back and told it meanwhile
            self._settle_finished(number, cell.canonical)
            return
        stored = tr.measurement_of(original)
        # The measurement the filter admitted (a claim is only made after it is stored).
        measurement = Measurement.from_dict(stored) if stored else self.components.measure(arch)
        self._evaluate(number, arch, cell.canonical, measurement, seed_number=cell.trial_number)

    # ---------------------------------------------------------------- helpers

    def _feature_fn(self) -> FeatureFn | None:
        """The extra features of ``--filter-features``: the components' own, else built from the
        config (the structure by default)."""
        if self.components.features is not None:
            return self.components.features
        hardware = self.config.hardware
        if "proxies-live" in self.config.filter_features:  # computed on the GPU where the meter is one
            hardware = resolve_hardware(hardware, None, space_name=getattr(self.components.space, "name", "tss"))
        return extra_features(self.config.filter_features, self.components.space, self.config.dataset, hardware)

    def _features_of(self, arch: Arch | str) -> np.ndarray | None:
        """The extra features the filter and the screener read for ``arch`` (``None``: none)."""
        return None if self._features is None else self._features(arch)

    def _identity(self, arch: Arch, key: str) -> dict[str, Any]:
        """The ``candidate`` attribute of ``arch``, whose network key is ``key``."""
        space = self.components.space
        return tr.candidate_attr(self.claims.worker_id, arch, str(space.canonical(arch)), space.index(arch), key)

    def _learns(self, arch: Arch) -> bool:
        """Whether ``arch``'s network can learn: its output depends on its input image."""
        depends = getattr(self.components.space, "output_depends_on_input", None)
        return True if depends is None else bool(depends(arch))

    def _constrain(self, number: int, name: str, value: float) -> None:
        """Set Optuna constraint ``name`` of trial ``number`` (> 0: infeasible), before it is told,
        so that the samplers (TPE, NSGA-II) learn where the feasible networks are."""
        import optuna

        optuna.trial.Trial(self.study, self._trials.trial_id(number)).set_constraint(name, float(value))

    def _tell(
        self,
        number: int,
        outcome: str,
        state: TrialState,
        attrs: dict[str, Any] | None = None,
        values: Sequence[float] | None = None,
    ) -> str:
        self._trials.set_attrs(number, {**(attrs or {}), tr.OUTCOME: outcome})
        self.study.tell(number, values if state == self._states.COMPLETE else None, state=state, skip_if_finished=True)
        return outcome

    def _abandon(self, number: int, message: str) -> None:
        """Close a trial cut short by an error or an interrupt (never raises)."""
        try:
            self._tell(number, oc.ABANDONED, self._states.FAIL, {tr.ERROR: message[:500]})
        except Exception:  # the storage may be what failed; the trial then stays RUNNING
            pass

    def _learn(self, trials: list[FrozenTrial]) -> None:
        """Teach the filter every evaluation finished since the last call (by any worker) and
        update the Pareto front it is given."""
        new_points = []
        for t in trials:
            if t.number in self._observed or t.state != self._states.COMPLETE:
                continue
            if t.user_attrs.get(tr.OUTCOME) != oc.EVALUATED:
                continue
            self._observed.add(t.number)
            scored = tr.scored_of(t)
            measurement = Measurement.from_dict(tr.measurement_of(t))
            features = self._features_of(t.user_attrs[tr.CANDIDATE]["arch"])
            self.components.filter.observe(
                measurement,
                scored["accuracy_pct"],
                features=features,
                throughput_img_per_s=scored.get("throughput_img_per_s"),
                energy_j_per_img=scored.get("energy_j_per_img"),
            )
            row = [scored[o.column] for o in self.objectives]
            if self._screener is not None:
                self._screener.observe(measurement, features, row, self._group_of(t.user_attrs[tr.CANDIDATE]["arch"]))
            if self.config.min_accuracy is None or scored["accuracy_pct"] >= self.config.min_accuracy:
                new_points.append(row)  # a network below --min-accuracy never stands on the front
        if new_points:
            self._front.extend(np.asarray(new_points, dtype=float))
