"""The Optuna study of a run: its directions, objective names, samplers and start-up repairs."""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any

from nasenergy.errors import UsageError
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.objectives import objectives_for
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.config_values import check_choice
from nasenergy.search.sampling.samplers import SAMPLER_KINDS
from nasenergy.search.storage.claims import RUNNING, ClaimStore, Reconciled, StoredTrial

if TYPE_CHECKING:
    from optuna import Study
    from optuna.samplers import BaseSampler
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial

logger = logging.getLogger(__name__)

WORKER_ATTR_PREFIX = "worker:"
"""Study user attributes ``worker:<id>`` describe each worker (rank, seed, host, parts)."""


def proposed_trials(study: Study) -> list[FrozenTrial]:
    """The study's trials that proposed a candidate: all but the ``WAITING`` ones (a network
    enqueued for a later trial, `nasenergy.search.loop.redirect`, is no candidate until it is asked)."""
    import optuna

    waiting = optuna.trial.TrialState.WAITING
    return [t for t in study.get_trials(deepcopy=False) if t.state != waiting]


def make_sampler(name: str, *, seed: int, budget: int) -> BaseSampler:
    """The seeded Optuna sampler registered as ``name`` (`nasenergy.search.sampling.samplers`: ``tpe``,
    ``nsga2``, ``random`` and any a user or plugin registers).

    Raises:
        UsageError: no sampler of that name.
    """
    check_choice("--sampler", name, SAMPLER_KINDS.choices())
    return SAMPLER_KINDS.get(name).create(seed=seed, budget=budget)


def trial_seed(seed: int, trial_number: int, stream: int = 0) -> int:
    """The seed of a sampler's random stream ``stream`` for trial ``trial_number`` of a run seeded
    ``seed`` (a 32-bit integer, the same in every process)."""
    import numpy as np  # lazy: numpy is heavy and only a running search needs it

    return int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(trial_number), int(stream)]).generate_state(1)[0])


def seed_per_trial(sampler: BaseSampler, seed: int) -> BaseSampler:
    """Make ``sampler``'s draws for trial N a function of ``seed``, N and the study's trials only.

    Optuna keeps a sampler's random state in its process: a study resumed in a new process (after
    Ctrl-C, a stall, a raised guard) would draw its next trial from a fresh stream, not from where
    the stopped run left it, and so end differently from an uninterrupted run of the same seed.
    Reseeding the sampler's streams (its own and, for TPE and NSGA-II, that of its inner random
    sampler) before each trial from ``(seed, trial number)`` removes that: one worker proposes
    the same trial N from the same history, however often the run was stopped before it. Samplers
    without such streams are returned unchanged.
    """
    holders = [sampler, getattr(sampler, "_random_sampler", None)]
    found_states = [getattr(h, "_rng", None) for h in holders if h is not None]
    lazy_states: list[Any] = [s for s in found_states if s is not None and hasattr(s, "rng")]
    if not lazy_states:
        return sampler
    before_trial = sampler.before_trial

    def reseeded_before_trial(study: Study, trial: FrozenTrial) -> None:
        for stream, state in enumerate(lazy_states):
            state.rng.seed(trial_seed(seed, trial.number, stream))
        before_trial(study, trial)

    sampler.before_trial = reseeded_before_trial  # type: ignore[method-assign]  # this sampler's hook, wrapped
    return sampler


def create_or_load_study(config: SearchConfig, storage: BaseStorage) -> Study:
    """Create the run's study (or load it) and check its directions.

    Raises:
        UsageError: a study of that name exists with other objectives.
    """
    import optuna

    objectives = objectives_for(config.objectives)
    directions = [o.sense for o in objectives]
    study = optuna.create_study(
        storage=storage, study_name=config.resolved_study_name, directions=directions, load_if_exists=True
    )
    found = [d.name.lower() for d in study.directions]
    if found != directions:
        raise UsageError(
            f"study {config.resolved_study_name!r} exists with directions {found}, not {directions}; "
            "use another --study-name"
        )
    if study.metric_names is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names([o.column for o in objectives])
    return study


def load_worker_study(config: SearchConfig, storage: BaseStorage, *, rank: int) -> Study:
    """The run's study as worker ``rank`` sees it: with its own sampler seeded ``seed + rank``
    (modulo 2^32),
    reseeded before each trial from the run's seed and the trial's number (`seed_per_trial`).
    Trial numbers are unique across workers, so workers still draw apart; and since a resumed
    run's worker has another rank than the stopped one had, the rank is left out of the per-trial
    seed: a resumed run proposes what an uninterrupted one would have."""
    import optuna

    seed = (config.seed + rank) % 2**32  # 32-bit, as the samplers' generators take it
    sampler = seed_per_trial(make_sampler(config.sampler, seed=seed, budget=config.budget), config.seed)
    return optuna.load_study(study_name=config.resolved_study_name, storage=storage, sampler=sampler)


class TrialAccess:
    """Trials of one study by number, through the storage (any process may touch any trial).

    Args:
        storage: the Optuna storage.
        study_name: the study.
    """

    def __init__(self, storage: BaseStorage, study_name: str) -> None:
        self.storage = storage
        self.study_id = storage.get_study_id_from_name(study_name)

    def trial_id(self, number: int) -> int:
        """The storage's id of trial ``number``."""
        return self.storage.get_trial_id_from_study_id_trial_number(self.study_id, number)

    def get(self, number: int) -> FrozenTrial:
        """The `FrozenTrial` of trial ``number``."""
        return self.storage.get_trial(self.trial_id(number))

    def set_attrs(self, number: int, attrs: dict[str, Any]) -> None:
        """Set user attributes of a trial that is not finished."""
        trial_id = self.trial_id(number)
        for key, value in attrs.items():
            self.storage.set_trial_user_attr(trial_id, key, value)

    def create_running_copy(self, original: FrozenTrial, keep_attrs: tuple[str, ...]) -> int:
        """A new RUNNING trial with ``original``'s parameters and the ``keep_attrs`` user
        attributes; returns its number."""
        import optuna

        template = optuna.trial.create_trial(
            state=optuna.trial.TrialState.RUNNING,
            params=original.params,
            distributions=original.distributions,
            user_attrs={k: v for k, v in original.user_attrs.items() if k in keep_attrs},
        )
        trial_id = self.storage.create_new_trial(self.study_id, template_trial=template)
        return self.storage.get_trial_number_from_id(trial_id)


def close_abandoned_trials(study: Study, trials: TrialAccess, claims: ClaimStore, *, everyone_dead: bool) -> int:
    """Mark ``abandoned`` (state FAIL) the running trials no live worker will finish.

    A trial still holding a running claim is left alone: a worker adopts the claim and finishes
    that very trial. Any other running trial is stale when

    * no worker of the study can be alive (``everyone_dead``, or no lease is open);
    * the study has spent its budget (no worker takes new work: a straggler's trial could only
      end as a duplicate or over the budget, and its worker skips a trial closed under it);
    * or its worker is known and its lease has expired (it died before recording its result).

    A trial whose worker died before even naming itself is closed by the first two rules: at the
    latest when the study ends.

    Args:
        study: the run's study.
        trials: access to its trials.
        claims: the study's claims.
        everyone_dead: no worker of the study is alive (the run folder is held exclusively).

    Returns:
        How many trials were closed.
    """
    import optuna

    running = optuna.trial.TrialState.RUNNING
    live = claims.live_workers()
    cells = claims.cells()
    claimed = {c.trial_number for c in cells if c.status == RUNNING}
    close_all = everyone_dead or not live or claims.status().complete
    closed = 0
    for t in study.get_trials(deepcopy=False, states=(running,)):
        worker = tr.worker_of(t)
        if t.number in claimed or not (close_all or (worker is not None and worker not in live)):
            continue
        try:
            trials.set_attrs(t.number, {tr.OUTCOME: oc.ABANDONED})
            study.tell(t.number, state=optuna.trial.TrialState.FAIL, skip_if_finished=True)
        except optuna.exceptions.UpdateFinishedTrialError:
            continue  # its worker finished it meanwhile
        closed += 1
    return closed


def reconcile_claims(study: Study, claims: ClaimStore, *, everyone_dead: bool, where: str) -> Reconciled:
    """Make the claims agree with the study's stored trials, saying in one line what changed: cells
    the study does not back are forgotten or opened again (`ClaimStore.reconcile`), and cells it
    proves are restored (`ClaimStore.restore`): the budget then counts exactly the evaluations whose
    results are stored.

    Args:
        study: the run's study.
        claims: the study's claims.
        everyone_dead: no worker of the study is alive (the run folder is held exclusively).
        where: the storage as the line names it (e.g. the journal file).
    """
    stored = {}
    for t in study.get_trials(deepcopy=False):
        candidate = t.user_attrs.get(tr.CANDIDATE)
        network = tr.network_of(candidate) if isinstance(candidate, dict) and candidate else None
        arch = candidate.get("arch") if isinstance(candidate, dict) else None
        stored[t.number] = StoredTrial(t.state.name, network, tr.measurement_of(t) is not None,
                                       outcome=t.user_attrs.get(tr.OUTCOME), arch=arch)
    done = claims.reconcile(stored, everyone_dead=everyone_dead)
    restored = claims.restore(stored)
    if restored:
        logger.warning(
            "warning: the claims lacked %d network(s) that %s records (a claims database deleted, emptied or older "
            "than the study); restored from the study, which holds what was spent", restored, where,
        )
    if done.changed:
        logger.warning(
            "warning: the claims recorded %d network(s) whose results %s does not hold (a journal cut short, or a "
            "storage restored from a copy); %d evaluation(s) are run again and %d network(s) count as unseen: the "
            "budget counts only stored evaluations",
            done.reopened + done.forgotten, where, done.reopened, done.forgotten,
        )
    return done
