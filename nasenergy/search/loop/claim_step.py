"""Step 4 of a candidate: its network's budget claim.

An admitted network is claimed (atomic across workers, see `nasenergy.search.storage.claims`) and
evaluated; when the budget is spent it is recorded ``over_budget``. A network another trial holds
the claim on is answered from that trial (a *duplicate*, waiting while it is still evaluated and
finishing orphaned claims meanwhile), and a claim whose worker died (an *orphan*) is finished by
evaluating its network.
"""

from __future__ import annotations

import time

from nasenergy.measurement import Measurement
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.search.loop.evaluation_step import EvaluationStep
from nasenergy.search.loop.filter_yield import REOPENED_FROM
from nasenergy.search.loop.redirect import REDIRECTED_FROM
from nasenergy.search.loop.worker_context import POLL_S, WorkerContext
from nasenergy.search.storage.claims import DONE, FAILED, NOT_RECORDED, RUNNING, Cell
from search_spaces import Arch


class ClaimStep:
    """Claims, answers duplicates and finishes orphaned claims for one worker."""

    def __init__(self, ctx: WorkerContext, evaluation: EvaluationStep) -> None:
        self.ctx = ctx
        self.evaluation = evaluation

    def claim_and_evaluate(self, number: int, arch: Arch, key: str, measurement: Measurement) -> str:
        """Steps 4-7 for an admitted candidate."""
        ctx = self.ctx
        claim = ctx.claims.claim(key, str(arch), number)
        if claim.kind == "exists":
            if claim.cell is None:
                raise RuntimeError(f"the claims store answered 'exists' for {key} without its cell")
            return self.answer_duplicate(number, claim.cell)
        if claim.kind == "budget_full":
            return ctx.tell(number, oc.OVER_BUDGET, ctx.states.FAIL)
        return self.evaluation.evaluate(number, arch, key, measurement)

    def answer_duplicate(self, number: int, cell: Cell) -> str:
        """Answer a known network from its earlier trial (waiting while it is still evaluated)."""
        ctx = self.ctx
        states = ctx.states
        while cell.status == RUNNING:
            if ctx.stop.is_set():
                return ctx.tell(number, oc.ABANDONED, states.FAIL, {tr.DUPLICATE_OF: cell.trial_number})
            orphan = ctx.claims.adopt_orphan()
            if orphan is not None:
                self.finish_orphan(orphan)
            else:
                time.sleep(POLL_S)
            cell = ctx.claims.lookup(cell.canonical) or cell
        original = ctx.trials.get(cell.trial_number)
        attrs = {k: v for k, v in original.user_attrs.items() if k not in tr.IDENTITY_ATTRS and k not in (REDIRECTED_FROM, REOPENED_FROM)}
        attrs[tr.DUPLICATE_OF] = cell.trial_number
        for name, value in original.constraints.items():  # a repeat of an infeasible network is infeasible too
            ctx.constrain(number, name, value)
        if cell.status == NOT_RECORDED:
            return ctx.tell(number, oc.NOT_RECORDED, states.PRUNED, attrs)
        state = states.FAIL if cell.status == FAILED else states.PRUNED
        return ctx.tell(number, oc.DUPLICATE, state, attrs)

    def finish_orphan(self, cell: Cell) -> None:
        """Finish a claim whose worker died: evaluate its network and tell its trial."""
        ctx = self.ctx
        original = ctx.trials.get(cell.trial_number)
        if original.state == ctx.states.COMPLETE:  # it died after telling, before closing
            ctx.claims.finish(cell.canonical, DONE)
            return
        arch = ctx.components.space.parse(cell.arch)
        number = cell.trial_number
        if original.state != ctx.states.RUNNING:  # its trial was closed: record a fresh one
            keep = tuple(k for k in original.user_attrs if k not in (tr.OUTCOME, tr.ERROR))
            number = ctx.trials.create_running_copy(original, keep)
        identity = ctx.identity(arch, cell.canonical)
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            ctx.trials.set_attrs(number, {tr.CANDIDATE: identity})
        except UpdateFinishedTrialError:  # its first worker came back and told it meanwhile
            self.evaluation.settle_finished(number, cell.canonical)
            return
        stored = tr.measurement_of(original)
        # The measurement the filter admitted (a claim is only made after it is stored).
        measurement = Measurement.from_dict(stored) if stored else ctx.components.measure(arch)
        self.evaluation.evaluate(number, arch, cell.canonical, measurement, seed_number=cell.trial_number)
