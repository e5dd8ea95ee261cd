"""Steps 1-3 of a candidate: propose one network and screen it cheaply, then hand it on.

The study is asked for a trial; its architecture's network key decides whether it is a duplicate
(answered from the earlier trial, `nasenergy.search.loop.claim_step`), a network that cannot learn
(recorded ``infeasible``), one a recorded profile lacks (``not_recorded``) or a new one, which is
measured cheaply and put to the filter: rejected ones are told ``filtered``, admitted ones wait in
the screening pool (`nasenergy.search.loop.screening_pool`) or are claimed and evaluated at once.
"""

from __future__ import annotations

from nasenergy.errors import NasEnergyError
from nasenergy.filter.trial_attrs import record_decision
from nasenergy.hardware.recorded import NotRecordedError
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.search.loop.budget_keeping import BudgetKeeping
from nasenergy.search.loop.claim_step import ClaimStep
from nasenergy.search.loop.filter_yield import REOPENED_FROM
from nasenergy.search.loop.screening_pool import ScreeningPool
from nasenergy.search.loop.worker_context import LOST, WorkerContext, is_candidate_error
from nasenergy.search.storage.claims import FAILED, FILTERED, NOT_RECORDED

CANNOT_LEARN = "cannot_learn"
"""The Optuna constraint of a network whose output does not depend on its input (always 1: infeasible)."""
CANNOT_LEARN_REASON = "cannot learn: the network's output does not depend on its input; never evaluated"


class CandidateStep:
    """Handles one new candidate of one worker (`next_candidate`)."""

    def __init__(self, ctx: WorkerContext, claim_step: ClaimStep, keeping: BudgetKeeping, pool: ScreeningPool) -> None:
        self.ctx = ctx
        self.claim_step = claim_step
        self.keeping = keeping
        self.pool = pool

    def next_candidate(self) -> str:
        """Ask the study for a candidate and take it as far as it goes; returns its outcome (``running``:
        it waits in the screening pool)."""
        from optuna.exceptions import UpdateFinishedTrialError

        ctx = self.ctx
        components, claims, states = ctx.components, ctx.claims, ctx.states
        trial = ctx.study.ask()
        try:
            arch = components.space.suggest(trial)
            key = components.key_of(arch)
            trial.set_user_attr(tr.CANDIDATE, ctx.identity(arch, key))
            cell = claims.lookup(key)
            if cell is not None and cell.status == FILTERED and REOPENED_FROM in trial.user_attrs:
                return self.keeping.evaluate_rejected(trial, arch, key)
            if cell is not None:
                outcome = self.claim_step.answer_duplicate(trial.number, cell)
                self.keeping.after_duplicate(trial.number, trial.params)
                return outcome
            self.keeping.duplicates_in_a_row = 0
            covered = components.covers is None or components.covers(arch)
            if covered and not ctx.learns(arch):  # (one a profile lacks stays not_recorded)
                claims.record(key, str(arch), trial.number, FILTERED)  # repeats are duplicates
                ctx.constrain(trial.number, CANNOT_LEARN, 1.0)
                return ctx.tell(trial.number, oc.INFEASIBLE, states.PRUNED, {tr.ERROR: CANNOT_LEARN_REASON})
            try:
                measurement = components.measure(arch)
            except NotRecordedError as exc:
                claims.record(key, str(arch), trial.number, NOT_RECORDED)  # repeats say so too
                return ctx.tell(trial.number, oc.NOT_RECORDED, states.PRUNED, {tr.ERROR: str(exc)})
            except NasEnergyError as exc:
                if not is_candidate_error(exc):
                    raise
                claims.record(key, str(arch), trial.number, FAILED)  # repeats are duplicates
                return ctx.tell(trial.number, oc.FAILED, states.FAIL, {tr.ERROR: str(exc)})
            features = ctx.features_of(arch)
            decision = self.keeping.filter_yield.consider(
                components.filter.admit(measurement, ctx.front.points, features=features))
            record_decision(trial, decision, measurement)
            self.pool.measured()
            if not decision.admit:
                claims.record(key, str(arch), trial.number, FILTERED)
                outcome = ctx.tell(trial.number, oc.FILTERED, states.PRUNED)
            elif self.pool.screener is not None:
                self.pool.add(measurement, features, trial.number, arch, key, decision)
                outcome = oc.RUNNING  # its trial stays open until it is screened
            else:
                return self.claim_step.claim_and_evaluate(trial.number, arch, key, measurement)
            if self.pool.due():
                settled = self.pool.settle()
                if outcome == oc.RUNNING:
                    return settled
                ctx.on_candidate(settled)
            return outcome
        except UpdateFinishedTrialError:
            return LOST  # another process closed this trial (the study spent its budget meanwhile)
        except NasEnergyError as exc:
            ctx.abandon(trial.number, str(exc))
            raise
        except BaseException as exc:
            ctx.abandon(trial.number, f"{type(exc).__name__}: {exc}".strip())
            raise
