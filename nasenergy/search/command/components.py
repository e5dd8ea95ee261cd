"""The parts a search worker uses, built from a `SearchConfig`: space, meter, oracle, filter, DVFS.

`build_components` is the default factory. Code that brings its own parts (tests with a fake
meter, a user with a custom oracle) passes another factory with the same signature to
`nasenergy.search.run_search`; with several worker processes it must be an importable module-level
function, since each worker process builds its own parts. The DVFS step (``--dvfs``) is built
by its registered mode (`nasenergy.search.command.dvfs_modes`, `nasenergy.search.loop.dvfs_steps.make_dvfs`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.filter import FilterError
from nasenergy.filter.protocol import CandidateFilter
from nasenergy.filter.registry import filter_kind
from nasenergy.hardware.deployed import deployed_measurer
from nasenergy.hardware.meter import ArchMeter, Meter, RecordedProfile
from nasenergy.hardware.meter_settings import get_setting
from nasenergy.hardware.recorded import shape_to_str
from nasenergy.hardware.registry import METERS
from nasenergy.hardware.select import resolve_hardware, select_meter
from nasenergy.measurement import Measurement
from nasenergy.oracles import load_oracle
from nasenergy.oracles.evaluation import AccuracyOracle, Metrics, MetricSpec, default_metrics
from nasenergy.oracles.network import NetworkOracle
from nasenergy.run.network_key import NetworkKeyFn, measured_form, network_key_fn
from nasenergy.search.command.config import DEFAULT_SEARCH_METRIC, SearchConfig, parse_search_metric
from nasenergy.search.command.coverage import (
    Coverage,
    NetworkCensus,
    check_budget_reachable,
    learnable_networks,
    profile_covers,
    survey_networks,
)
from nasenergy.search.command.filter_features import FeatureFn, cheap_columns, extra_features
from nasenergy.search.command.machine_defaults import check_meter_serves
from nasenergy.search.command.training_setup import live_hardware, register_training_data
from nasenergy.search.loop.dvfs_steps import (  # re-exported: the search's parts are named here
    DvfsStep,
    EnergyBoundChoice,
    EnergyBoundFn,
    OptimalClockFn,
    default_energy_bound,
    make_dvfs,
)
from search_spaces import Arch, SearchSpace, SpaceProtocol, get_space

logger = logging.getLogger(__name__)

__all__ = [
    "Components",
    "ComponentsFactory",
    "DvfsStep",
    "EnergyBoundChoice",
    "EnergyBoundFn",
    "OptimalClockFn",
    "arch_measurer",
    "build_components",
    "check_budget",
    "default_energy_bound",
    "make_dvfs",
    "make_filter",
    "meter_options",
    "search_metrics",
]


@dataclass
class Components:
    """What one worker needs.

    Attributes:
        space: the search space (``search_spaces.get_space(...)``).
        measure: the cheap measurement of one architecture at the default clock; raises
            `nasenergy.hardware.recorded.NotRecordedError` for a network a recorded profile lacks.
        oracle: the accuracy oracle (``evaluate(arch, dataset, seed=None) -> Evaluation``, and
            optionally ``report(arch, dataset) -> Evaluation`` for the final figure).
        filter: the utilization filter (``admit``/``observe``).
        optimal_clock: the energy-optimal clock of a measured candidate, or ``None`` to score
            at the default clock.
        describe: one line per part, for ``env.json`` and the report.
        coverage: the share of the space a recorded profile answers (``None``: any network).
        network_key: what makes two candidates the same network for the study
            (`nasenergy.run.network_key`); ``None``: the canonical class.
        covers: whether ``measure`` can answer an architecture, for a meter that cannot answer
            every one (a partial recorded profile); ``None``: every one. The duplicate-aware TPE
            then prefers networks it covers.
        features: the extra features (beside the cheap measurement) the filter and the screener
            read for an architecture (`nasenergy.search.command.filter_features.extra_features`);
            ``None``: the worker builds them from the config's ``filter_features``.
        census: the networks the study can meet (`nasenergy.search.command.coverage.network_census`), so
            a worker knows when every network that can learn has been seen; ``None``: unknown.
    """

    space: SpaceProtocol
    measure: Callable[[Any], Measurement]
    oracle: AccuracyOracle
    filter: CandidateFilter
    optimal_clock: OptimalClockFn | None
    describe: dict[str, str] = field(default_factory=dict)
    coverage: Coverage | None = None
    network_key: NetworkKeyFn | None = None
    covers: Callable[[Arch], bool] | None = None
    features: FeatureFn | None = None
    census: NetworkCensus | None = None

    def __post_init__(self) -> None:
        if self.network_key is None:
            self.network_key = network_key_fn(self.space, "as_built")  # the canonical class alone

    def key_of(self, arch: Arch) -> str:
        """The study's key of ``arch``'s network (its duplicates share it)."""
        assert self.network_key is not None
        return self.network_key(arch)


ComponentsFactory = Callable[[SearchConfig], Components]


def make_filter(config: SearchConfig, *, energy_bound: EnergyBoundFn | None = None) -> CandidateFilter:
    """The utilization filter of ``config``: its registered mode (`nasenergy.filter.registry`) given
    the search options it declares (target recall, the search's objectives, seed, energy bound).

    Args:
        config: the run's settings.
        energy_bound: the dominance filter's optimistic bound at the optimal clock; default
            `default_energy_bound` (pass `DvfsStep.energy_bound` when the run has a DVFS step).

    Raises:
        UsageError: an option the filter refuses (e.g. a target recall of 1 for ``dominance``).
    """
    try:
        kind = filter_kind(config.filter)
        available: dict[str, Callable[[], Any]] = {
            "target_recall": lambda: config.target_recall,
            "objectives": lambda: tuple(config.objectives),
            "seed": lambda: config.seed,
            "energy_bound": lambda: energy_bound if energy_bound is not None else default_energy_bound(config).bound,
            "cheap_columns": lambda: cheap_columns(config.filter_features),
        }
        return kind.create(**{name: available[name]() for name in kind.search_options})
    except FilterError as exc:
        raise UsageError(f"--filter {config.filter}: {exc}") from None


def arch_measurer(meter: Meter | ArchMeter, space: SearchSpace, config: SearchConfig) -> Callable[[Any], Measurement]:
    """A function measuring one architecture with ``meter`` at the configured setting.

    An `ArchMeter` (the recorded profile, the fake meter) is asked directly; a `Meter` measures the
    deployed network (`nasenergy.hardware.deployed`).
    """
    if isinstance(meter, ArchMeter):

        def measure(arch: Arch) -> Measurement:
            return meter.measure_arch(
                arch, precision=config.precision, batch_size=config.batch_size, dataset=config.dataset, space=space
            )

        return measure

    return deployed_measurer(meter, space, config.dataset, batch_size=config.batch_size, precision=config.precision,
                             analytic_counts=get_setting(config.meter_setting).analytic_counts)


def meter_options(hardware: str, config: SearchConfig) -> dict[str, Any]:
    """The constructor options of the selected meter: ``--meter-setting``'s for a meter that takes
    the CUDA meter's options (`MeterKind.takes_cuda_options`; `nasenergy.hardware.meter_settings`),
    none for the others."""
    return dict(get_setting(config.meter_setting).meter_options) if METERS.get(hardware).takes_cuda_options else {}


def _check_recorded_setting(meter: Meter | ArchMeter, config: SearchConfig, space: SpaceProtocol) -> None:
    """A recorded profile holds some settings only: refuse others before the search starts."""
    if not isinstance(meter, RecordedProfile):
        return
    settings = meter.settings

    wanted = (config.precision, config.batch_size, shape_to_str(space.input_shape(config.dataset)))
    if tuple(wanted) not in {tuple(s) for s in settings}:
        have = "; ".join(f"--precision {p} --batch-size {b} (input {s})" for p, b, s in settings)
        raise UsageError(f"the recorded profile holds no measurements at {wanted[0]}, batch {wanted[1]}, "
                         f"input {wanted[2]}; it has: {have}")


def search_metrics(config: SearchConfig) -> Metrics:
    """The oracle's metrics: ``--search-metric`` (one training run picked at random, as NATS-Bench's
    simulated search does) and NATS-Bench's report metric of the space."""
    split, epochs = parse_search_metric(config.search_metric)
    return Metrics(search=MetricSpec(split, epochs, "random"), report=default_metrics(config.space).report)


def run_hardware(config: SearchConfig, space_name: str, announce: Callable[[str], None] | None) -> str:
    """The concrete hardware of ``config`` (`resolve_hardware`); with ``--oracle train``, the
    data is registered in this process first and ``auto`` is this machine's own meter
    (`nasenergy.search.command.training_setup`), never a recorded profile."""
    if config.oracle == "train":
        assert config.data is not None  # validated: --oracle train has --data
        register_training_data(config.data, config.val_fraction)
        return live_hardware(config.hardware)
    return resolve_hardware(config.hardware, announce, space_name=space_name)


def check_budget(config: SearchConfig) -> None:
    """Refuse, before any work, a budget larger than the networks the default parts of ``config``
    can evaluate (`nasenergy.search.command.coverage.check_budget_reachable`): what `build_components`
    checks, without loading the oracle (the runner calls it before it starts worker processes).

    Raises:
        UsageError: a budget above that number, or a setting the meter cannot serve.
    """
    space = get_space(config.space)
    hardware = run_hardware(config, space.name, None)
    if hardware != "recorded":  # a live meter measures any network (and is not opened here)
        check_budget_reachable(config, None, learnable_networks(space, network_key_fn(space, "deployed")))
        return
    meter = select_meter(hardware, profile_path=config.profile, space=space, announce=None)
    survey = survey_networks(meter, space, config, network_key_fn(space, measured_form(meter)))
    check_budget_reachable(config, survey.coverage, survey.census.learnable)


def training_oracle(config: SearchConfig, space: SpaceProtocol, hardware: str) -> AccuracyOracle:
    """The oracle of ``--oracle train``: trains each evaluated network on ``--data`` for ``--epochs``,
    on the GPU the meter measures on (else the CPU), with epoch checkpoints in the run folder's
    ``training/`` (a killed run's training continues from its last epoch)."""
    from nasenergy.train.datasets import load_registered  # lazy: imports the data loaders
    from nasenergy.train.oracle import TrainingOracle  # lazy: only a training run reads data
    from nasenergy.train.options import TrainOptions  # lazy: as above
    from nasenergy.train.recipe import TrainRecipe  # lazy: as above

    assert config.data is not None
    data, _ = load_registered(config.data, float(config.val_fraction))
    device = "cuda" if hardware == "cuda" else "cpu"
    # workers training side by side on the CPU share its cores (oversubscribed, each is several times slower)
    threads = max(1, (os.cpu_count() or 1) // config.workers) if device == "cpu" and config.workers > 1 else None
    return TrainingOracle(space, data, recipe=TrainRecipe(epochs=config.epochs),
                          options=TrainOptions(device=device, cpu_threads=threads),
                          checkpoint_dir=config.out_dir / "training")


def build_components(config: SearchConfig) -> Components:
    """The default parts for ``config``: the selected meter, the oracle of ``--benchmark`` (or the
    installed benchmark), the DVFS step and the utilization filter with the matching energy bound.

    Raises:
        UsageError: a setting the meter, the profile's coverage or the DVFS step cannot serve.
    """
    space = get_space(config.space)
    announce = None if config.quiet else logger.info
    hardware = run_hardware(config, space.name, announce)
    meter = select_meter(hardware, profile_path=config.profile, space=space, announce=announce,
                         **meter_options(hardware, config))
    check_meter_serves(hardware, config)
    _check_recorded_setting(meter, config, space)
    network_key = network_key_fn(space, measured_form(meter))
    survey = survey_networks(meter, space, config, network_key)  # one pass over the space's cells
    coverage, census = survey.coverage, survey.census
    covers = profile_covers(meter, config) if coverage is not None and not coverage.complete else None
    check_budget_reachable(config, coverage, census.learnable)
    # The default search metric is the benchmark's own protocol (NATS-Bench's 12-epoch x-valid; the
    # embedded SSS tables have 90 epochs only); --search-metric overrides it.
    metrics = None if config.search_metric == DEFAULT_SEARCH_METRIC else search_metrics(config)
    oracle: AccuracyOracle
    if config.oracle == "train":
        oracle = training_oracle(config, space, hardware)
    else:
        oracle = load_oracle(config.benchmark, space, metrics=metrics, seed=config.seed, estimate=config.estimate)
    if getattr(network_key, "deployed", False) and config.oracle != "train":
        oracle = NetworkOracle(oracle, space)  # one deployed network, one evaluation: the mean over its cells
    step = make_dvfs(config, meter, space)
    bound = EnergyBoundChoice(step.energy_bound, step.bound_label) if step else default_energy_bound(config)
    if announce is not None:
        if step is not None and step.note:
            announce(step.note)
        elif step is None and config.dvfs == "auto":
            announce(f"--dvfs auto: no DVFS parameter set for {meter.device_name!r} "
                     "and no NVML device to build generic parameters from; energy and throughput are "
                     "scored at the default clock")
    describe = {
        "meter": f"{type(meter).__name__} ({meter.device_name or 'unknown device'})"
                 + (f", profile {config.profile}" if config.profile is not None else ""),
        "oracle": oracle.describe(),
        "dvfs": "none" if step is None else (step.label or step.source),
    }
    if "energy_bound" in filter_kind(config.filter).search_options and "energy" in config.objectives:
        describe["filter energy bound"] = bound.label
    if announce is not None and coverage is not None and not coverage.complete:
        announce(f"{coverage.summary()}; candidates outside it are recorded as not_recorded and cost no budget")
    features = extra_features(config.filter_features, space, config.dataset, hardware,
                              announce if config.reads_filter_features else None)
    return Components(
        space=space,
        measure=arch_measurer(meter, space, config),
        oracle=oracle,
        filter=make_filter(config, energy_bound=bound.bound),
        optimal_clock=None if step is None else step.optimal_clock,
        describe=describe,
        coverage=coverage,
        network_key=network_key,
        covers=covers,
        features=features,
        census=census,
    )
