"""Steps 5-7 of a candidate: the full evaluation of a claimed network and the records it leaves.

Its accuracy is drawn with `evaluation_seed` (the study's seed and the trial number, so the answer
does not depend on which worker evaluates it or when), the oracle's final reported figure beside
it, throughput and energy at its energy-optimal clock (DVFS); the objective values are told to the
study and the claim is closed whatever happens. A claim another worker took over meanwhile has its
result discarded (`LOST`).
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.errors import NasEnergyError
from nasenergy.measurement import Measurement
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.record import ScoredFigures
from nasenergy.search.loop.worker_context import LOST, WorkerContext, is_candidate_error
from nasenergy.search.storage.claims import DONE, FAILED
from search_spaces import Arch

if TYPE_CHECKING:
    from nasenergy.dvfs.points import OptimalClock
    from nasenergy.oracles.evaluation import Evaluation

logger = logging.getLogger(__name__)

MIN_ACCURACY = "min_accuracy"
"""The Optuna constraint of ``--min-accuracy``: the floor minus the accuracy (> 0: below the floor)."""


class EnergyUnavailableError(NasEnergyError):
    """Energy per image is an objective but neither the meter nor the DVFS backend provides it."""

    exit_code = 2


def evaluation_seed(study_seed: int, trial_number: int) -> int:
    """The seed of one full evaluation: a 32-bit mix of the study's seed and the trial number.

    The benchmark oracle draws the training run it answers with this seed, so a study's answers
    are reproducible whatever the number of workers or the order in which they finish.
    """
    return int(np.random.SeedSequence([int(study_seed), int(trial_number)]).generate_state(1)[0])


class EvaluationStep:
    """Evaluates claimed networks of one worker (`evaluate`) and settles a claim whose trial
    another worker finished (`settle_finished`)."""

    def __init__(self, ctx: WorkerContext) -> None:
        self.ctx = ctx

    def evaluate(
        self, number: int, arch: Arch, key: str, measurement: Measurement, *, seed_number: int | None = None
    ) -> str:
        """Steps 5-7 for a claimed network; closes the claim whatever happens.

        ``seed_number``: the trial number the evaluation seed derives from (default ``number``;
        an adopted claim keeps its original trial's seed).
        """
        ctx = self.ctx
        config, components, claims = ctx.config, ctx.components, ctx.claims
        seed = evaluation_seed(config.seed, number if seed_number is None else seed_number)
        try:
            evaluation = components.oracle.evaluate(arch, config.dataset, seed=seed)
            final = self._final(arch)
            clock = components.optimal_clock(arch, measurement) if components.optimal_clock else None
            scored = self._scored(measurement, evaluation, clock)
        except NasEnergyError as exc:
            if not is_candidate_error(exc):
                claims.release(key)
                raise
            if not claims.finish(key, FAILED, trial_number=number):
                return self.discard(number, key)
            return ctx.tell(number, oc.FAILED, ctx.states.FAIL, {tr.ERROR: str(exc)})
        except BaseException:
            claims.release(key)
            raise
        if not claims.owns(key):
            return self.discard(number, key)
        if config.min_accuracy is not None:  # > 0: infeasible, and the sampler learns it
            ctx.constrain(number, MIN_ACCURACY, float(config.min_accuracy) - scored.accuracy_pct)
        values = scored.values(ctx.objectives)
        result = {tr.RESULT: tr.result_attr(evaluation, scored, clock, seed=seed, final=final)}
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            outcome = ctx.tell(number, oc.EVALUATED, ctx.states.COMPLETE, result, values)
        except UpdateFinishedTrialError:  # the worker that took the claim over told it first
            return self.settle_finished(number, key)
        claims.finish(key, DONE, trial_number=number)
        return outcome

    def settle_finished(self, number: int, key: str) -> str:
        """This worker's claimed trial was finished by another worker: close the claim if it is
        still this worker's (the other worker's result stands), else discard this result."""
        ctx = self.ctx
        trial = ctx.trials.get(number)
        if trial.state == ctx.states.COMPLETE and ctx.claims.finish(key, DONE):
            return oc.EVALUATED
        if trial.state != ctx.states.COMPLETE:
            ctx.claims.release(key)  # its trial was closed unfinished: the slot goes back
        return self.discard(number, key)

    def discard(self, number: int, key: str) -> str:
        """Drop the result of a claim another worker took over, with one line."""
        logger.warning(
            "note: trial %s: another worker took over the claim on %s while this worker was silent for longer "
            "than --lease-s (%s s); this worker's result is discarded (the network is counted once)",
            number, key, f"{self.ctx.config.lease_s:g}",
        )
        return LOST

    def _final(self, arch: Arch) -> dict[str, Any]:
        """The oracle's final reported figure (``report``), or ``{"error": ...}`` when it has none:
        it is reported beside the objectives, never searched on, so its absence fails nothing."""
        oracle = self.ctx.components.oracle
        report = getattr(oracle, "report", None)
        if report is None:
            return {"error": f"{type(oracle).__name__} has no report method"}
        try:
            return report(arch, self.ctx.config.dataset).as_dict()
        except NasEnergyError as exc:
            return {"error": str(exc)[:500]}

    def _scored(self, measurement: Measurement, evaluation: Evaluation, clock: OptimalClock | None) -> ScoredFigures:
        """The objective figures: throughput and energy at the optimal clock (else the default)."""
        throughput: float
        energy: float | None
        if clock is not None:
            throughput, energy = clock.best.throughput_img_per_s, clock.best.energy_j_per_img
            source = str(clock.source)
            thr_source = energy_source = source
        else:
            throughput, energy = measurement.throughput_img_per_s, measurement.energy_j_per_img
            thr_source = energy_source = measurement.source
        if "energy" in self.ctx.config.objectives and (energy is None or not math.isfinite(float(energy))):
            raise EnergyUnavailableError(
                f"energy per image is unavailable from the {measurement.device_name} meter; leave energy "
                "out of --objectives (e.g. --objectives accuracy,throughput) or measure on a GPU"
            )
        return ScoredFigures(
            accuracy_pct=float(evaluation.accuracy_pct),
            throughput_img_per_s=float(throughput),
            energy_j_per_img=None if energy is None else float(energy),
            throughput_source=str(thr_source),
            energy_source=str(energy_source) if energy is not None else None,
        )
