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
`AccuracyOracle`             answers full evaluations (`nasenergy.oracles`);
                             `nasenergy.oracles.registry.register_oracle_format`
`CandidateFilter`            the utilization filter (`UtilizationFilter`);
                             `nasenergy.filter.registry.register_filter`
`SpaceProtocol`              a search space (`search_spaces.SearchSpace`);
                             `search_spaces.register_space`
`ClockBackend`               where DVFS operating points come from (`nasenergy.dvfs`)
===========================  =================================================================

Importing this module imports neither torch nor optuna.
"""

from nasenergy.dvfs.backends import ClockBackend
from nasenergy.filter.protocol import CandidateFilter
from nasenergy.hardware.meter import ArchMeter, ClockControlMeter, Meter, RecordedProfile
from nasenergy.oracles.evaluation import AccuracyOracle
from search_spaces import SpaceProtocol

__all__ = [
    "AccuracyOracle",
    "ArchMeter",
    "CandidateFilter",
    "ClockBackend",
    "ClockControlMeter",
    "Meter",
    "RecordedProfile",
    "SpaceProtocol",
]
