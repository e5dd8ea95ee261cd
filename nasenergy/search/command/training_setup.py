"""What ``--oracle train --data PATH`` changes before a search starts: the data is read and
checked (one line and exit 2 for bad data, before any training), registered as the run's dataset,
and ``--hardware auto`` measures on this machine (a CUDA GPU, else the CPU): a recorded profile
was measured with NATS-Bench's input shapes and classes, never the user's."""

from __future__ import annotations

from nasenergy.errors import UsageError


def live_hardware(hardware: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; any other value as it is."""
    if hardware != "auto":
        return hardware
    import torch  # lazy: imports torch (only for a training run)

    return "cuda" if torch.cuda.is_available() else "cpu"


def register_training_data(data: str | None, val_fraction: float) -> None:
    """Load and register ``--data`` as a dataset in this process (a worker process, a resumed
    run): the spaces then build its networks; cached, so the data is read once per process."""
    from nasenergy.train.datasets import load_registered  # lazy: imports numpy and the loaders

    if data:
        load_registered(data, float(val_fraction))


def training_setup(oracle: str, data: str | None, val_fraction: float, hardware: str, *,
                   dataset_given: bool) -> tuple[str, str | None, str]:
    """``(dataset name, recorded --data value, hardware)`` of a training run.

    Raises:
        UsageError: ``--data`` without ``--oracle train``, ``--oracle train`` without ``--data``
            or with ``--dataset``, or data that does not load (`nasenergy.train.DataError`).
    """
    from nasenergy.train.datasets import data_spec, load_registered  # lazy: imports numpy and the loaders

    if oracle != "train":
        raise UsageError("--data is the data --oracle train trains on; add --oracle train")
    if not data:
        raise UsageError("--oracle train needs --data (digits, a CIFAR folder, an image folder or an .npz)")
    if dataset_given:
        raise UsageError("--dataset names a NATS-Bench dataset; with --oracle train the data is --data")
    if not 0.0 < val_fraction < 1.0:
        raise UsageError(f"--val-fraction must be between 0 and 1, got {val_fraction!r}")
    spec = data_spec(data)
    _, name = load_registered(spec, float(val_fraction))
    return name, spec, live_hardware(hardware)
