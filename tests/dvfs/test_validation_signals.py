"""Rank correlation, the two-clock probe and the power-capped card of the DVFS validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasenergy.dvfs.params import shipped_params
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.dvfs.validation import PROBE_CLOCK_FRAC, capped_card, probe_index, spearman
from shared_files import require_dvfs_data


def test_spearman_orders_ties_and_constants() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486833, abs=1e-6)
    assert math.isnan(spearman([5, 5, 5], [1, 2, 3]))  # one clock for all: undefined
    assert math.isnan(spearman([1, float("nan"), 2], [1, 2, 3]))  # fewer than three pairs


def test_probe_is_the_highest_clock_at_or_below_ninety_percent() -> None:
    s = Sweep(gpu="g", workload="w", clocks_mhz=(800.0, 1200.0, 1250.0, 1300.0, 1400.0),
              time_s=(2.0, 1.5, 1.45, 1.4, 1.3), power_w=(100.0, 150.0, 160.0, 170.0, 200.0))
    j = probe_index(s)
    assert j == 2 and s.clocks_mhz[j] <= PROBE_CLOCK_FRAC * 1400.0
    short = Sweep(gpu="g", workload="w", clocks_mhz=(1300.0, 1400.0), time_s=(1.4, 1.3),
                  power_w=(170.0, 200.0))
    assert probe_index(short) is None


def test_capped_card_from_the_held_clock_beats_the_requested_one() -> None:
    from nasenergy.dvfs.published import (CAPPED_SWEEP_FILE, CAPPED_SWEEP_POWER_LIMIT_W,
                                          load_capped_sweep)

    require_dvfs_data(CAPPED_SWEEP_FILE)
    c = load_capped_sweep()
    refs = [p for p in shipped_params().values() if p.provenance == "calibrated"]
    held, requested = capped_card(c["requested_mhz"], c["held_mhz"], c["time_s"], c["power_w"],
                                  gpu="NVIDIA RTX A4000", workload="fp32_kernel",
                                  power_limit_w=CAPPED_SWEEP_POWER_LIMIT_W, references=refs)
    assert held.start == "held clock" and held.label == "modelled (generic)"
    assert held.chosen_clock_mhz < held.held_clock_mhz < held.requested_clock_mhz
    assert held.idle_power_source == "estimated"
    assert held.regret_frac <= requested.regret_frac
    gap_held = abs(held.predicted_saving_frac - held.measured_saving_at_choice_frac)
    gap_req = abs(requested.predicted_saving_frac - requested.measured_saving_at_choice_frac)
    assert gap_held < gap_req
    assert np.isfinite(held.regret_frac)
