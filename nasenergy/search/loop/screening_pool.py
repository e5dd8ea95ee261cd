"""The screening pool of one worker (``--screen K``, `nasenergy.search.loop.screening`).

An admitted candidate waits in the pool, its trial open, until ``K`` candidates were measured since
the last screening; the one of largest expected hypervolume improvement goes on to be claimed and
evaluated, the few next best that still promise one wait for the next screening, the others are
recorded ``filtered`` (screened out) and told ``FAIL``, which the sampler's model leaves out.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from nasenergy.filter.energy_bound import optimistic_figures
from nasenergy.filter.records import Decision
from nasenergy.filter.trial_attrs import CHEAP_ATTR, cheap_attr
from nasenergy.measurement import Measurement
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.search.command.components import Components
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.filter_features import cheap_columns
from nasenergy.search.loop.claim_step import ClaimStep
from nasenergy.search.loop.screening import Screened, Screener
from nasenergy.search.loop.worker_context import LOST, WorkerContext
from nasenergy.search.storage.claims import FILTERED
from search_spaces import Arch


class Pooled(NamedTuple):
    """A screening pool member's trial and network (`Screened.payload`)."""

    number: int
    arch: Arch
    key: str
    decision: Decision


def make_screener(config: SearchConfig, components: Components) -> Screener:
    """The screener of ``--screen``: hardware figures from the filter's optimistic bound at
    the optimal clock where it has one (the modelled figures themselves under a modelled DVFS
    step), else the default-clock measurement."""
    bound = getattr(components.filter, "energy_bound", None)

    def hardware(m: Measurement) -> tuple[float, float]:
        if bound is not None:
            opt = optimistic_figures(bound, m)
            return opt.throughput_img_per_s_upper, opt.energy_j_per_img_lower
        return m.throughput_img_per_s, math.nan if m.energy_j_per_img is None else m.energy_j_per_img

    return Screener(tuple(config.objectives), hardware, seed=config.seed,
                    cheap_columns=cheap_columns(config.filter_features))


class ScreeningPool:
    """The candidates one worker's filter admitted that wait for the next screening.

    Attributes:
        screener: the screener of ``--screen`` (``None``: no screening, ``--screen`` 1 or less).
    """

    def __init__(self, ctx: WorkerContext, claim_step: ClaimStep) -> None:
        self.ctx = ctx
        self.claim_step = claim_step
        self.screener = make_screener(ctx.config, ctx.components) if ctx.config.screen > 1 else None
        self._members: list[Screened] = []
        self._n_kept = 0  # the first _n_kept of the pool were kept from the last screening
        self._round_measured = 0  # candidates measured since the last screening

    @property
    def waiting(self) -> bool:
        """Whether any candidate waits in the pool."""
        return bool(self._members)

    def measured(self) -> None:
        """Count one candidate measured since the last screening."""
        self._round_measured += 1

    def due(self) -> bool:
        """Whether a screening is due: candidates wait and ``--screen`` were measured since the last."""
        return bool(self._members) and self._round_measured >= self.ctx.config.screen

    def add(self, measurement: Measurement, features: np.ndarray | None, number: int, arch: Arch, key: str,
            decision: Decision) -> None:
        """Pool an admitted candidate (trial ``number``, network ``key``); its trial stays open."""
        self._members.append(Screened(measurement, features, Pooled(number, arch, key, decision),
                                      self.ctx.group_of(arch)))

    def observe(self, measurement: Measurement, features: np.ndarray | None, row: list[float], arch: Arch | str) -> None:
        """Teach the screener (if any) one finished evaluation: its objective values ``row``."""
        if self.screener is not None:
            self.screener.observe(measurement, features, row, self.ctx.group_of(arch))

    def settle(self) -> str:
        """Screen the pool: a candidate the filter now rejects (another worker's evaluations moved
        the front since it was admitted) is told filtered; the one the screener ranks first is
        evaluated; the others are told screened out."""
        from optuna.exceptions import UpdateFinishedTrialError  # lazy: optuna is imported once a search runs

        assert self.screener is not None
        # this round's candidates first (the cold start evaluates the sampler's first proposal), then those kept
        pool = self._members[self._n_kept:] + self._members[:self._n_kept]
        self._members, self._n_kept = [], 0
        self._round_measured = 0
        try:
            pool = [c for c in pool if self._still_admitted(c)]
            if not pool:
                return oc.FILTERED
            ranking = self.screener.choose(pool)
            chosen = pool[ranking.chosen]
            self._members = [pool[i] for i in ranking.kept]  # their trials stay open for the next screening
            self._n_kept = len(self._members)
            for i, cand in enumerate(pool):
                if i != ranking.chosen and i not in ranking.kept:
                    self._dismiss(cand, ranking.reason)
            p = chosen.payload
            if len(pool) > 1:
                reason = f"{p.decision.reason}; chosen by screening among {len(pool)} measured candidates"
                decision = dataclasses.replace(p.decision, reason=reason)
                self.ctx.trials.set_attrs(p.number, {CHEAP_ATTR: cheap_attr(chosen.measurement, decision)})
            return self.claim_step.claim_and_evaluate(p.number, p.arch, p.key, chosen.measurement)
        except UpdateFinishedTrialError:
            return LOST
        except BaseException as exc:
            self._members, self._n_kept = [], 0
            for cand in pool:
                self.ctx.abandon(cand.payload.number, f"{type(exc).__name__}: {exc}".strip())
            raise

    def _still_admitted(self, cand: Screened) -> bool:
        """Ask the filter again about a pooled candidate (against the current front); a rejected
        one is told filtered as the filter's own rejects are."""
        ctx = self.ctx
        p = cand.payload
        if p.decision.n_observed == getattr(ctx.components.filter, "n_observed", None):
            return True  # nothing learnt since it was admitted
        decision = ctx.components.filter.admit(cand.measurement, ctx.front.points, features=cand.features)
        if decision.admit:
            return True
        ctx.claims.record(p.key, str(p.arch), p.number, FILTERED)
        ctx.tell(p.number, oc.FILTERED, ctx.states.PRUNED, {CHEAP_ATTR: cheap_attr(cand.measurement, decision)})
        return False

    def _dismiss(self, cand: Screened, reason: str) -> None:
        """Tell a screened-out candidate ``filtered``, its decision saying why. Its trial ends
        ``FAIL``, which Optuna's samplers leave out of their models: the filter admitted it, so
        telling it ``PRUNED`` (what TPE reads as a poor candidate) would teach the sampler that
        the promising region it came from is poor."""
        ctx = self.ctx
        p = cand.payload
        decision = dataclasses.replace(p.decision, admit=False, reason=reason)
        ctx.claims.record(p.key, str(p.arch), p.number, FILTERED)
        ctx.tell(p.number, oc.FILTERED, ctx.states.FAIL, {CHEAP_ATTR: cheap_attr(cand.measurement, decision)})

    def settle_early(self) -> bool:
        """A guard is about to stop the worker: evaluate the best pooled candidate first, if any.
        Returns whether there was a pool."""
        if not self._members:
            return False
        self.ctx.on_candidate(self.settle())
        return True

    def drain(self, outcome: str, message: str) -> None:
        """Close every pooled trial as ``outcome`` (``FAIL``; never raises)."""
        pool, self._members, self._n_kept = self._members, [], 0
        for cand in pool:
            try:
                self.ctx.tell(cand.payload.number, outcome, self.ctx.states.FAIL, {tr.ERROR: message})
            except Exception:  # the storage may be what failed; close_abandoned_trials repairs it
                pass
