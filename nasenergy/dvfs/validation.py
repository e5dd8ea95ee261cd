"""Leave-one-out validation of the DVFS model on measured clock sweeps.

The model's use case is the hard one: the GPU's parameters are fitted on *other* workloads and the
workload itself is seen only at its default (highest) clock. For each hold-out group (a workload,
or all inputs of one benchmark) the GPU is calibrated on the remaining sweeps, the held-out
workload's default-clock point is given to the model, and the model's chosen clock is scored on
the workload's *measured* sweep:

* ``regret = E_measured(model clock) / E_measured(true best clock) - 1``: how much more energy the
  model's choice really costs than the measured optimum;
* the clock error (MHz and clock steps) and the model's energy error at its chosen clock;
* the same regret for comparison choices: ``alpha`` fitted to the held-out sweep itself
  (``oracle_alpha``, isolating the error of the alpha predictor), a constant ``alpha``, the single
  clock that is best on average over the training workloads (``fixed_clock``) and the default clock.

Every model variant with a *predicted* ``alpha`` chooses its clock by the ``expected`` rule
(equation 7 of `nasenergy.dvfs.model`: least mean energy over ``alpha`` +/- the predictor's
residual and, for generic sets, the reference shapes); ``regret_counters_point_frac`` keeps the
compute-share variant under the ``point`` rule (least point-estimate energy, the simpler rule) for
comparison. ``alpha`` fitted to the held-out sweep has no residual and uses the point rule.

It also checks the few-probe search against the exhaustive answer on the measured sweep
(``recorded`` backend) and on the modelled curve that the search used.

`consistent_default_point` flags sweeps whose default (highest-clock) point cannot be reproduced
by any model in which board power rises with the clock: power more than `DEFAULT_POWER_DROP`
below the next lower clock's although the run is faster there. Such a point makes the default
clock look like the measured optimum by a wide margin (four RTX 8000 mixbench inputs); summaries
are given with and without them.

`leave_one_gpu_out` holds out a whole GPU instead: its workloads are predicted by the generic
parameters (`nasenergy.dvfs.generic`) built from the other GPUs' calibrations and the facts NVML
would report about it, and scored the same way, with the share of workloads whose measured saving
at the chosen clock lies inside the model's saving band.

This module's job is the method above and its public names, defined by the modules of each part:
`nasenergy.dvfs.workload_holdout` (leave one group out), `nasenergy.dvfs.validation_summary`
(its summaries), `nasenergy.dvfs.generic_validation` (leave one GPU out, the power-capped card)
and `nasenergy.dvfs.validation_scores` (the scores they share).
"""

from __future__ import annotations

from nasenergy.dvfs.generic_validation import (CappedCardResult, GpuHoldOutResult, GpuSweeps, capped_card,
                                               leave_one_gpu_out)
from nasenergy.dvfs.validation_scores import (DEFAULT_POWER_DROP, PROBE_CLOCK_FRAC, consistent_default_point,
                                              noise_frac, probe_index, spearman, two_point_rmse)
from nasenergy.dvfs.validation_summary import HOST_BOUND_BUSY, Summary, summarise
from nasenergy.dvfs.workload_holdout import WorkloadResult, evaluate_workload, leave_one_group_out

__all__ = ["DEFAULT_POWER_DROP", "HOST_BOUND_BUSY", "PROBE_CLOCK_FRAC", "CappedCardResult", "GpuHoldOutResult",
           "GpuSweeps", "Summary", "WorkloadResult", "capped_card", "consistent_default_point", "evaluate_workload",
           "leave_one_gpu_out", "leave_one_group_out", "noise_frac", "probe_index", "spearman", "summarise",
           "two_point_rmse"]
