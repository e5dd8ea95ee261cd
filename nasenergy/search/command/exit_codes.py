"""The exit statuses of ``python -m nasenergy.search``: one per way a run can end."""

from __future__ import annotations

from nasenergy._cli import EXIT_INTERRUPTED, EXIT_USAGE

EXIT_DONE = 0
EXIT_FAILURE = 1
EXIT_CANDIDATE_CAP = 3
EXIT_STALLED = 4
EXIT_EXHAUSTED = 5
EXIT_DATABASE = 6

STOP_EXIT_CODES: dict[str, int] = {
    "budget": EXIT_DONE,
    "worker_failed": EXIT_FAILURE,
    "max_candidates": EXIT_CANDIDATE_CAP,
    "stalled": EXIT_STALLED,
    "exhausted": EXIT_EXHAUSTED,
    "database": EXIT_DATABASE,
    "interrupted": EXIT_INTERRUPTED,
}
"""`RunSummary.stop_reason` -> the command's exit status."""

EXIT_STATUS_HELP = f"""\
exit status:
  {EXIT_DONE}    the budget of full evaluations is spent
  {EXIT_FAILURE}    a failure of the environment (e.g. a worker process failed short of the budget)
  {EXIT_USAGE}    bad input: a flag, a file, a setting the hardware or benchmark cannot serve
  {EXIT_CANDIDATE_CAP}    stopped short of the budget at the candidate cap (--max-candidates)
  {EXIT_STALLED}    stopped short of the budget by the stall guard (--patience)
  {EXIT_EXHAUSTED}    stopped short: the recorded profile has no unseen network left
  {EXIT_DATABASE}    stopped short: the database stayed unreachable for longer than --db-retry-s
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); running the same command again resumes
"""


def exit_code_for(stop_reason: str) -> int:
    """The exit status of a run that ended with ``stop_reason`` (unknown reasons: 1)."""
    return STOP_EXIT_CODES.get(stop_reason, EXIT_FAILURE)
