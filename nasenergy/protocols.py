"""The extension points of nasenergy, as `typing.Protocol` classes (all ``runtime_checkable``).

===========================  =================================================================
protocol                     what follows it / how a new one is registered
===========================  =================================================================
`Meter`                      measures a built network (`CudaMeter`, `CpuMeter`, `FakeMeter`);
                             `nasenergy.hardware.registry.register_meter`
`ArchMeter`                  optional: answers an architecture directly (`RecordedMeter`,
                             `FakeMeter`)
`RecordedProfile`            optional: replays recorded rows at some settings (`RecordedMeter`)
`ClockControlMeter`          optional: measures on a GPU whose clocks can be set (`CudaMeter`)
`AccuracyOracle`             answers full evaluations (`nasenergy.oracles`); a source that opens
                             a benchmark path or the installed default:
                             `nasenergy.oracles.registry.register_oracle_source`
`CandidateFilter`            the utilization filter (`UtilizationFilter`);
                             `nasenergy.filter.registry.register_filter`
`SpaceProtocol`              a search space (`search_spaces.SearchSpace`);
                             `search_spaces.register_space`
`ClockBackend`               where DVFS operating points come from (`nasenergy.dvfs`)
`RunView`                    what a run's report and plots read of a run
                             (`nasenergy.run.files.RunRecord`)
===========================  =================================================================

Importing this module imports neither torch nor optuna.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from nasenergy.dvfs.backends import ClockBackend
from nasenergy.filter.protocol import CandidateFilter
from nasenergy.hardware.meter import ArchMeter, ClockControlMeter, Meter, RecordedProfile
from nasenergy.objectives import SearchObjective
from nasenergy.oracles.evaluation import AccuracyOracle
from nasenergy.run.view import RunView
from search_spaces import SpaceProtocol

__all__ = [
    "AccuracyOracle",
    "ArchMeter",
    "CandidateFilter",
    "ClockBackend",
    "ClockControlMeter",
    "Meter",
    "RecordedProfile",
    "RunView",
    "SpaceProtocol",
]
