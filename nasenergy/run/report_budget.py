"""The "Budget and candidates" section of ``report.md``: how the run ended, the hardware
profile's coverage, the filter's line and how the run kept its budget spendable (redirection, the
filter's yield, the budget rescue).

The public names are re-exported by `nasenergy.run.report`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.hardware.coverage import Coverage
from nasenergy.run.report_text import _worker_field

STOP_REASONS: dict[str, str] = {
    "budget": "the budget was spent",
    "max_candidates": "stopped at the candidate cap",
    "stalled": "stopped as stalled: the last `patience` candidates brought no new full evaluation",
    "exhausted": "stopped: every network the recorded profile holds had been seen",
    "interrupted": "interrupted; resume to continue",
    "worker_failed": "a worker process failed; resume to continue",
    "database": "the database stayed unreachable for longer than `--db-retry-s`; resume to continue",
}
"""How a run ended (``env.json``'s ``stop_reason``), in words."""


def _stop_clause(env: Mapping[str, Any]) -> str:
    reason = env.get("stop_reason")
    if reason is None:
        return ""
    return f" ({STOP_REASONS.get(str(reason), str(reason))})"


def _coverage_lines(env: Mapping[str, Any], outcomes: Counter) -> list[str]:
    raw = _worker_field(env, "coverage")
    if not raw:
        return []
    coverage = Coverage.from_dict(raw)
    if coverage.complete:
        return [f"- hardware profile: {coverage.summary()}"]
    return [
        f"- hardware profile: {coverage.summary()}; the search effectively ran over those. "
        f"{outcomes['not_recorded']} candidates fell outside it: they are listed as `not_recorded` in "
        "`candidates.csv`, were not measured, spent no budget and were told to the sampler as pruned"
    ]


def _filter_line(cfg: Mapping[str, Any], env: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                 at_optimal_clock: bool = True) -> str:
    decided = [r for r in rows if r.get("outcome") != "duplicate" and r.get("filter_admit") is not None]
    skipped = sum(1 for r in decided if r.get("filter_admit") is False)
    line = (f"- filter {cfg.get('filter')} (target recall {cfg.get('target_recall')}): skipped {skipped} of "
            f"{len(decided)} measured networks")
    parts: dict[str, Any] = {}
    for info in (env.get("workers") or {}).values():
        parts.update(info.get("parts") or {})
    if "energy" in (cfg.get("objectives") or ()) and parts.get("filter energy bound"):
        at = " at the optimal clock" if at_optimal_clock else ""
        line += f"; its energy bound{at}: {parts['filter energy bound']}"
    groups = cfg.get("filter_features")
    if groups and (cfg.get("filter") == "dominance" or (cfg.get("screen") or 1) > 1):
        line += f"; accuracy model features (--filter-features): {','.join(map(str, groups))}"
    return line


REOPENED_TEXT = "was seen with budget left"
"""Part of the filter reason of a rejected network evaluated after all
(`nasenergy.search.loop.filter_yield.REOPEN_REASON`)."""


RESCUE_ENV = "budget_rescue"
"""Key of ``env.json`` where a budget rescue began and what it did (`nasenergy.search.loop.rescue`)."""
RESCUE_REDIRECT_AFTER = 2
"""The redirection setting a budget rescue switches on (`nasenergy.search.loop.redirect.REDIRECT_AFTER`;
tests/run/test_run_report.py checks that they agree)."""
RESCUE_YIELD_AFTER = 10
"""The filter-yield setting a budget rescue switches on (`nasenergy.search.loop.filter_yield.YIELD_AFTER`;
tests/run/test_run_report.py checks that they agree)."""


def _budget_keeping_lines(cfg: Mapping[str, Any], env: Mapping[str, Any],
                          evaluated: Sequence[Mapping[str, Any]]) -> list[str]:
    """How the run kept its budget spendable (`nasenergy.search.loop.redirect`,
    `nasenergy.search.loop.filter_yield`, `nasenergy.search.loop.rescue`); nothing for a run whose config
    predates the settings."""
    if "redirect_after" not in cfg or "filter_yield_after" not in cfg:
        return []
    rescue = env.get(RESCUE_ENV)
    rescued = isinstance(rescue, Mapping) and "trial" in rescue
    rescue_on = bool(cfg.get("budget_rescue", False))

    def in_effect(value: Any, constant: int) -> tuple[int, str]:  # (value in effect at the end, from when)
        if value is not None:
            return int(value), ""
        if rescued and rescue_on:
            return constant, " (from the budget rescue on)"
        return 0, f" until a budget rescue (then {constant})" if rescue_on else ""

    redirect, redirect_when = in_effect(cfg["redirect_after"], RESCUE_REDIRECT_AFTER)
    after, after_when = in_effect(cfg["filter_yield_after"], RESCUE_YIELD_AFTER)
    redirect_text = (f"after {redirect} proposals of known networks in a row, unseen networks near the last "
                     f"one were enqueued{redirect_when}" if redirect > 0 else f"off{redirect_when}")
    lines = []
    if rescued and rescue_on and isinstance(rescue, Mapping):
        lines.append(f"- budget rescue: began after evaluation {int(rescue['evaluations'])} at candidate "
                     f"{int(rescue.get('candidates', 0))}; evaluations yielded {int(rescue.get('yielded', 0))}, "
                     f"redirected proposals {int(rescue.get('redirected', 0))}")
    if after > 0:
        reasons = [str(r.get("filter_reason") or "") for r in evaluated]
        yielded = sum(1 for reason in reasons if "the filter yields" in reason)
        reopened = sum(1 for reason in reasons if REOPENED_TEXT in reason)
        top = float(cfg.get("filter_yield_top") or 0.0)
        yield_text = (f"after {after} rejections in a row, to a candidate among the most promising {top:.0%} "
                      f"of them ({after * 3} rejections: the next one); {yielded} evaluations were yielded"
                      + (f", {reopened} of them on networks it had rejected (counted among the filtered "
                         "candidates too), evaluated once every network the profile holds was seen"
                         if reopened else "") + after_when)
    else:
        yield_text = f"off{after_when}"
    redirect_flag = f" (`--redirect-after {redirect}`)" if cfg["redirect_after"] is not None else ""
    after_flag = f" (`--filter-yield-after {after}`)" if cfg["filter_yield_after"] is not None else ""
    return [f"- budget keeping: redirection{redirect_flag} {redirect_text}; "
            f"the filter's yield{after_flag} {yield_text}", *lines]
