"""The parts a search worker uses, built from a `SearchConfig`: space, meter, oracle, filter, DVFS.

`build_components` is the default factory. Code that brings its own parts (tests with a fake
meter, a user with a custom oracle) passes another factory with the same signature to
`nasenergy.search.run_search`; with several worker processes it must be an importable module-level
function, since each worker process builds its own parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement
from nasenergy.search.config import SearchConfig


@dataclass
class Components:
    """What one worker needs.

    Attributes:
        space: the search space (``search_spaces.get_space(...)``).
        measure: the cheap measurement of one architecture at the default clock.
        oracle: the accuracy oracle (``evaluate(arch, dataset, seed=None) -> Evaluation``).
        filter: the utilization filter (``admit``/``observe``).
        optimal_clock: the energy-optimal clock of a measured candidate, or ``None`` to score
            at the default clock (``--dvfs none``).
        describe: one line per part, for ``env.json`` and the report.
    """

    space: Any
    measure: Callable[[Any], Measurement]
    oracle: Any
    filter: Any
    optimal_clock: Callable[[Measurement], Any] | None
    describe: dict[str, str] = field(default_factory=dict)


ComponentsFactory = Callable[[SearchConfig], Components]


def make_filter(config: SearchConfig) -> Any:
    """The utilization filter of ``config`` (mode, target recall, the search's objectives).

    Raises:
        UsageError: an option the filter refuses (e.g. a target recall of 1 for ``dominance``).
    """
    from nasenergy.filter import FilterError, UtilizationFilter

    if config.filter == "none":
        return UtilizationFilter.create("none")
    options: dict[str, Any] = {"target_recall": config.target_recall, "objectives": tuple(config.objectives)}
    if config.filter == "dominance":
        options["seed"] = config.seed
    try:
        return UtilizationFilter.create(config.filter, **options)
    except FilterError as exc:
        raise UsageError(f"--filter {config.filter}: {exc}") from None


def arch_measurer(meter: Any, space: Any, config: SearchConfig) -> Callable[[Any], Measurement]:
    """A function measuring one architecture with ``meter``.

    Meters with ``measure_arch`` (the recorded profile, the fake meter) are asked directly; others
    measure the built network.
    """
    if hasattr(meter, "measure_arch"):
        def measure(arch: Any) -> Measurement:
            return meter.measure_arch(
                arch, precision=config.precision, batch_size=config.batch_size, space=space, dataset=config.dataset
            )
    else:
        def measure(arch: Any) -> Measurement:
            model = space.build(arch, config.dataset)
            return meter.measure(
                model, space.input_shape(config.dataset), batch_size=config.batch_size, precision=config.precision
            )
    return measure


def build_components(config: SearchConfig) -> Components:
    """The default parts for ``config``: the real meter, oracle, filter and DVFS backend."""
    from nasenergy.hardware import select_meter
    from nasenergy.oracles import load_oracle
    from search_spaces import get_space

    space = get_space(config.space)
    meter = select_meter(config.hardware)
    oracle = load_oracle(config.benchmark, space)
    optimal_clock = None
    if config.dvfs != "none":
        from nasenergy.dvfs import make_optimizer

        optimal_clock = make_optimizer(config.dvfs, meter=meter, allow_clock_control=config.allow_clock_control)
    return Components(
        space=space,
        measure=arch_measurer(meter, space, config),
        oracle=oracle,
        filter=make_filter(config),
        optimal_clock=optimal_clock,
        describe={"meter": repr(meter), "oracle": oracle.describe(), "dvfs": config.dvfs},
    )
