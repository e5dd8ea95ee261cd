"""What happened to a candidate: the one declaration of the ``outcome`` values.

==================  ==========================================================================
outcome             meaning
==================  ==========================================================================
``evaluated``       fully evaluated (spent one unit of budget)
``filtered``        the filter skipped it (cheap figures only)
``duplicate``       a duplicate of an earlier canonical network (its figures repeated)
``not_recorded``    not in the recorded profile (not measured, no budget spent)
``infeasible``      cannot learn: its output does not depend on its input (never evaluated)
``failed``          its measurement or evaluation failed (`nasenergy.errors.CandidateError`)
``over_budget``     measured, but the budget was already spent
``abandoned``       abandoned by a worker that died or was interrupted
``running``         still running
==================  ==========================================================================
"""

from __future__ import annotations

EVALUATED = "evaluated"
FILTERED = "filtered"
DUPLICATE = "duplicate"
NOT_RECORDED = "not_recorded"
INFEASIBLE = "infeasible"
FAILED = "failed"
OVER_BUDGET = "over_budget"
ABANDONED = "abandoned"
RUNNING = "running"

OUTCOMES: tuple[str, ...] = (EVALUATED, FILTERED, DUPLICATE, NOT_RECORDED, INFEASIBLE, FAILED, OVER_BUDGET, ABANDONED,
                             RUNNING)
"""Every outcome, in the order the report lists them."""

__all__ = [
    "ABANDONED",
    "DUPLICATE",
    "EVALUATED",
    "FAILED",
    "FILTERED",
    "INFEASIBLE",
    "NOT_RECORDED",
    "OUTCOMES",
    "OVER_BUDGET",
    "RUNNING",
]
