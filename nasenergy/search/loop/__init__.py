"""A worker's loop over candidates: `pipeline` (the loop), `worker_context` (what a worker holds),
its steps `candidate_step`, `screening` and `screening_pool`, `claim_step`, `evaluation_step`,
`board_step` and `dvfs_steps`, and the budget keepers `budget_keeping`, `exhaustion`, `stall`,
`rescue`, `filter_yield` and `redirect`; `metric_check` checks a reported figure."""
