"""How candidates are proposed: `study` (the Optuna study, its samplers and start-up repairs),
`samplers` (the sampler registry), `tpe_dedup` (the one adapter over Optuna's TPE internals, with
its version guard) and `tpe_cache`."""
