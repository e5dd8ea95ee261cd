"""The budget rescue: budget keeping switched on when a search stalls.

A search at its defaults runs without the budget keeping mechanisms (`nasenergy.search.redirect`,
`nasenergy.search.filter_yield`), so a run that fills its budget on its own runs exactly as it
would without them. When the stall guard's condition first holds (``--patience`` candidates in a
row without a new full evaluation), or every network a partial profile holds has been seen with
budget left, a worker does not stop: it records the moment in the study (`RESCUE_ATTR`), and every
worker that reads it at its next candidate switches the settings left at their defaults on
(`SearchConfig.keeping_in_effect`) and counts the stall guard's candidates from there
(`candidates_after`). A second stall stops the run as before. ``--budget-rescue off`` stops at
the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def begin_rescue(study: Any, trial: int, candidates: int, evaluations: int) -> dict[str, int]:
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
