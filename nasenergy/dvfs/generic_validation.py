"""Validation of the generic DVFS model: a GPU held out whole, and a power-capped card.

One job: score the generic parameters (`nasenergy.dvfs.generic.generic_params`), built from other
GPUs' calibrations and only what NVML would report, on measured sweeps: `leave_one_gpu_out`
predicts each GPU's workloads from the other GPUs (`GpuSweeps` in, `GpuHoldOutResult` out, with
the model's saving band), `capped_card` a card whose top clocks its power cap held lower
(`CappedCardResult`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nasenergy.dvfs.clock_choice import EXPECTED, POINT, saving_band
from nasenergy.dvfs.measurement_clock import optimal_clock_for_observation
from nasenergy.dvfs.calibration import calibrate
from nasenergy.dvfs.generic import GpuFacts, generic_params
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.dvfs.validation_scores import (CsvRow, consistent_default_point, model_choice, probe_index, regret,
                                              two_point_rmse)

__all__ = ["CappedCardResult", "GpuHoldOutResult", "GpuSweeps", "capped_card", "leave_one_gpu_out"]


@dataclass(frozen=True)
class GpuHoldOutResult(CsvRow):
    """One workload of a GPU held out whole: scored with the generic model built from the other
    GPUs' calibrations and this GPU's NVML-like facts (fractions, MHz).

    ``band_low_frac``/``band_high_frac`` are the model's saving band at its chosen clock;
    ``measured_saving_in_band`` whether the measured saving at that clock lies inside it.
    The chosen clock follows the ``expected`` rule; ``point_clock_mhz``/``regret_point_frac`` are
    the ``point`` rule's.
    """

    gpu: str
    workload: str
    group: str
    default_clock_mhz: float
    true_best_clock_mhz: float
    generic_clock_mhz: float
    regret_frac: float
    regret_default_frac: float
    true_saving_frac: float
    predicted_saving_frac: float
    measured_saving_at_choice_frac: float
    band_low_frac: float
    band_high_frac: float
    measured_saving_in_band: bool
    alpha_predictor: str
    point_clock_mhz: float
    regret_point_frac: float
    consistent_default_point: bool
    expected_saving_frac: float = math.nan
    two_point_clock_mhz: float = math.nan
    regret_two_point_frac: float = math.nan


@dataclass(frozen=True)
class GpuSweeps:
    """All sweeps of one GPU and the facts NVML would give about it.

    Attributes:
        key: short identifier (a published set's key).
        gpu: GPU description.
        sweeps: its workloads' sweeps.
        power_limit_w: board power limit, watts.
        idle_power_w: idle board power, watts; ``None``: the lowest power in the sweeps.
    """

    key: str
    gpu: str
    sweeps: Sequence[Sweep]
    power_limit_w: float
    idle_power_w: float | None = None


def _idle(g: GpuSweeps) -> float:
    return g.idle_power_w if g.idle_power_w is not None else float(min(s.p.min() for s in g.sweeps))


def leave_one_gpu_out(gpus: Sequence[GpuSweeps], *,
                      progress: Callable[[str], None] | None = None) -> list[GpuHoldOutResult]:
    """Predict each GPU's workloads with the generic model of the *other* GPUs.

    Every GPU is calibrated on its own sweeps; for the held-out one, the generic parameters
    (`nasenergy.dvfs.generic.generic_params`) take the other GPUs' calibrated sets as references
    and only what NVML would report about the held-out GPU: its clocks (those of its sweeps), its
    power limit and idle power, and each workload's default-clock time, power and counters. The
    chosen clock (``expected`` rule over the band of those references' shapes, never the held-out
    GPU's own) is scored on the workload's measured sweep.
    """
    if len(gpus) < 2:
        raise ValueError("leave-one-GPU-out needs at least two GPUs")
    fitted = {g.key: calibrate(list(g.sweeps), name=g.key, gpu=g.gpu, device_patterns=(g.gpu,),
                               power_limit_w=g.power_limit_w, idle_power_w=g.idle_power_w)
              for g in gpus}
    cals = {k: c.params for k, c in fitted.items()}
    # residual of the two-clock alpha, from the other GPUs' sweeps only (the largest of theirs)
    own_r2 = {g.key: two_point_rmse(cals[g.key], g.sweeps, dict(fitted[g.key].alphas))
              for g in gpus}
    r2 = {g.key: max(v for k, v in own_r2.items() if k != g.key) for g in gpus}
    out: list[GpuHoldOutResult] = []
    for g in gpus:
        if progress is not None:
            progress(g.key)
        refs = [cals[k] for k in cals if k != g.key]
        clocks = sorted({f for s in g.sweeps for f in s.clocks_mhz})
        base = GpuFacts(device_name=g.gpu, supported_clocks_mhz=tuple(clocks),
                        power_limit_w=g.power_limit_w, idle_power_w=_idle(g),
                        source="the held-out GPU's sweeps (as NVML would report them)")
        for s in g.sweeps:
            facts = dataclasses.replace(base, loaded_sm_clock_mhz=s.default_clock_mhz,
                                        loaded_power_w=s.power_w[-1])
            params = dataclasses.replace(generic_params(facts, refs),
                                         supported_clocks_mhz=s.clocks_mhz,
                                         default_clock_mhz=s.default_clock_mhz)
            model = DvfsModel(params)
            obs = WorkloadObservation(time_s_per_img=s.time_s[-1], power_w=s.power_w[-1],
                                      sm_clock_mhz=s.default_clock_mhz, sm_active=s.sm_active,
                                      dram_active=s.dram_active, gpu_busy=s.gpu_busy)
            feats = obs.features(params)
            used = next(a for a in params.alpha_predictors if a.usable_with(feats))
            alpha = model.alpha(obs)
            opt, _ = model_choice(model, s, obs, alpha, used.rmse, EXPECTED,
                                   shape_references=refs)
            opt_point, _ = model_choice(model, s, obs, alpha, choice=POINT)
            j = probe_index(s)
            two_clock = two_regret = math.nan
            if j is not None:
                a2 = model.alpha(dataclasses.replace(
                    obs, neighbour_clock_mhz=float(s.f[j]),
                    neighbour_time_s_per_img=float(s.time_s[j])))
                opt2, _ = model_choice(model, s, obs, a2, r2[g.key], EXPECTED,
                                        shape_references=refs)
                two_clock, two_regret = opt2.sm_clock_mhz, regret(s, opt2.sm_clock_mhz)
            _, exp_backend = model_choice(model, s, obs, alpha, used.rmse, EXPECTED,
                                           shape_references=refs)
            lo, hi = saving_band(params, obs, opt.sm_clock_mhz, alpha, shape_references=refs)
            i = int(np.argmin(np.abs(s.f - opt.sm_clock_mhz)))
            measured_saving = float(1.0 - s.energy[i] / s.energy[-1])
            out.append(GpuHoldOutResult(
                gpu=g.gpu, workload=s.workload, group=s.group,
                default_clock_mhz=s.default_clock_mhz,
                true_best_clock_mhz=float(s.f[int(np.argmin(s.energy))]),
                generic_clock_mhz=opt.sm_clock_mhz, regret_frac=regret(s, opt.sm_clock_mhz),
                regret_default_frac=float(s.energy[-1] / s.energy.min() - 1.0),
                true_saving_frac=float(1.0 - s.energy.min() / s.energy[-1]),
                predicted_saving_frac=opt.energy_saving_frac,
                measured_saving_at_choice_frac=measured_saving, band_low_frac=lo,
                band_high_frac=hi, measured_saving_in_band=bool(lo - 1e-12 <= measured_saving <= hi + 1e-12),
                alpha_predictor="+".join(used.features) or "constant",
                point_clock_mhz=opt_point.sm_clock_mhz,
                regret_point_frac=regret(s, opt_point.sm_clock_mhz),
                consistent_default_point=consistent_default_point(s),
                expected_saving_frac=float(
                    1.0 - exp_backend.probe(opt.sm_clock_mhz).energy_j_per_img / float(s.energy[-1])),
                two_point_clock_mhz=two_clock, regret_two_point_frac=two_regret))
    return out


# ------------------------------------------------------------------ a power-capped card
@dataclass(frozen=True)
class CappedCardResult(CsvRow):
    """A power-capped card without a calibrated set, seen at its top requested clock, under one
    way of starting the curve (``start``): from the clock it held under the cap (read during the
    run) or, as if that clock were not known, from the requested one. Scored on its measured
    sweep (nearest measured held clock)."""

    gpu: str
    workload: str
    start: str
    requested_clock_mhz: float
    held_clock_mhz: float
    power_w: float
    power_limit_w: float
    idle_power_w: float
    idle_power_source: str
    chosen_clock_mhz: float
    true_best_clock_mhz: float
    regret_frac: float
    predicted_saving_frac: float
    measured_saving_at_choice_frac: float
    label: str


def capped_card(requested_mhz: Sequence[float], held_mhz: Sequence[float],
                time_s: Sequence[float], power_w: Sequence[float], *, gpu: str, workload: str,
                power_limit_w: float, references: Sequence[GpuDvfsParams],
                idle_power_w: float | None = None) -> list[CappedCardResult]:
    """The generic model on a card whose top requested clocks were held lower by its power cap.

    The default run is the one at the highest requested clock: its time, power and the clock it
    held. ``held clock`` builds the facts with that held clock and a power cap (what NVML reports
    during such a run); ``requested clock`` takes the requested clock as the clock run (the
    model's view before it read the held clock). The other runs are scored by their held clock.
    """
    order = np.argsort(np.asarray(requested_mhz, dtype=float))
    req = np.asarray(requested_mhz, dtype=float)[order]
    held = np.asarray(held_mhz, dtype=float)[order]
    t = np.asarray(time_s, dtype=float)[order]
    pw = np.asarray(power_w, dtype=float)[order]
    e = t * pw
    i_best = int(np.argmin(e))
    out = []
    for start, f0 in (("held clock", float(held[-1])), ("requested clock", float(req[-1]))):
        clocks = tuple(sorted(set(float(c) for c in req) | {float(held[-1])}))
        facts = GpuFacts(device_name=gpu, supported_clocks_mhz=clocks, power_limit_w=power_limit_w,
                         idle_power_w=idle_power_w, loaded_sm_clock_mhz=f0,
                         loaded_power_w=float(pw[-1]), power_capped=start == "held clock",
                         source="the sweep (as NVML would report it)")
        params = generic_params(facts, references)
        obs = WorkloadObservation(time_s_per_img=float(t[-1]), power_w=float(pw[-1]),
                                  sm_clock_mhz=f0, power_capped=start == "held clock")
        opt = optimal_clock_for_observation(params, obs, source="measured")
        i = int(np.argmin(np.abs(held - opt.sm_clock_mhz)))
        out.append(CappedCardResult(
            gpu=gpu, workload=workload, start=start, requested_clock_mhz=float(req[-1]),
            held_clock_mhz=float(held[-1]), power_w=float(pw[-1]), power_limit_w=power_limit_w,
            idle_power_w=params.idle_power_w,
            idle_power_source=(params.source_of("idle_power_w") or "").split(":")[0],
            chosen_clock_mhz=opt.sm_clock_mhz, true_best_clock_mhz=float(held[i_best]),
            regret_frac=float(e[i] / e.min() - 1.0), predicted_saving_frac=opt.energy_saving_frac,
            measured_saving_at_choice_frac=float(1.0 - e[i] / e[-1]), label=opt.label))
    return out
