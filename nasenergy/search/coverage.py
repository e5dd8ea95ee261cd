"""How much of the space a recorded profile can answer, and what that means for a run.

A recorded profile (``--hardware recorded``, or ``auto`` without a GPU) may hold only some of the
networks. A candidate outside it is recorded with outcome ``not_recorded``: it is not measured,
spends no budget, and is told to the sampler as pruned, which steers the sampler away from such
cells, so the search effectively runs over the recorded networks; the duplicate-aware TPE also
passes over them among its draws (`nasenergy.search.components.Components.covers`), which matters
where the recorded networks have no structure to learn (a random sample of SSS). `Coverage`
describes that share (`nasenergy.hardware.coverage`, a layer below, so a run's report can read
it); the run refuses a budget larger than the networks it can measure, and the default candidate
cap grows in proportion to the share of cells the profile cannot answer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from nasenergy.errors import UsageError
from nasenergy.hardware.coverage import CELL_UNIT, CLASS_UNIT, Coverage
from nasenergy.hardware.meter import ArchMeter, Meter, RecordedProfile
from nasenergy.search.config import SearchConfig
from nasenergy.hardware.recorded import shape_to_str
from nasenergy.search.network_key import NetworkKeyFn, network_key_fn
from search_spaces import Arch, SpaceProtocol


def profile_coverage(meter: Meter | ArchMeter, space: SpaceProtocol, config: SearchConfig,
                     network_key: NetworkKeyFn | None = None) -> Coverage | None:
    """The coverage of ``meter``'s recorded profile at ``config``'s setting, or ``None`` for a meter
    that measures any network (it is no `nasenergy.hardware.meter.RecordedProfile`).

    Args:
        meter: a meter; a `nasenergy.hardware.recorded.RecordedMeter` is described.
        space: the search space.
        config: the run's settings (precision, batch size, dataset).
        network_key: the study's network key (`nasenergy.search.network_key`); default: the
            canonical class. Classes are counted as the study counts networks.
    """
    if not isinstance(meter, RecordedProfile):
        return None

    key_of = network_key or network_key_fn(space, "as_built")
    shape = shape_to_str(space.input_shape(config.dataset))
    covers = profile_covers(meter, config)
    if covers is None:  # a profile keyed by canonical class alone
        recorded = {
            r["canonical_arch"]
            for r in meter.rows()
            if r["precision"] == config.precision and int(r["batch_size"]) == config.batch_size and r["input_shape"] == shape
        }

        def covers(arch: Arch) -> bool:
            return str(space.canonical(arch)) in recorded

    networks: set[str] = set()
    covered: set[str] = set()
    cells = 0
    for arch in space.enumerate():
        key = key_of(arch)
        networks.add(key)
        if covers(arch):
            covered.add(key)
            cells += 1
    path = getattr(meter, "path", None)
    return Coverage(
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


def profile_covers(meter: Meter | ArchMeter, config: SearchConfig) -> Callable[[Arch], bool] | None:
    """Whether ``meter``'s recorded profile holds an architecture at ``config``'s setting, as a
    one-argument test (``None`` for a meter that cannot say)."""
    covers = getattr(meter, "covers", None)
    if covers is None:
        return None

    def covered(arch: Arch) -> bool:
        return bool(covers(arch, precision=config.precision, batch_size=config.batch_size, dataset=config.dataset))

    return covered


def check_budget_reachable(config: SearchConfig, coverage: Coverage | None) -> None:
    """Refuse a budget the profile cannot fill.

    Raises:
        UsageError: ``--budget`` exceeds the recorded classes (each full evaluation needs a
            distinct network), with what to do instead.
    """
    if coverage is None or config.budget <= coverage.covered_classes:
        return
    raise UsageError(
        f"--budget {config.budget} needs {config.budget} distinct networks, but "
        f"{coverage.summary()}; lower --budget to at most {coverage.covered_classes} "
        "or measure on a GPU (--hardware cuda)"
    )


def candidate_cap(config: SearchConfig, coverage: Coverage | None) -> int:
    """The safety cap on the study's candidates: ``--max-candidates`` when given, else the
    default cap (`SearchConfig.candidate_cap`) divided by the share of cells the profile answers,
    since candidates outside it cost nothing but still count."""
    if config.max_candidates is not None or coverage is None or coverage.complete:
        return config.candidate_cap
    return math.ceil(config.candidate_cap / max(coverage.cell_fraction, 1e-3))
