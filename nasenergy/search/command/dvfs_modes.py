"""The DVFS mode registry: every ``--dvfs`` choice is one registered `DvfsMode`.

A mode builds the run's DVFS step (`nasenergy.search.loop.dvfs_steps.DvfsStep`: where each candidate's
energy-optimal clock comes from, and the matching energy bound of the dominance filter) from the
run's settings, its meter and its search space, or answers ``None`` to score at the default clock.
A new mode is one function plus one call::

    from nasenergy.search.command.dvfs_modes import DvfsMode, register_dvfs_mode
    register_dvfs_mode(DvfsMode("mine", make_my_step))  # make_my_step(config, meter, space)

An installed package adds its modes through the ``nasenergy.dvfs`` entry-point group
(`nasenergy._registry`). The built-in modes are described in `nasenergy.search.loop.dvfs_steps`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nasenergy._registry import Registry, resolve

if TYPE_CHECKING:
    from nasenergy.hardware.meter import ArchMeter, Meter
    from search_spaces import SpaceProtocol

StepFactory = Callable[..., Any]
"""``(config, meter, space) -> nasenergy.search.loop.dvfs_steps.DvfsStep | None``: the run's
`nasenergy.search.command.config.SearchConfig`, its meter and its search space (typed loosely here: the
config and the step types import this registry)."""

__all__ = ["DVFS_MODES", "DvfsMode", "StepFactory", "register_dvfs_mode"]


@dataclass(frozen=True)
class DvfsMode:
    """One ``--dvfs`` choice.

    Attributes:
        name: the ``--dvfs`` value.
        factory: ``(config, meter, space) -> DvfsStep | None`` (or a ``"module:attribute"``
            string naming it); ``None`` scores throughput and energy at the default clock. It
            raises `nasenergy.errors.UsageError` for a meter or data it cannot serve.
        changes_clocks: whether the mode sets the GPU's clocks (then `SearchConfig` asks for
            ``--allow-clock-control``).
        default_clock_only: whether the run always scores at the default clock (as ``none``
            does): no clock can beat the measured energy, so the dominance filter's energy bound
            is the measurement itself, without the optimism kept for a clock the search did not
            measure.
    """

    name: str
    factory: StepFactory | str
    changes_clocks: bool = False
    default_clock_only: bool = False

    def create(self, config: Any, meter: Meter | ArchMeter, space: SpaceProtocol) -> Any:
        """The DVFS step of this mode for a run, or ``None`` (no step)."""
        return resolve(self.factory)(config, meter, space)


DVFS_MODES: Registry[DvfsMode] = Registry("DVFS mode", plugin_group="nasenergy.dvfs")
"""The registered DVFS modes by ``--dvfs`` name."""


def register_dvfs_mode(mode: DvfsMode, *, replace: bool = False) -> DvfsMode:
    """Make ``mode`` selectable (``--dvfs``, `SearchConfig.dvfs`)."""
    return DVFS_MODES.register(mode.name, mode, replace=replace)


_STEPS = "nasenergy.search.loop.dvfs_steps"
register_dvfs_mode(DvfsMode("auto", f"{_STEPS}:auto_step"))
register_dvfs_mode(DvfsMode("modelled", f"{_STEPS}:modelled_step"))
register_dvfs_mode(DvfsMode("measured", f"{_STEPS}:measured_step", changes_clocks=True))
register_dvfs_mode(DvfsMode("recorded", f"{_STEPS}:recorded_step"))
register_dvfs_mode(DvfsMode("none", f"{_STEPS}:no_step", default_clock_only=True))
