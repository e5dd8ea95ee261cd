"""Turning a proposal of a known network into a new network near it.

When a sampler converges it proposes networks the study has already seen; each such duplicate
costs a candidate and brings no evaluation, so candidates per full evaluation grow without bound
and the stall guard ends the study short of its budget. After ``--redirect-after`` (default
`REDIRECT_AFTER`) duplicates in a row, a worker looks for `REDIRECT_BATCH` networks the study has
not seen near the last proposal
(`nearby_unseen`): a random walk that changes one parameter (a TSS edge's op, an SSS width) at a
time, from the proposal, until it reaches a network that is unseen, that the meter covers and that
can learn; failing that within `WALK_STEPS` steps, uniform draws over the parameters. The worker
enqueues them (Optuna's public ``study.enqueue_trial``), so the study's next trials propose them
with fixed parameters. The walk draws from a generator seeded by the study's seed and the trial number
(`redirect_rng`), so a seeded search stays deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

REDIRECT_AFTER = 2
"""Default of ``--redirect-after`` (`SearchConfig.redirect_after`): duplicates in a row (of one
worker) after which the worker redirects; 0 turns redirection off."""
REDIRECT_BATCH = 8
"""Unseen networks enqueued per redirection (distinct, each from a walk from the proposal): a
converged sampler then spends about ``REDIRECT_AFTER / REDIRECT_BATCH`` duplicates per new network."""
WALK_STEPS = 200
"""Steps of the random walk from the proposal before uniform draws take over."""
UNIFORM_DRAWS = 2000
"""Uniform draws over the parameters tried after the walk."""
REDIRECTED_FROM = "redirected_from"
"""User attribute of an enqueued trial: the number of the duplicate trial it replaces."""


def redirect_rng(study_seed: int, trial_number: int) -> np.random.Generator:
    """The generator of the redirection after trial ``trial_number`` of a study seeded ``study_seed``."""
    return np.random.default_rng([int(study_seed), int(trial_number), 0x5EED])


def nearby_unseen(
    choices: Mapping[str, tuple[Any, ...]],
    params: Mapping[str, Any],
    is_new: Callable[[dict[str, Any]], bool],
    rng: np.random.Generator,
    *,
    walk_steps: int = WALK_STEPS,
    uniform_draws: int = UNIFORM_DRAWS,
) -> dict[str, Any] | None:
    """Parameters of a network near ``params`` for which ``is_new`` holds, or ``None``.

    Args:
        choices: the space's parameters and their choices (`SearchSpace.param_choices`).
        params: the proposal (a known network).
        is_new: whether parameters name a network worth proposing (unseen, covered, can learn).
        rng: the generator (`redirect_rng`).
        walk_steps: steps of the one-parameter random walk from ``params``.
        uniform_draws: uniform draws over ``choices`` after the walk.
    """
    names = [n for n, c in choices.items() if len(c) > 1]
    current = {n: params[n] for n in choices}
    for _ in range(walk_steps if names else 0):
        name = names[int(rng.integers(len(names)))]
        others = [c for c in choices[name] if c != current[name]]
        current[name] = others[int(rng.integers(len(others)))]
        if is_new(current):
            return dict(current)
    for _ in range(uniform_draws):
        drawn = {n: c[int(rng.integers(len(c)))] for n, c in choices.items()}
        if is_new(drawn):
            return drawn
    return None
