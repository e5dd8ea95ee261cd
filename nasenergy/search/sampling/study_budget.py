"""What a study has spent, read from the study itself: the one record every count of the budget
derives from.

A run keeps two stores. The study (the run folder's ``study.journal``, or the ``--storage``
database) holds every trial with its outcome and results: Optuna writes each trial there, on a
database in one transaction, and a worker records a trial's outcome before it tells the trial's
state. The claim ledger (``claims.sqlite``, or the ``nasenergy_*`` tables of the database) only
makes "is this network new, is a slot free, take it" one atomic step between workers. Only the
study holds the results, so the study is the truth: the ledger is reconciled with it and what the
study proves is restored into it at every start (`nasenergy.search.storage.claim_ledger`), and the
study keeps its own budget (`BUDGET_ATTR`), which a lost ledger cannot take with it.

A study that cannot say what it spent (a ``COMPLETE`` trial without its outcome: records out of
order or lost), that holds more evaluations than the budget asked, that was made with other
settings or a larger budget (a larger budget asked extends it) is refused (`check_study_budget`),
and so is an empty study while the claims remember evaluations (`check_study_not_lost`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from nasenergy.errors import UsageError
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.search.storage.claim_db import BudgetMismatchError

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

BUDGET_ATTR = "nasenergy_budget"
"""Study user attribute: the study's budget of full evaluations (the largest one asked)."""
SETTINGS_ATTR = "nasenergy_settings"
"""Study user attribute: the study-defining settings (`SearchConfig.study_defining`)."""


class StudyRecordError(UsageError):
    """The study's records cannot say what it spent (damaged or reordered)."""


def evaluations_of(trials: Iterable[FrozenTrial]) -> int:
    """The full evaluations a study holds: its ``COMPLETE`` trials whose outcome is ``evaluated``."""
    return sum(1 for t in trials if t.state.name == "COMPLETE" and t.user_attrs.get(tr.OUTCOME) == oc.EVALUATED)


def check_study_budget(study: Study, *, budget: int, settings: Mapping[str, Any], where: str) -> None:
    """Refuse to run ``study`` with ``budget`` and ``settings`` unless its records agree.

    Args:
        study: the run's study, loaded.
        budget: the budget asked (``--budget``); a larger one than the study's extends it.
        settings: the study-defining settings asked.
        where: the storage as a message names it (e.g. the journal file).

    Raises:
        StudyRecordError: a ``COMPLETE`` trial records no outcome.
        BudgetMismatchError: the study was made with other settings, has a larger budget, or holds
            more full evaluations than ``budget``.
    """
    name = study.study_name
    trials = study.get_trials(deepcopy=False)
    unknown = [t.number for t in trials if t.state.name == "COMPLETE" and not t.user_attrs.get(tr.OUTCOME)]
    if unknown:
        listed = ", ".join(map(str, unknown[:5])) + (", ..." if len(unknown) > 5 else "")
        raise StudyRecordError(
            f"{where}: {len(unknown)} complete trial(s) ({listed}) record no outcome (the file's records are out of "
            "order or lost), so what the study spent is unknown; restore it from a copy, or start a new run "
            "(another --out or --study-name)"
        )
    attrs = study.user_attrs
    stored = attrs.get(SETTINGS_ATTR)
    if isinstance(stored, dict):
        diffs = [f"{k}: stored {stored.get(k)!r}, given {v!r}" for k, v in settings.items() if stored.get(k) != v]
        if diffs:
            raise BudgetMismatchError(f"study {name!r} exists with other settings ({'; '.join(diffs)}); "
                                      "use the stored settings or another --study-name")
    recorded = recorded_budget(study)
    if recorded is not None and recorded > budget:
        raise BudgetMismatchError(f"study {name!r} has a budget of {recorded} full evaluations; pass "
                                  f"--budget {recorded} (or more, to extend it)")
    spent = evaluations_of(trials)
    if spent > budget:
        raise BudgetMismatchError(
            f"study {name!r} in {where} holds {spent} full evaluations, more than --budget {budget} (a storage "
            f"copied from a larger run?); pass --budget {spent} (or more), or use another --out"
        )


def check_study_not_lost(study: Study, *, claimed_done: int, where: str) -> None:
    """Refuse a study that holds no trial while the claims remember finished evaluations: its
    storage was deleted or emptied, and starting again would overwrite the run's files.

    Args:
        study: the run's study, loaded.
        claimed_done: the evaluations the claims hold as done.
        where: the storage as a message names it.

    Raises:
        StudyRecordError: the study is empty and ``claimed_done`` is not.
    """
    if claimed_done and not study.get_trials(deepcopy=False):
        raise StudyRecordError(
            f"{where} holds no trial, but the claims remember {claimed_done} full evaluation(s): the study was "
            "deleted or emptied; restore it from a copy, or start a new run (another --out or --study-name)"
        )


def recorded_budget(study: Study) -> int | None:
    """The budget the study keeps (`BUDGET_ATTR`), or ``None`` (a study made before it kept one)."""
    value = study.user_attrs.get(BUDGET_ATTR)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def record_budget(study: Study, budget: int) -> None:
    """Keep ``budget`` in the study (after `check_study_budget` accepted it)."""
    if study.user_attrs.get(BUDGET_ATTR) != budget:
        study.set_user_attr(BUDGET_ATTR, int(budget))
