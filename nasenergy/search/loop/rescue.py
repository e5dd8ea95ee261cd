"""The budget rescue: budget keeping switched on when a search stalls.

A search at its defaults runs without the budget keeping mechanisms (`nasenergy.search.loop.redirect`,
`nasenergy.search.loop.filter_yield`), so a run that fills its budget on its own runs exactly as it
would without them. When the stall guard's condition first holds (``--patience`` candidates in a
row without a new full evaluation), or every network a partial profile holds has been seen with
budget left, a worker does not stop: it records the moment in the study (`RESCUE_ATTR`), and every
worker that reads it at its next candidate switches the settings left at their defaults on
(`SearchConfig.keeping_in_effect`) and counts the stall guard's candidates from there
(`candidates_after`). A second stall stops the run as before. ``--budget-rescue off`` stops at
the first.

A study can also starve without ever meeting the stall guard's condition: it gains an evaluation
every few hundred candidates, so ``--patience`` candidates in a row never pass without one. The
rescue therefore also begins on such a trickle (`is_trickling`): fewer than `TRICKLE_SHARE` of the
last ``--patience`` finished candidates were full evaluations. The share was chosen on the tuning
seeds so that no run that fills its budget on its own begins a rescue
(``results/budget_scaling/TRICKLE_DECISION.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

TRICKLE_SHARE = 0.02
"""The share of full evaluations among the last ``--patience`` finished candidates below which a
search without a rescue begins one (10 of 500 at the default patience)."""

RESCUE_ATTR = "budget_rescue"
"""Study user attribute: where the budget rescue began, ``{"trial": T, "candidates": C,
"evaluations": E}`` (T: the number of the study's newest trial then, C: the candidates proposed
so far, E: the full evaluations done)."""


def rescue_of(study_attrs: Mapping[str, Any]) -> dict[str, int] | None:
    """The study's budget rescue (`RESCUE_ATTR`) from its user attributes, or ``None``."""
    found = study_attrs.get(RESCUE_ATTR)
    if not isinstance(found, Mapping) or "trial" not in found:
        return None
    return {"trial": int(found["trial"]), "candidates": int(found.get("candidates", 0)),
            "evaluations": int(found.get("evaluations", 0))}


def begin_rescue(study: Study, trial: int, candidates: int, evaluations: int) -> dict[str, int]:
    """Record in ``study`` that the budget rescue begins after trial number ``trial``, with
    ``candidates`` proposed and ``evaluations`` full evaluations done; a rescue another worker
    recorded first stays (two workers that record at once differ by a candidate or two)."""
    found = rescue_of(study.user_attrs)
    if found is not None:
        return found
    began = {"trial": int(trial), "candidates": int(candidates), "evaluations": int(evaluations)}
    study.set_user_attr(RESCUE_ATTR, began)
    return began


def candidates_after(rescue: Mapping[str, int] | None) -> int:
    """The trial number after which the stall guard counts: the rescue's, else -1."""
    return -1 if rescue is None else int(rescue["trial"])


def is_trickling(trials: Sequence[FrozenTrial], patience: int, share: float = TRICKLE_SHARE) -> bool:
    """Whether the last ``patience`` finished candidates of ``trials`` (in trial order) brought
    fewer than ``ceil(share * patience)`` full evaluations (at least one).

    Trials still in progress (no outcome yet) are skipped; a study with fewer than ``patience``
    finished candidates is not trickling. ``patience`` <= 0 or ``share`` <= 0: never.
    """
    if patience <= 0 or share <= 0:
        return False
    needed = max(1, math.ceil(share * patience))
    finished = evaluated = 0
    for t in reversed(trials):
        outcome = t.user_attrs.get(tr.OUTCOME)
        if outcome is None:
            continue
        finished += 1
        if outcome == oc.EVALUATED:
            evaluated += 1
            if evaluated >= needed:
                return False
        if finished >= patience:
            return True
    return False
