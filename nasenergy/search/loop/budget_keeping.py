"""Budget keeping for one worker: what keeps a study spending its budget when the sampler or the
filter would leave it unspent.

A worker whose sampler proposed ``--redirect-after`` known networks in a row enqueues a few
networks not yet seen near the last one (`nasenergy.search.loop.redirect`); a filter that rejected
``--filter-yield-after`` candidates in a row yields to the next promising one, and with every
network seen it yields on the most promising one it rejected (`nasenergy.search.loop.filter_yield`).
Settings left at their defaults are off until a budget rescue (`nasenergy.search.loop.rescue`) switches
them on for every worker; the rescue is read from the study, as it may have begun elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nasenergy.filter.trial_attrs import CHEAP_ATTR, decision_of
from nasenergy.measurement import Measurement
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.search.loop.claim_step import ClaimStep
from nasenergy.search.loop.evaluation_step import EvaluationStep
from nasenergy.search.loop.filter_yield import REOPEN_REASON, REOPENED_FROM, FilterYield, most_promising_rejected
from nasenergy.search.loop.redirect import REDIRECT_BATCH, REDIRECTED_FROM, nearby_unseen, redirect_rng
from nasenergy.search.loop.rescue import begin_rescue, rescue_of
from nasenergy.search.loop.worker_context import WorkerContext
from nasenergy.search.sampling.study import proposed_trials
from search_spaces import Arch

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial, Trial


class BudgetKeeping:
    """One worker's redirection, filter yield and budget rescue.

    Attributes:
        rescue: where the study's budget rescue began (`nasenergy.search.loop.rescue.rescue_of`), or
            ``None`` (none began yet, or ``--budget-rescue off``).
        redirect_after: duplicates in a row before redirecting, in effect (0: never).
        filter_yield: the filter's yield, with the setting in effect.
        duplicates_in_a_row: duplicate proposals since the last new network or redirection.
        redirected: networks this worker enqueued by redirection.
    """

    def __init__(self, ctx: WorkerContext, claim_step: ClaimStep, evaluation: EvaluationStep) -> None:
        self.ctx = ctx
        self.claim_step = claim_step
        self.evaluation = evaluation
        config = ctx.config
        self.duplicates_in_a_row = 0
        self.redirected = 0
        self.rescue: dict[str, int] | None = rescue_of(ctx.study.user_attrs) if config.budget_rescue else None
        self.redirect_after, yield_after = config.keeping_in_effect(self.rescue is not None)
        # the filter yields rather than leave the budget unspent
        self.filter_yield = FilterYield(yield_after, config.filter_yield_top)

    # ---------------------------------------------------------------- rescue

    def follow_rescue(self) -> None:
        """Switch to the budget rescue when another worker began it (read at each candidate)."""
        if self.rescue is None and self.ctx.config.rescue_possible:
            began = rescue_of(self.ctx.study.user_attrs)
            if began is not None:
                self._switch_on(began)

    def begin_rescue(self, trials: Sequence[FrozenTrial] | None = None) -> bool:
        """Begin the budget rescue for the whole study instead of stopping (``False`` when it is
        off, has nothing to switch on, or began already)."""
        if self.rescue is not None or not self.ctx.config.rescue_possible:
            return False
        study = self.ctx.study
        trials = proposed_trials(study) if trials is None else trials
        evaluations = sum(1 for t in trials if t.user_attrs.get(tr.OUTCOME) == oc.EVALUATED)
        newest = max((t.number for t in trials), default=-1)
        self._switch_on(begin_rescue(study, newest, len(trials), evaluations))
        return True

    def _switch_on(self, began: dict[str, int]) -> None:
        """Apply the budget keeping settings of a rescue that began at ``began``."""
        self.rescue = began
        self.redirect_after, yield_after = self.ctx.config.keeping_in_effect(True)
        self.filter_yield = FilterYield(yield_after, self.ctx.config.filter_yield_top)
        self.duplicates_in_a_row = 0

    # ------------------------------------------------------------ redirection

    def after_duplicate(self, number: int, params: dict[str, Any]) -> None:
        """Count a duplicate proposal; after ``redirect_after`` in a row (in effect; 0: never), enqueue
        `REDIRECT_BATCH` networks not yet seen near it (`nasenergy.search.loop.redirect.nearby_unseen`)
        for the study's next trials."""
        self.duplicates_in_a_row += 1
        if self.redirect_after <= 0 or self.duplicates_in_a_row < self.redirect_after:
            return
        self.duplicates_in_a_row = 0
        ctx = self.ctx
        choices = ctx.components.space.param_choices()
        if not all(name in params for name in choices):
            return
        rng = redirect_rng(ctx.config.seed, number)
        taken: set[str] = set()

        def is_new(candidate: dict[str, Any]) -> bool:
            return self._is_new(candidate) and ctx.known.network(candidate) not in taken

        for i in range(REDIRECT_BATCH):
            found = nearby_unseen(choices, params, is_new, rng)
            if found is None:
                if i == 0:  # no unseen network is left to find: yield on a rejected one instead
                    self.enqueue_rejected()
                break
            taken.add(ctx.known.network(found))
            ctx.study.enqueue_trial(found, user_attrs={REDIRECTED_FROM: number})
            self.redirected += 1

    def _is_new(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` name a network worth proposing: unseen, covered, able to learn."""
        ctx = self.ctx
        if ctx.known(params):  # seen, or outside a partial profile
            return False
        arch = ctx.components.space.arch_from_params(params)
        return ctx.learns(arch) and ctx.claims.lookup(ctx.components.key_of(arch)) is None

    # ------------------------------------------------------------ filter yield

    def enqueue_rejected(self) -> bool:
        """Enqueue the most promising network the filter rejected (`most_promising_rejected`) for
        the study's next trial, to be evaluated as yielded; ``False`` when the yield is off or none
        is left."""
        if self.filter_yield.after <= 0:
            return False
        chosen = most_promising_rejected(self.ctx.study.get_trials(deepcopy=False))
        if chosen is None:
            return False
        self.ctx.study.enqueue_trial(dict(chosen.params), user_attrs={REOPENED_FROM: chosen.number})
        return True

    def evaluate_rejected(self, trial: Trial | FrozenTrial, arch: Arch, key: str) -> str:
        """Evaluate a network the filter rejected earlier (enqueued by `enqueue_rejected`), from the
        measurement its filtered trial stored: its decision is recorded as yielded."""
        ctx = self.ctx
        original = ctx.trials.get(int(trial.user_attrs[REOPENED_FROM]))
        stored, decision = tr.measurement_of(original), decision_of(original)
        measurement = Measurement.from_dict(stored) if stored else ctx.components.measure(arch)
        reason = f"{(decision or {}).get('reason') or 'rejected'}; {REOPEN_REASON}"
        trial.set_user_attr(CHEAP_ATTR, {"measurement": measurement.to_dict(),
                                         "decision": {**(decision or {}), "admit": True, "reason": reason}})
        claim = ctx.claims.reopen(key, trial.number)
        if claim.kind == "budget_full":
            return ctx.tell(trial.number, oc.OVER_BUDGET, ctx.states.FAIL)
        if claim.kind == "exists":
            if claim.cell is None:  # forgotten meanwhile: a new network again
                return self.claim_step.claim_and_evaluate(trial.number, arch, key, measurement)
            return self.claim_step.answer_duplicate(trial.number, claim.cell)
        return self.evaluation.evaluate(trial.number, arch, key, measurement)
