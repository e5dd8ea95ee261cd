"""The stall guard: whether a study's last candidates brought no new full evaluation, and why.

The guard (``--patience``) stops a study whose last ``patience`` finished candidates brought no
new full evaluation (`candidates_since_evaluation`); `stall_cause` says in one clause what those
candidates were and what to change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial


def candidates_since_evaluation(trials: Sequence[FrozenTrial], after_trial: int = -1) -> int:
    """How many finished candidates came after the study's newest full evaluation.

    Args:
        trials: the study's trials in trial order (``study.get_trials()``).
        after_trial: count only trials numbered above it (a budget rescue restarts the count,
            `nasenergy.search.loop.rescue.candidates_after`).

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


STALL_ADVICE: dict[str, str] = {
    oc.DUPLICATE: "the sampler kept proposing networks the study had seen and no unseen network was found near "
                  "them: few unseen networks are left; lower --budget, or try --sampler random",
    oc.FILTERED: "the filter rejected the new networks: loosen it (--target-recall, --filter none) or lower --budget",
    oc.NOT_RECORDED: "the new networks lie outside the recorded profile: measure on a GPU (--hardware cuda) or "
                     "lower --budget",
    oc.INFEASIBLE: "the new networks cannot learn (output independent of the input): lower --budget",
    oc.FAILED: "the new networks failed to measure or evaluate (see the trials' errors)",
}


STALL_ADVICE_WHEN_OFF: dict[str, str] = {
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
