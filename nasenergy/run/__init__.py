"""What a search run leaves behind, and how it is read back: one layer under the search.

Modules: `outcomes` (what became of a candidate), `network_key` (the study's key of a deployed
network), `trial_record` and `candidate_schema` (a candidate as stored on its Optuna trial, and as
a row of ``candidates.csv``), `objectives` (the search's objectives and their columns), `files`
(the run folder: ``candidates.csv``, ``pareto_front.csv``, ``config.json``, ``env.json``),
`front_table` (the front printed at the end of a run), `report` with `report_budget`,
`report_front` and `report_text` (``report.md``), `plots` with `plots_axes` and
`plots_hypervolume` (the run's figures) and `quality` (the deploy-region quality of a run).
Nothing here imports the search, so the report and the plots can be rebuilt from a run folder
alone. Nothing heavy is imported until it is used.
"""
