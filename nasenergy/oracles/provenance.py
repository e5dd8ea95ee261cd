"""The shape of a benchmark's provenance (where its values came from), checked when a file is read.

Readers (``python -m nasenergy.benchmark info``, the oracles' descriptions) use these fields; a
benchmark file whose provenance gives them other types is damaged.
"""

from __future__ import annotations

import math
from typing import Any

from nasenergy.oracles.errors import CorruptBenchmarkError


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _problem(prov: dict[str, Any]) -> str | None:
    """What is wrong with ``prov``, or ``None``."""
    for name in ("kind", "source", "created_utc"):
        if name in prov and not isinstance(prov[name], str):
            return f"{name} is not text"
    for name in ("files", "skipped"):
        if name in prov and not _is_text_list(prov[name]):
            return f"{name} is not a list of text"
    ignored = prov.get("ignored_columns", {})
    if not (isinstance(ignored, dict) and all(_is_text_list(v) for v in ignored.values())):
        return "ignored_columns is not a mapping of file to columns"
    conflicts = prov.get("conflicts", [])
    if not (isinstance(conflicts, list) and all(
            isinstance(c, dict) and isinstance(c.get("values"), str) and isinstance(c.get("file"), str)
            and isinstance(c.get("archs"), int) for c in conflicts)):
        return "conflicts are not records of values, file and archs"
    model = prov.get("cost_model")
    if model is not None and not (isinstance(model, dict) and isinstance(model.get("n_fit_archs"), int)
                                  and _is_number(model.get("cv_median_rel_err_train"))):
        return "cost_model lacks n_fit_archs or its cross-validated error"
    return None


def check_provenance(prov: Any, where: str) -> dict[str, Any]:
    """``prov`` when it has the shape readers expect.

    Raises:
        CorruptBenchmarkError: naming ``where`` and the field at fault.
    """
    if not isinstance(prov, dict):
        raise CorruptBenchmarkError(f"{where}: its provenance is not a mapping")
    problem = _problem(prov)
    if problem:
        raise CorruptBenchmarkError(f"{where}: in its provenance, {problem}")
    return prov
