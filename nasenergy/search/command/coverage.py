"""How much of the space a recorded profile can answer, and what that means for a run.

A recorded profile (``--hardware recorded``, or ``auto`` without a GPU) may hold only some of the
networks. A candidate outside it is recorded with outcome ``not_recorded``: it is not measured,
spends no budget, and is told to the sampler as pruned, which steers the sampler away from such
cells, so the search effectively runs over the recorded networks; the duplicate-aware TPE also
passes over them among its draws (`nasenergy.search.command.components.Components.covers`), which matters
where the recorded networks have no structure to learn (a random sample of SSS). `Coverage`
describes that share (`nasenergy.hardware.coverage`, a layer below, so a run's report can read
it); the run refuses a budget larger than the networks it can measure, and the default candidate
cap grows in proportion to the share of cells the profile cannot answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from nasenergy.errors import UsageError
from nasenergy.hardware.coverage import CELL_UNIT, CLASS_UNIT, Coverage
from nasenergy.hardware.meter import ArchMeter, Meter, RecordedProfile
from nasenergy.hardware.recorded import shape_to_str
from nasenergy.run.network_key import NetworkKeyFn, network_key_fn
from nasenergy.search.command.config import SearchConfig
from search_spaces import Arch, SearchSpace


def profile_coverage(meter: Meter | ArchMeter, space: SearchSpace, config: SearchConfig,
                     network_key: NetworkKeyFn | None = None) -> Coverage | None:
    """The coverage of ``meter``'s recorded profile at ``config``'s setting, or ``None`` for a meter
    that measures any network (it is no `nasenergy.hardware.meter.RecordedProfile`).

    Args:
        meter: a meter; a `nasenergy.hardware.recorded.RecordedMeter` is described.
        space: the search space.
        config: the run's settings (precision, batch size, dataset).
        network_key: the study's network key (`nasenergy.run.network_key`); default: the
            canonical class. Classes are counted as the study counts networks.
    """
    return survey_networks(meter, space, config, network_key).coverage


@dataclass(frozen=True)
class NetworkSurvey:
    """What a run learns from one pass over its space's cells at start (`survey_networks`).

    Attributes:
        coverage: the recorded profile's coverage (`profile_coverage`; ``None``: the meter measures
            any network).
        census: the networks the study can meet (`network_census`), counted over the profile's
            networks where the coverage is partial.
    """

    coverage: Coverage | None
    census: NetworkCensus


class _Tally:
    """Network keys split into those that can learn and those that cannot (`NetworkCensus`)."""

    def __init__(self) -> None:
        self.learnable: set[str] = set()
        self.cannot: set[str] = set()

    def add(self, key: str, learns: bool) -> None:
        (self.learnable if learns else self.cannot).add(key)

    def census(self) -> NetworkCensus:
        return NetworkCensus(len(self.learnable), frozenset(self.cannot - self.learnable))


def survey_networks(meter: Meter | ArchMeter, space: SearchSpace, config: SearchConfig,
                    network_key: NetworkKeyFn | None = None) -> NetworkSurvey:
    """The profile's coverage and the network census of a run, from one pass over ``space``'s cells
    (the same figures as `profile_coverage` and `network_census` over `profile_covers` where the
    coverage is partial, without enumerating the space twice).

    Args: as `profile_coverage`.
    """
    key_of = network_key or network_key_fn(space, "as_built")
    depends = getattr(space, "output_depends_on_input", None)
    recorded = isinstance(meter, RecordedProfile)
    in_profile = profile_covers(meter, config) if recorded else None
    covers = in_profile
    shape = shape_to_str(space.input_shape(config.dataset))
    if recorded and covers is None:  # a profile keyed by canonical class alone
        canonical = {
            r["canonical_arch"]
            for r in meter.rows()  # type: ignore[union-attr]
            if r["precision"] == config.precision and int(r["batch_size"]) == config.batch_size and r["input_shape"] == shape
        }

        def covers(arch: Arch) -> bool:
            return str(space.canonical(arch)) in canonical

    every, profiled = _Tally(), _Tally()
    networks: set[str] = set()
    covered: set[str] = set()
    cells = 0
    for arch in space.enumerate():
        key = key_of(arch)
        learns = depends is None or bool(depends(arch))
        every.add(key, learns)
        if covers is None:
            continue
        networks.add(key)
        if covers(arch):
            covered.add(key)
            cells += 1
            if in_profile is not None:
                profiled.add(key, learns)
    if not recorded:
        return NetworkSurvey(None, every.census())
    path = getattr(meter, "path", None)
    coverage = Coverage(
        profile=getattr(path, "name", None) or str(path or "recorded profile"),
        device_name=str(getattr(meter, "device_name", "unknown device")),
        space=str(space.name),
        setting=f"{config.precision}, batch {config.batch_size}, input {shape}",
        covered_classes=len(covered),
        total_classes=len(networks),
        covered_cells=cells,
        total_cells=int(space.size),
        unit=CELL_UNIT if len(networks) == int(space.size) else str(getattr(key_of, "unit", CLASS_UNIT)),
    )
    partial = not coverage.complete and in_profile is not None
    return NetworkSurvey(coverage, (profiled if partial else every).census())


def profile_covers(meter: Meter | ArchMeter, config: SearchConfig) -> Callable[[Arch], bool] | None:
    """Whether ``meter``'s recorded profile holds an architecture at ``config``'s setting, as a
    one-argument test (``None`` for a meter that cannot say)."""
    covers = getattr(meter, "covers", None)
    if covers is None:
        return None

    def covered(arch: Arch) -> bool:
        return bool(covers(arch, precision=config.precision, batch_size=config.batch_size, dataset=config.dataset))

    return covered


@dataclass(frozen=True)
class NetworkCensus:
    """The networks a study can meet, counted once at its start.

    Attributes:
        learnable: the networks it can evaluate (their output depends on their input).
        cannot_learn: the keys of the networks that cannot learn (recorded ``infeasible``, never
            evaluated, never proposed by a redirection).
    """

    learnable: int
    cannot_learn: frozenset[str]


def network_census(space: SearchSpace, network_key: NetworkKeyFn | None = None,
                   covers: Callable[[Arch], bool] | None = None) -> NetworkCensus:
    """The distinct network keys of ``space``'s cells that ``covers`` accepts (``None``: every
    cell), split into those that can learn and those that cannot."""
    key_of = network_key or network_key_fn(space, "as_built")
    depends = getattr(space, "output_depends_on_input", None)
    tally = _Tally()
    for arch in space.enumerate():
        if covers is None or covers(arch):
            tally.add(key_of(arch), depends is None or bool(depends(arch)))
    return tally.census()


def learnable_networks(space: SearchSpace, network_key: NetworkKeyFn | None = None,
                       covers: Callable[[Arch], bool] | None = None) -> int:
    """How many networks of ``space`` a study can evaluate: the distinct network keys of the cells
    whose network can learn (its output depends on its input: the others are recorded
    ``infeasible`` and never evaluated) and that ``covers`` accepts (``None``: every cell).

    On TSS with the deployed key: 6,040 networks, 24 of which cannot learn, so 6,016.
    """
    return network_census(space, network_key, covers).learnable


def check_budget_reachable(config: SearchConfig, coverage: Coverage | None, learnable: int | None = None) -> None:
    """Refuse a budget larger than the networks the run can evaluate.

    Args:
        config: the run's settings (``budget``, ``space``).
        coverage: the recorded profile's coverage (``None``: the meter measures any network).
        learnable: the networks the run can evaluate (`learnable_networks`, counted over the
            profile's networks where it is partial); ``None``: not counted, only ``coverage`` limits.

    Raises:
        UsageError: ``--budget`` exceeds those networks (each full evaluation needs a distinct
            network), naming the number and what to do instead.
    """
    limit = coverage.covered_classes if coverage is not None else None
    if learnable is not None:
        limit = learnable if limit is None else min(limit, learnable)
    if limit is None or config.budget <= limit:
        return
    where = f"the {config.space} space holds {limit:,} networks that can learn"
    if coverage is not None:
        where = f"{coverage.summary()}" + (f", {limit:,} of which can learn" if limit < coverage.covered_classes else "")
    elif learnable is not None:
        where += " (networks whose output does not depend on their input are never evaluated)"
    hint = "" if coverage is None or coverage.complete else " or measure on a GPU (--hardware cuda)"
    raise UsageError(
        f"--budget {config.budget} needs {config.budget} distinct networks, but {where}; "
        f"lower --budget to at most {limit}{hint}"
    )


def candidate_cap(config: SearchConfig, coverage: Coverage | None) -> int:
    """The safety cap on the study's candidates: ``--max-candidates`` when given, else the
    default cap (`SearchConfig.candidate_cap`) divided by the share of cells the profile answers,
    since candidates outside it cost nothing but still count."""
    if config.max_candidates is not None or coverage is None or coverage.complete:
        return config.candidate_cap
    return math.ceil(config.candidate_cap / max(coverage.cell_fraction, 1e-3))
