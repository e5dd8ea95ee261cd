"""The command line: `cli` (``python -m nasenergy.search``), `config` with `config_checks`,
`config_defaults`, `config_fields` and `config_values` (the settings and their validation),
`components` (the parts a run uses, chosen through the registries), `machine_defaults`,
`dvfs_modes`, `filter_features`, `coverage` (a partial recorded profile), `study_identity`,
`env_info`, `dashboard` and `exit_codes`."""
