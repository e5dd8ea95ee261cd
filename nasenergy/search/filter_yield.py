"""The filter yields when it would keep the budget from being spent.

A filter that rejects almost every new network late in a search (the front is strong, the
candidates near it are dominated by their optimistic figures) leaves the budget unspent: the
stall guard stops the study short. `FilterYield` watches one worker's rejections since its last
admitted candidate and, once there were `YIELD_AFTER` of them, admits the first rejected candidate
at least as promising as the best `YIELD_TOP` share of them (`promise`: the filter's optimistic
accuracy, else its predicted accuracy, else the utilization); after ``3 * YIELD_AFTER``
rejections it admits the next one whatever its promise, so candidates per full evaluation stay
bounded. The yielded decision says so in its reason.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from nasenergy.filter.records import Decision

YIELD_AFTER = 10
"""Rejections in a row (of one worker) after which the filter yields to a promising candidate."""
YIELD_TOP = 0.2
"""The share of the rejected candidates a yielded one must rank among (by `promise`)."""


def promise(decision: Decision) -> float:
    """How promising a rejected candidate is, from what its filter computed: the optimistic
    accuracy bound, else the predicted accuracy, else the utilization (NaN: nothing known)."""
    for value in (decision.accuracy_upper, decision.accuracy_predicted, decision.utilization):
        if value is not None and math.isfinite(float(value)):
            return float(value)
    return math.nan


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
