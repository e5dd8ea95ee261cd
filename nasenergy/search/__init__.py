"""The multi-objective architecture search: ``python -m nasenergy.search`` and `run_search`.

Modules: `config` (settings and validation), `cli` (the command line), `runner` (one command's
share of a study), `worker_processes` (running its workers) and `run_outputs` (the files it
leaves), `pipeline` (a worker's loop over candidates; its steps in `worker_context`,
`candidate_step`, `screening_pool`, `claim_step`, `evaluation_step`, `budget_keeping`,
`exhaustion` and `stall`), `claims` (the exact budget across workers), `storage` (journal file or shared database), `db_retry` (riding out database outages) and
`journal` (the journal file), `study` (the Optuna study, samplers, start-up repairs), `run_files`
and `trial_record` (what a run leaves behind), `objectives` (the objectives and the hypervolume
convention), `coverage` (a partial recorded profile), `credentials` (storage passwords, masked
everywhere), `progress`, `locks`, `env_info`, `components`.
Nothing heavy is imported until a search runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nasenergy.search.cli import main
from nasenergy.search.components import Components
from nasenergy.search.config import SearchConfig

if TYPE_CHECKING:
    from nasenergy.search.runner import RunSummary

__all__ = ["Components", "RunSummary", "SearchConfig", "main", "run_search"]


def run_search(config: SearchConfig, **kwargs: Any) -> "RunSummary":
    """Run (or resume, or join) a search; see `nasenergy.search.runner.run_search`."""
    from nasenergy.search.runner import run_search as _run  # lazy: the runner imports sqlalchemy and optuna

    return _run(config, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "RunSummary":
        from nasenergy.search.runner import RunSummary  # lazy: the runner imports sqlalchemy and optuna

        return RunSummary
    raise AttributeError(f"module 'nasenergy.search' has no attribute {name!r}")
