"""A meter and a filter registered from outside the package serve a search: one module and one
registration call each, no edits to nasenergy (the CLI choices and `SearchConfig` read the
registries)."""

from __future__ import annotations

from typing import Any

import pytest

from nasenergy.errors import UsageError
from nasenergy.filter import Decision
from nasenergy.filter.registry import FILTERS, FilterKind, register_filter
from nasenergy.hardware.registry import METERS, MeterKind, hardware_choices, register_meter
from nasenergy.measurement import Measurement
from nasenergy.protocols import ArchMeter, CandidateFilter, Meter
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.testing import FakeMeter


class ToyMeter:
    """Answers architectures with the fake meter's synthetic figures, under its own device name."""

    device_name = "toy"

    def __init__(self) -> None:
        self._fake = FakeMeter(device_name="toy")
        self.calls = 0

    def measure_arch(self, arch: Any, *, precision: str, batch_size: int, dataset: str = "cifar10",
                     space: Any = None) -> Measurement:
        self.calls += 1
        return self._fake.measure_arch(arch, precision=precision, batch_size=batch_size, dataset=dataset, space=space)


class ToyFilter:
    """Skips every third candidate it is asked about; learns nothing."""

    mode = "toy"

    def __init__(self, *, objectives: tuple[str, ...]) -> None:
        self.objectives = objectives
        self.asked = 0
        self.observed = 0

    def admit(self, measurement: Measurement, front: Any = None, *, features: Any = None) -> Decision:
        self.asked += 1
        admit = self.asked % 3 != 0
        return Decision(admit=admit, reason="toy: every third is skipped", mode=self.mode,
                        utilization=float(measurement.utilization), n_observed=self.observed)

    def observe(self, measurement: Measurement, accuracy: float, **_: Any) -> None:
        self.observed += 1


@pytest.fixture
def toy_parts():
    """Register the toy meter and filter for one test."""
    register_meter(MeterKind("toy", ToyMeter, takes_options=False))
    register_filter(FilterKind("toy", ToyFilter, search_options=("objectives",), default_target_recall=0.9))
    yield
    METERS.unregister("toy")
    FILTERS.unregister("toy")


def test_the_toy_parts_follow_the_protocols():
    meter, flt = ToyMeter(), ToyFilter(objectives=("accuracy",))
    assert isinstance(meter, ArchMeter) and not isinstance(meter, Meter)
    assert isinstance(flt, CandidateFilter)


def test_registered_parts_are_choices_and_serve_a_search(toy_parts, table_path, tmp_path):
    assert "toy" in hardware_choices()
    config = SearchConfig(budget=6, hardware="toy", filter="toy", dvfs="none", benchmark=str(table_path),
                          out=str(tmp_path / "run"), quiet=True, seed=3)
    assert config.target_recall == 0.9  # the registered default
    summary = run_search(config, resume_command="test")
    assert summary.stop_reason == "budget" and summary.evaluated == 6
    run = load_run(tmp_path / "run")
    outcomes = {r["outcome"] for r in run.rows}
    assert "filtered" in outcomes
    assert {r["filter_mode"] for r in run.rows if r["filter_mode"]} == {"toy"}
    assert {r["measure_device"] for r in run.rows if r["measure_device"]} == {"toy"}


def test_unregistered_choices_are_refused_in_one_line():
    with pytest.raises(UsageError, match="--hardware: 'toy' is not one of"):
        SearchConfig(hardware="toy").validate()
    with pytest.raises(UsageError, match="--filter: 'toy' is not one of"):
        SearchConfig(filter="toy").validate()
