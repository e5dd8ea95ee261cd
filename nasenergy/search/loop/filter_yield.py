"""The filter yields when it would keep the budget from being spent.

A filter that rejects almost every new network late in a search (the front is strong, the
candidates near it are dominated by their optimistic figures) leaves the budget unspent: the
stall guard stops the study short. `FilterYield` watches one worker's rejections since its last
admitted candidate and, once there were ``after`` of them (``--filter-yield-after``), admits the
first rejected candidate at least as promising as the best ``top`` share of them
(``--filter-yield-top``; `promise`: the filter's optimistic accuracy, else its predicted accuracy,
else the utilization); after ``3 * after`` rejections it admits the next one whatever its
promise, so candidates per full evaluation stay bounded. The yielded decision says so in its reason.

When every network the study can evaluate has been seen and budget is left (every network a
partial recorded profile holds, or every network of the space that can learn), no new candidate
can be evaluated: the filter then yields on the networks it rejected, most promising first
(`most_promising_rejected`); the worker enqueues such a network's parameters marked
`REOPENED_FROM`, and the trial that proposes it is evaluated from the stored measurement. A
redirection that finds no unseen network near a repeated proposal (`nasenergy.search.loop.redirect`)
does the same. With ``--filter-yield-after 0`` none of this happens.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from nasenergy.filter.records import Decision
from nasenergy.filter.trial_attrs import decision_of, measurement_of
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr

YIELD_AFTER = 10
"""Default of ``--filter-yield-after`` (`SearchConfig.filter_yield_after`): rejections in a row (of
one worker) after which the filter yields to a promising candidate; 0: it never yields."""
YIELD_TOP = 0.2
"""Default of ``--filter-yield-top``: the share of the rejected candidates a yielded one must rank
among (by `promise`)."""


YIELD_TEXT = "the filter yields"
"""Part of the reason of every decision the filter yielded on (in a row, or on a reopened network)."""
REOPENED_FROM = "reopened_from"
"""User attribute of an enqueued trial: the number of the filtered trial whose network it evaluates."""
REOPEN_REASON = ("the filter yields: every network the study could find was seen with budget left, "
                 "and this rejected one ranks first by its optimistic accuracy")


def promise(decision: Decision | Mapping[str, Any]) -> float:
    """How promising a rejected candidate is, from what its filter computed (a `Decision` or its
    stored dict): the optimistic accuracy bound, else the predicted accuracy, else the utilization
    (NaN: nothing known)."""
    get = decision.get if isinstance(decision, Mapping) else (lambda name: getattr(decision, name))
    for name in ("accuracy_upper", "accuracy_predicted", "utilization"):
        value = get(name)
        if value is not None and math.isfinite(float(value)):
            return float(value)
    return math.nan


def most_promising_rejected(trials: Iterable[Any]) -> Any | None:
    """The filtered trial whose network the filter should yield on next, or ``None``.

    Among ``trials`` (the study's, ``WAITING`` ones included) those told ``filtered`` with a stored
    measurement and decision, whose network no trial has reopened yet (`REOPENED_FROM`), the one
    of highest `promise` (ties: the earlier trial; NaN last).
    """
    trials = list(trials)
    reopened = {t.user_attrs[REOPENED_FROM] for t in trials if REOPENED_FROM in t.user_attrs}
    best, best_score = None, -math.inf
    for t in trials:
        if t.user_attrs.get(tr.OUTCOME) != oc.FILTERED or t.number in reopened or not t.params:
            continue
        decision = decision_of(t)
        if decision is None or measurement_of(t) is None:
            continue
        score = promise(decision)
        score = -math.inf if math.isnan(score) else score
        if best is None or score > best_score:
            best, best_score = t, score
    return best


class FilterYield:
    """One worker's yield rule (see the module's description).

    Attributes:
        yielded: how many rejections it turned into admissions.
    """

    def __init__(self, after: int = YIELD_AFTER, top: float = YIELD_TOP) -> None:
        self.after = int(after)
        self.top = float(top)
        self.yielded = 0
        self._scores: list[float] = []

    def consider(self, decision: Decision) -> Decision:
        """``decision`` as the filter made it, or, for a rejection the filter yields on, admitted."""
        if decision.admit:
            self._scores.clear()
            return decision
        score = promise(decision)
        n = len(self._scores)
        if self.after > 0 and n >= self.after:
            known = [s for s in self._scores if not math.isnan(s)]
            bar = float(np.quantile(known, 1.0 - self.top)) if known else math.nan
            if n >= 3 * self.after or math.isnan(bar) or (not math.isnan(score) and score >= bar):
                self._scores.clear()
                self.yielded += 1
                why = (f"the filter yields after {n} rejections in a row: this candidate ranks among the most "
                       f"promising {self.top:.0%} of them" if n < 3 * self.after else
                       f"the filter yields after {n} rejections in a row")
                return dataclasses.replace(decision, admit=True, reason=f"{decision.reason}; {why}")
        self._scores.append(score)
        return decision
