"""Convenience entry points: a measurement's optimal clock, a cheap optimistic energy bound, and
the user-facing curve table of ``python -m nasenergy.profile ... --dvfs``.

This module's job is to gather them in one place; they are defined by
`nasenergy.dvfs.measurement_clock` (a measurement's parameter set and optimal clock, the bound),
`nasenergy.dvfs.clock_choice` (the clock-choice rules and the uncertainty band) and
`nasenergy.dvfs.curve_view` (the curve table and plot)."""

from __future__ import annotations

from nasenergy.dvfs.clock_choice import (CHOICES, EXPECTED, POINT, band_members, choose_clock, clock_backend,
                                         saving_band, search_clock)
from nasenergy.dvfs.curve_view import show_curve
from nasenergy.dvfs.measurement_clock import (DEFAULT_BOUND_MARGIN, candidate_clocks, is_power_capped,
                                              optimal_clock_for, optimal_clock_for_observation,
                                              optimistic_energy_bound, resolve_params)

__all__ = ["CHOICES", "DEFAULT_BOUND_MARGIN", "EXPECTED", "POINT", "band_members", "candidate_clocks", "choose_clock",
           "clock_backend", "is_power_capped", "optimal_clock_for", "optimal_clock_for_observation",
           "optimistic_energy_bound", "resolve_params", "saving_band", "search_clock", "show_curve"]
