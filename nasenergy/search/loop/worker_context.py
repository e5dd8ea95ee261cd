"""The state one search worker carries from candidate to candidate, and the trial bookkeeping all of
its steps share.

`WorkerContext` holds the run's settings and parts, the study and its trials, the worker's claim
store, the Pareto front the filter is given and the networks the study has seen; the steps of a
candidate (`nasenergy.search.loop.candidate_step`, `nasenergy.search.loop.claim_step`,
`nasenergy.search.loop.evaluation_step`, `nasenergy.search.loop.screening_pool`,
`nasenergy.search.loop.budget_keeping`) read it, and close trials through it (`WorkerContext.tell`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.errors import CandidateError, NasEnergyError
from nasenergy.hardware.select import resolve_hardware
from nasenergy.pareto import ParetoFront
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.objectives import objectives_for
from nasenergy.search.command.components import Components
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.filter_features import FeatureFn, extra_features
from nasenergy.search.sampling.study import TrialAccess
from nasenergy.search.sampling.tpe_dedup import SeenNetworks, watch_seen_networks
from nasenergy.search.storage.claims import ClaimStore
from search_spaces import Arch

if TYPE_CHECKING:
    import multiprocessing.synchronize
    import threading

    import optuna
    from optuna.storages import BaseStorage
    from optuna.trial import TrialState

    StopEvent = threading.Event | multiprocessing.synchronize.Event

POLL_S = 0.25
"""Seconds between looks at the claims while waiting for other workers."""

LOST = "lost"
"""What `Worker` reports for a candidate whose claim another worker took over (its result is
discarded), or whose trial another process closed under it (a straggler of a finished study)."""

CANDIDATE_ERRORS: tuple[type[BaseException], ...] = (CandidateError, LookupError)
"""Errors that fail one candidate (recorded ``failed``; the search goes on) rather than the run:
a `CandidateError` (a measurement that failed, e.g. out of memory; a figure a partial benchmark
lacks) and any `NasEnergyError` that is a `LookupError` (a lookup miss of a custom part). Any other
`NasEnergyError` concerns the run's set-up and stops the search."""


def is_candidate_error(exc: NasEnergyError) -> bool:
    """Whether ``exc`` fails one candidate only (its type is one of `CANDIDATE_ERRORS`)."""
    return isinstance(exc, CANDIDATE_ERRORS)


def feature_fn(config: SearchConfig, components: Components) -> FeatureFn | None:
    """The extra features of ``--filter-features``: the components' own, else built from the
    config (the structure by default)."""
    if components.features is not None:
        return components.features
    hardware = config.hardware
    if "proxies-live" in config.filter_features:  # computed on the GPU where the meter is one
        hardware = resolve_hardware(hardware, None, space_name=getattr(components.space, "name", "tss"))
    return extra_features(config.filter_features, components.space, config.dataset, hardware)


class WorkerContext:
    """What the steps of one worker's candidates share.

    Args:
        config: the run's settings.
        study: the Optuna study (already created, with the run's directions).
        storage: the study's Optuna storage object.
        components: space, meter, oracle, filter and DVFS backend.
        claims: this worker's claim store (registered, heartbeat running).
        stop: set to stop after the current candidate.
        on_candidate: called with each candidate's outcome (e.g. to update a progress bar).

    Attributes:
        objectives: the study's objectives, in the order of its values.
        trials: direct access to the study's trials by number.
        states: Optuna's `TrialState`.
        front: the Pareto front of the evaluations learnt so far (the filter is given it).
        seen: the sampler's view of the networks seen (TPE avoids them, and those a partial
            recorded profile lacks); kept current by the loop.
        known: the networks seen, for redirecting a converged sampler (`nasenergy.search.loop.redirect`):
            ``seen`` itself where the sampler has the hook.
    """

    def __init__(
        self,
        config: SearchConfig,
        study: optuna.Study,
        storage: BaseStorage,
        components: Components,
        claims: ClaimStore,
        *,
        stop: StopEvent,
        on_candidate: Callable[[str], None] | None = None,
    ) -> None:
        import optuna

        self.config = config
        self.study = study
        self.components = components
        self.claims = claims
        self.stop = stop
        self.on_candidate: Callable[[str], None] = on_candidate or (lambda _outcome: None)
        self.objectives = objectives_for(config.objectives)
        self.trials = TrialAccess(storage, study.study_name)
        self.front = ParetoFront(self.objectives)
        self.states = optuna.trial.TrialState
        self.seen = watch_seen_networks(study.sampler, components.space, components.key_of, components.covers)
        self._features = feature_fn(config, components)
        self.known = self.seen if isinstance(self.seen, SeenNetworks) else SeenNetworks(
            components.space, components.key_of, components.covers)

    def features_of(self, arch: Arch | str) -> np.ndarray | None:
        """The extra features the filter and the screener read for ``arch`` (``None``: none)."""
        return None if self._features is None else self._features(arch)

    def identity(self, arch: Arch, key: str) -> dict[str, Any]:
        """The ``candidate`` attribute of ``arch``, whose network key is ``key``."""
        space = self.components.space
        return tr.candidate_attr(self.claims.worker_id, arch, str(space.canonical(arch)), space.index(arch), key)

    def learns(self, arch: Arch) -> bool:
        """Whether ``arch``'s network can learn: its output depends on its input image."""
        depends = getattr(self.components.space, "output_depends_on_input", None)
        return True if depends is None else bool(depends(arch))

    def group_of(self, arch: Arch | str) -> str | None:
        """The screener's group of ``arch``: the structure of its deployed network where the space
        defines one (`Screened.group`)."""
        deployed_key = getattr(self.components.space, "deployed_key", None)
        return None if deployed_key is None else str(deployed_key(arch))

    def constrain(self, number: int, name: str, value: float) -> None:
        """Set Optuna constraint ``name`` of trial ``number`` (> 0: infeasible), before it is told,
        so that the samplers (TPE, NSGA-II) learn where the feasible networks are."""
        import optuna

        optuna.trial.Trial(self.study, self.trials.trial_id(number)).set_constraint(name, float(value))

    def tell(
        self,
        number: int,
        outcome: str,
        state: TrialState,
        attrs: dict[str, Any] | None = None,
        values: Sequence[float] | None = None,
    ) -> str:
        """Record ``outcome`` (and ``attrs``) on trial ``number`` and tell the study its ``state``
        (its ``values`` when ``COMPLETE``); returns ``outcome``."""
        self.trials.set_attrs(number, {**(attrs or {}), tr.OUTCOME: outcome})
        self.study.tell(number, values if state == self.states.COMPLETE else None, state=state, skip_if_finished=True)
        return outcome

    def abandon(self, number: int, message: str) -> None:
        """Close a trial cut short by an error or an interrupt (never raises)."""
        try:
            self.tell(number, oc.ABANDONED, self.states.FAIL, {tr.ERROR: message[:500]})
        except Exception:  # the storage may be what failed; the trial then stays RUNNING
            pass
