"""What ``--oracle train --data PATH`` changes before a search starts: the data is read and
checked (one line and exit 2 for bad data, before any training), registered as the run's dataset,
and ``--hardware auto`` measures on this machine (a CUDA GPU, else the CPU): a recorded profile
was measured with NATS-Bench's input shapes and classes, never the user's."""

from __future__ import annotations

from nasenergy.errors import UsageError
from nasenergy.hardware.select import cuda_available


def live_hardware(hardware: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; any other value as it is."""
    if hardware != "auto":
        return hardware
    return "cuda" if cuda_available() else "cpu"


def check_val_fraction(val_fraction: float) -> None:
    """Refuse a validation share outside (0, 1), before any data is read."""
    if not 0.0 < float(val_fraction) < 1.0:
        raise UsageError(f"--val-fraction must be between 0 and 1, got {val_fraction!r}")


def register_training_data(data: str, val_fraction: float) -> str:
    """Load and register ``--data`` as a dataset in this process (the command, a worker process,
    a resumed run) and return its dataset name: the spaces then build its networks; cached, so
    the data is read once per process."""
    from nasenergy.train.datasets import load_registered  # lazy: imports numpy and the loaders

    check_val_fraction(val_fraction)
    return load_registered(data, float(val_fraction))[1]


def training_setup(data: str, val_fraction: float, hardware: str, *, dataset_given: bool) -> tuple[str, str, str]:
    """``(dataset name, recorded --data value, hardware)`` of ``--oracle train --data DATA`` (the
    other combinations of the two flags are refused by the settings' validation,
    `nasenergy.search.command.config_checks.check_training`).

    Raises:
        UsageError: ``--dataset`` given too, a validation share outside (0, 1), or data that
            does not load (`nasenergy.train.DataError`).
    """
    from nasenergy.train.datasets import data_spec  # lazy: imports numpy and the loaders

    if dataset_given:
        raise UsageError("--dataset names a NATS-Bench dataset; with --oracle train the data is --data")
    spec = data_spec(data)
    return register_training_data(spec, val_fraction), spec, live_hardware(hardware)
