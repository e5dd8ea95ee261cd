"""Small text helpers of ``report.md``: durations, sums and per-source totals of row columns,
source counts, the workers' parts and fields from ``env.json``, and how a metric was measured.

Used by the report's sections (`nasenergy.run.report`, `nasenergy.run.report_budget`,
`nasenergy.run.report_front`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any


def _sum(rows: Sequence[Mapping[str, Any]], col: str) -> float:
    return float(sum(r[col] for r in rows if r.get(col) is not None))


def _by_source(rows: Sequence[Mapping[str, Any]], value_col: str, source_col: str) -> str:
    totals: dict[str, float] = {}
    for r in rows:
        if r.get(value_col) is not None:
            key = str(r.get(source_col) or "unknown")
            totals[key] = totals.get(key, 0.0) + float(r[value_col])
    return ", ".join(f"{_duration(v)} {k}" for k, v in sorted(totals.items())) or "none"


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.2f} s"


def _fmt(value: Any, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _sources(rows: Sequence[Mapping[str, Any]], col: str) -> str:
    counts = Counter(str(r[col]) for r in rows if r.get(col))
    return ", ".join(f"{k} ({n})" for k, n in sorted(counts.items())) or "–"


def _parts(env: Mapping[str, Any], objectives: Sequence[str]) -> str:
    """The workers' parts (meter, oracle, DVFS), each distinct line once; the filter's energy
    bound only when energy is an objective."""
    seen: dict[str, None] = {}
    for info in (env.get("workers") or {}).values():
        for key, value in (info.get("parts") or {}).items():
            if "energy" not in objectives and "energy bound" in key:
                continue
            seen[f"{key} {value}"] = None
    return "; ".join(seen) or "–"


def _worker_field(env: Mapping[str, Any], key: str) -> Any:
    """The first worker's ``key`` in ``env.json`` (every worker of a run shares it), or ``None``."""
    for info in (env.get("workers") or {}).values():
        if info.get(key) is not None:
            return info[key]
    return None


def _metric(rows: Sequence[Mapping[str, Any]], split: str, schedule: str, trial: str | None = None) -> str:
    """E.g. ``x-valid, 12 epochs`` from the rows' split and schedule columns (``–`` if none)."""
    splits = sorted({str(r[split]) for r in rows if r.get(split)})
    schedules = sorted({str(r[schedule]) for r in rows if r.get(schedule)})
    if not splits:
        return "–"
    text = f"{'/'.join(splits)}, {'/'.join(schedules)} epochs"
    trials = sorted({str(r[trial]) for r in rows if trial and r.get(trial)})
    several = [t for t in trials if t.startswith("cells:")]
    single = [t for t in trials if not t.startswith("cells:")]
    parts = []
    if several:
        n_several = len([r for r in rows if trial and str(r.get(trial, "")).startswith("cells:")])
        parts.append(f"the mean over the cells of the deployed network ({n_several} evaluations; each "
                     "cell's figure as below)")
    if single == ["mean"]:
        parts.append("mean over the recorded runs")
    elif len(single) == 1 and single[0].startswith("seed:"):
        parts.append(f"the recorded run of seed {single[0].split(':', 1)[1]}")
    elif single:
        parts.append("one recorded run drawn per evaluation")
    return text + "".join(f", {p}" for p in parts)
