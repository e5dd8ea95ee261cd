"""Synthetic candidates with a known truth, for testing code that uses the filters.

Every figure here is made up by a documented formula (``source="modelled"``,
``device_name="synthetic"``); nothing is measured. For candidate ``i``:

* ``log10 FLOPs ~ Uniform(6, 9)``; ``params = FLOPs / 100 * exp(Normal(0, 0.3))``;
* ``utilization = clip(0.05 + 0.25 * (log10 FLOPs - 6) + Normal(0, utilization_noise), 0.005, 1)``
  (bigger networks use the device better);
* ``throughput = utilization * peak / FLOPs`` with ``peak = 1e14`` FLOP/s;
* board power ``100 + 600 * sqrt(utilization)`` W and ``energy = power / throughput``;
* ``accuracy = 50 + 40 * (1 - exp(-(log10 FLOPs - 6))) + utilization_effect * (utilization - 0.45)
  + Normal(0, accuracy_noise)`` percent.

So accuracy rises with size and, at equal size, with utilization, while throughput and energy
worsen with size: a real three-way trade-off.
"""

from __future__ import annotations

import math

import numpy as np

from nasenergy.filter.records import Observation
from nasenergy.measurement import Measurement

SYNTHETIC_PEAK_FLOPS_PER_S = 1e14


def synthetic_observations(
    n: int,
    seed: int,
    *,
    utilization_noise: float = 0.05,
    accuracy_noise: float = 1.5,
    utilization_effect: float = 20.0,
    with_energy: bool = True,
) -> list[Observation]:
    """``n`` synthetic evaluated candidates (see the module docstring for the formulas).

    Args:
        n: how many.
        seed: seeds a private `numpy.random.Generator`.
        utilization_noise: spread of utilization around its size trend.
        accuracy_noise: spread of accuracy, percentage points.
        utilization_effect: accuracy points per unit of utilization at equal size.
        with_energy: ``False`` leaves energy unavailable (as on a device without a counter).
    """
    rng = np.random.default_rng(seed)
    log_flops = rng.uniform(6.0, 9.0, n)
    out = []
    for lf in log_flops:
        flops = 10.0**lf
        params = int(flops / 100 * math.exp(rng.normal(0, 0.3)))
        util = float(np.clip(0.05 + 0.25 * (lf - 6) + rng.normal(0, utilization_noise), 0.005, 1.0))
        thr = util * SYNTHETIC_PEAK_FLOPS_PER_S / flops
        power = 100.0 + 600.0 * math.sqrt(util)
        energy = power / thr if with_energy else None
        acc = 50 + 40 * (1 - math.exp(-(lf - 6))) + utilization_effect * (util - 0.45) + rng.normal(0, accuracy_noise)
        m = Measurement(
            device_name="synthetic",
            precision="fp32",
            batch_size=256,
            input_shape=(3, 32, 32),
            throughput_img_per_s=thr,
            latency_ms_per_batch=1000.0 * 256 / thr,
            macs_per_img=flops / 2,
            flops_per_img=flops,
            params=params,
            peak_flops_per_s=SYNTHETIC_PEAK_FLOPS_PER_S,
            peak_source="datasheet",
            utilization=util,
            energy_j_per_img=energy,
            energy_basis="total" if with_energy else "unavailable",
            avg_power_w=power if with_energy else None,
            idle_power_w=100.0 if with_energy else None,
            sm_clock_mhz=None,
            n_repeats=1,
            throughput_cv=0.0,
            energy_cv=0.0 if with_energy else None,
            measure_cost_s=0.0,
            source="modelled",
        )
        out.append(Observation(measurement=m, accuracy=float(acc)))
    return out
