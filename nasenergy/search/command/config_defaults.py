"""The defaults and fixed choices of a search run's settings: samplers, estimate modes, the
searched accuracy, the candidate caps, the stall guard and each filter's target recall.

The numbers come with the measurements behind them; `nasenergy.search.command.config_fields` uses them as
the settings' defaults and `nasenergy.search.command.cli` as the command line's.
"""

from __future__ import annotations

from collections.abc import Collection

from nasenergy.filter.registry import FILTERS
from nasenergy.oracles.lookup import ESTIMATE_MODES
from nasenergy.search.sampling.samplers import SAMPLER_KINDS

SAMPLERS: Collection[str] = SAMPLER_KINDS.choices()
"""The `--sampler` choices: the registered samplers (`nasenergy.search.sampling.samplers`), read when asked."""
ESTIMATES: tuple[str, ...] = ESTIMATE_MODES
"""Cost estimation for benchmark cells without a recorded training time (`nasenergy.oracles.lookup`)."""
DEFAULT_SEARCH_METRIC = "x-valid/12"
"""The accuracy the search optimises, ``SPLIT/EPOCHS``: NATS-Bench's 12-epoch validation accuracy."""

MAX_CANDIDATES_PER_EVALUATION = 50
"""Default safety cap: at most this many candidates per full evaluation of the budget."""

DEFAULT_PATIENCE = 10 * MAX_CANDIDATES_PER_EVALUATION
"""Default stall guard (500): stop once this many consecutive candidates (duplicates, networks
outside a recorded profile, filtered networks) brought no new full evaluation. In the
200-evaluation runs of ``experiments/search_efficiency.py``, runs that finished their budget never
went more than 48 candidates between two full evaluations on the profile of deployed networks (about
130 on the earlier profile of networks as built), while runs that crawled (TPE re-proposing networks it had seen or that the threshold filter
rejects) went 500 to 2,300 candidates between evaluations, for thousands of candidates; 500 leaves
a fourfold margin on the first and stops the second long before the candidate cap."""

MAX_SCREEN = 64
"""The most candidates ``--screen`` may gather per full evaluation."""


SPACE_TARGET_RECALL: dict[str, float] = {"sss": 0.65}
"""The dominance filter's default target recall where a space's differs from the filter's own
(0.95). The size space's 0.65 was chosen on the tuning seeds of ``experiments/search_quality.py`` by
rules declared before the runs (``results/search_quality_sss_tuning/DECISION.md``): on SSS
CIFAR-10 (seeds 0-9) the deploy quality after 100 evaluations was 0.817 at 0.65, 0.816 at 0.8 and
0.774 at 0.95 (plain TPE 0.736), and the evaluations needed for plain TPE's 200-evaluation quality
133, 139 and 152, with no run stalled; ``--screen 4`` or ``16`` at 0.8 and the widths offered to
the sampler as ordered integers needed more or lost quality after 100. The topology space keeps
0.95 (see below)."""

def default_target_recall(filter_mode: str, space: str = "tss") -> float:
    """The filter's target recall when ``--target-recall`` is not given: for the dominance filter
    in a space of `SPACE_TARGET_RECALL`, the space's; else the filter's registered
    `nasenergy.filter.registry.FilterKind.default_target_recall` (0.95 for an unknown mode).

    The built-in defaults: the dominance filter's 0.95 comes from the target-recall sensitivity
    study of ``experiments/search_efficiency.py`` (TPE, 200 full evaluations, CIFAR-10, 20 seeds)
    on the recorded H200 profile of deployed networks (5,795 of 6,040 classes): the share of the
    true front's points a run matched (front recall) was 0.959 at 0.95, 0.947 at 0.8 (3 of 20
    runs stopped as stalled) and 0.808 at 0.5 (all 20 stalled), against 0.947 for TPE alone; on
    the complete profile (all 6,040) 0.952, 0.950 (3 stalled), 0.809 (all stalled) and 0.947.
    With the path features and the locally calibrated bound (``local_margin``) the order holds:
    0.955, 0.941 (12 stalled), 0.849 (all stalled) against 0.947; on CIFAR-100 (10 seeds, data
    the choice did not see) 0.745 at 0.95 (none stalled), 0.695 at 0.8 (5 of 10 stalled), 0.527
    without a filter. 0.95 never stalled, so the main
    job spends its budget. (On the earlier profile of networks as built, whose figures were not
    those of the deployed networks, 0.8 had been the better choice.) The threshold filter keeps
    its own 0.95 (it learns a plain utilization cut-off; lower recalls cut more of the front).
    ``none`` ignores it.
    """
    if filter_mode == "dominance" and space in SPACE_TARGET_RECALL:
        return SPACE_TARGET_RECALL[space]
    return FILTERS.get(filter_mode).default_target_recall if filter_mode in FILTERS else 0.95


def default_target_recalls() -> dict[str, float]:
    """Every registered filter's default target recall, by filter (``DEFAULT_TARGET_RECALL``)."""
    return {mode: FILTERS.get(mode).default_target_recall for mode in FILTERS.names()}
