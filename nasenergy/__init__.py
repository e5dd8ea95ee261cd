"""nasenergy: energy-aware neural architecture search.

Searches the NATS-Bench spaces over three objectives (accuracy, inference throughput and energy
per image at each network's energy-optimal GPU clock), using measured GPU utilization as a cheap
filter in front of the expensive accuracy evaluation.

The package does no work at import time (beyond attaching the default handler of its logger,
`nasenergy.log`); sub-packages with heavy dependencies (torch, optuna, nats_bench, pynvml) are
imported lazily by the modules that need them.
"""

from nasenergy.errors import NasEnergyError
from nasenergy.log import configure_library_logger
from nasenergy.measurement import Measurement, Source

configure_library_logger()

__all__ = ["Measurement", "NasEnergyError", "Source", "__version__"]
__version__ = "0.1.0"
