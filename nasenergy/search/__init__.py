"""The multi-objective architecture search: ``python -m nasenergy.search`` and `run_search`.

Subpackages, one job each: `command` (the command line, the settings and the parts a run uses),
`workers` (one command's share of a study and its worker processes), `loop` (a worker's loop over
candidates and its steps), `sampling` (the Optuna study and its samplers) and `storage` (journal
file or shared database, the exact budget across workers, outages). What a run leaves behind is
`nasenergy.run`, a layer below. Nothing heavy is imported until a search runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasenergy.search.command.cli import main
from nasenergy.search.command.components import Components
from nasenergy.search.command.config import SearchConfig

if TYPE_CHECKING:
    from nasenergy.search.workers.runner import RunSummary

__all__ = ["Components", "RunSummary", "SearchConfig", "main", "run_search"]


def run_search(config: SearchConfig, **kwargs: Any) -> "RunSummary":
    """Run (or resume, or join) a search; see `nasenergy.search.workers.runner.run_search`."""
    from nasenergy.search.workers.runner import run_search as _run  # lazy: the runner imports sqlalchemy and optuna

    return _run(config, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "RunSummary":
        from nasenergy.search.workers.runner import RunSummary  # lazy: the runner imports sqlalchemy and optuna

        return RunSummary
    raise AttributeError(f"module 'nasenergy.search' has no attribute {name!r}")
