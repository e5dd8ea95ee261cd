"""`check_search_metric`: refuse a benchmark lacking the search metric before the first candidate.

An oracle over benchmark data (a table, the installed cache) knows which accuracies it holds; asking
it for one it lacks would otherwise fail only at the first full evaluation, after the run folder
and the study exist. Oracles that do not expose their data (NATS-Bench files, user oracles) are
not checked here.
"""

from __future__ import annotations

from typing import Any

from nasenergy.errors import UsageError
from nasenergy.oracles.datasets import resolve, user_dataset
from nasenergy.oracles.errors import MetricNotAvailableError


def check_search_metric(oracle: Any, dataset: str) -> None:
    """Check that ``oracle`` holds its search metric for ``dataset``.

    Raises:
        MetricNotAvailableError: it does not (exit status 2); the one-line message lists what the
            benchmark holds for ``dataset`` and names ``--search-metric`` (and ``--dataset``).
    """
    data = getattr(oracle, "data", None)
    metrics = getattr(oracle, "metrics", None)
    if data is None or metrics is None or not hasattr(data, "metric_keys"):
        return
    spec = metrics.search
    cell = resolve(dataset, spec.split)
    key = (cell.nats_dataset, cell.split, spec.schedule)
    if key in data.means or key in data.trials:
        return
    here = [(s, int(h)) for d, s, h in data.metric_keys() if _reachable(cell.dataset, d, s)]
    others = sorted({user_dataset(d) for d, _, _ in data.metric_keys()} - {cell.dataset})
    have = ", ".join(f"--search-metric {s}/{h}" for s, h in sorted(set(here))) or "none"
    elsewhere = f"; other datasets: --dataset {', '.join(others)}" if others else ""
    raise MetricNotAvailableError(
        f"the benchmark has no {cell.split} accuracy of {cell.dataset} after {int(spec.schedule)} epochs "
        f"(the search metric, --search-metric {spec.split}/{int(spec.schedule)}); it has for "
        f"{cell.dataset}: {have}{elsewhere}"
    )


def _reachable(dataset: str, nats_dataset: str, split: str) -> bool:
    """Whether ``--dataset dataset --search-metric split/...`` asks for ``nats_dataset``'s split."""
    try:
        return resolve(dataset, split).nats_dataset == nats_dataset
    except UsageError:  # a split the dataset lacks
        return False
