"""The files a run leaves: every file of the run folder rebuilt from the study at the end of a
command (the tables, ``env.json``, the report and the plots)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from nasenergy.run import files as run_files
from nasenergy.run import outcomes as oc
from nasenergy.run.objectives import objectives_for
from nasenergy.run.plots import draw_run
from nasenergy.run.report import render_report
from nasenergy.run.trial_record import row_from_trial
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.dashboard import dashboard_hint
from nasenergy.search.command.env_info import collect_env
from nasenergy.search.loop.board_step import BOARDS_ATTR
from nasenergy.search.loop.filter_yield import YIELD_TEXT
from nasenergy.search.loop.redirect import REDIRECTED_FROM
from nasenergy.search.loop.rescue import RESCUE_ATTR, rescue_of
from nasenergy.search.sampling.study import WORKER_ATTR_PREFIX, proposed_trials
from nasenergy.search.storage.credentials import has_password, make_private, mask_text, password_of
from nasenergy.search.storage.storages import StorageSpec

if TYPE_CHECKING:
    import optuna


def write_outputs(config: SearchConfig, study: optuna.Study, spec: StorageSpec, resume_command: str,
                  stop_reason: str | None = None) -> list[Path]:
    """Rebuild every file of the run folder from the study; returns the files written.

    `stop_reason` (a `RunSummary.stop_reason`) is kept in ``env.json`` and shown in the report."""
    out = config.out_dir
    private = has_password(config.storage)
    secrets = [password_of(config.storage)]
    objectives = objectives_for(config.objectives)
    proposed = proposed_trials(study)
    rows = [row_from_trial(t) for t in proposed]
    marked = run_files.write_tables(out, rows, objectives, private=private, min_accuracy=config.min_accuracy)
    workers = {k[len(WORKER_ATTR_PREFIX):]: v for k, v in study.user_attrs.items() if k.startswith(WORKER_ATTR_PREFIX)}
    env = collect_env(seed=config.seed, workers=workers, storage=spec.display, command=resume_command,
                      secrets=secrets)
    if stop_reason is not None:
        env["stop_reason"] = stop_reason
    if study.user_attrs.get(BOARDS_ATTR):
        env["boards"] = study.user_attrs[BOARDS_ATTR]
    rescue = rescue_of(study.user_attrs)
    if rescue is not None:  # where it began, and what it did (counted over the whole study)
        env[RESCUE_ATTR] = {**rescue, "redirected": sum(1 for t in proposed if REDIRECTED_FROM in t.user_attrs),
                            "yielded": sum(1 for r in rows if r.get("outcome") == oc.EVALUATED
                                           and YIELD_TEXT in str(r.get("filter_reason") or ""))}
    run_files.write_json(out / run_files.ENV_JSON, env, private=private)
    record = run_files.RunRecord(out, config.public_dict(), marked.records, env)
    report = render_report(record, resume_command=mask_text(resume_command, secrets=secrets),
                           dashboard_command=dashboard_hint(spec.dashboard_command()))
    run_files.write_text_atomic(out / run_files.REPORT_MD, report, private=private)
    names = [run_files.CANDIDATES_CSV, run_files.FRONT_CSV, run_files.CONFIG_JSON, run_files.ENV_JSON, run_files.REPORT_MD]
    try:
        plots = draw_run(record)
    except ModuleNotFoundError as exc:  # a declared dependency, but the tables and report stand alone
        if (exc.name or "").split(".")[0] != "matplotlib":
            raise
        print("note: no plots drawn: matplotlib is not installed (pip install matplotlib, then "
              "python -m nasenergy.plot on the run folder)", file=sys.stderr)
        plots = []
    if private:
        make_private(out, plots)
    return [out / n for n in names] + plots
