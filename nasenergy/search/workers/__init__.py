"""Running a command's share of a study: `runner` (one command), `worker_processes` (its
workers), `progress` (the progress line) and `run_outputs` (the files it leaves)."""
