"""The filter yields after many rejections in a row, to a promising candidate, and within a bound."""

from __future__ import annotations

import math

from nasenergy.filter.records import Decision
from nasenergy.search.filter_yield import FilterYield


def _rejected(upper: float) -> Decision:
    return Decision(admit=False, reason="dominated", mode="dominance", utilization=0.5, accuracy_upper=upper)


def test_it_yields_to_a_candidate_among_the_most_promising_rejected():
    rule = FilterYield(after=10, top=0.1)
    for i in range(10):
        assert not rule.consider(_rejected(float(i))).admit  # 0..9 rejected: the bar is the 90% quantile
    assert not rule.consider(_rejected(5.0)).admit
    chosen = rule.consider(_rejected(9.5))
    assert chosen.admit and "yields after 11 rejections" in chosen.reason and rule.yielded == 1
    assert not rule.consider(_rejected(100.0)).admit  # the count starts again


def test_an_admission_resets_the_count_and_the_bound_holds():
    rule = FilterYield(after=5)
    for _ in range(4):
        rule.consider(_rejected(1.0))
    rule.consider(Decision(admit=True, reason="ok", mode="dominance", utilization=0.5))
    assert not any(rule.consider(_rejected(1.0)).admit for _ in range(5))
    # never promising enough: admitted anyway after 3 * after rejections
    outcomes = [rule.consider(_rejected(-1.0 - i)).admit for i in range(20)]
    assert outcomes.index(True) == 3 * 5 - 5
    assert not FilterYield(after=0).consider(_rejected(math.inf)).admit  # 0 turns it off
