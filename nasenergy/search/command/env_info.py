"""``env.json``: the software and hardware a run used, and its seeds."""

from __future__ import annotations

import importlib.metadata
import platform
import shlex
import socket
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from nasenergy import __version__
from nasenergy.search.storage.credentials import mask_text

_PACKAGES = ("nasenergy", "torch", "optuna", "numpy", "sqlalchemy", "nats_bench", "scikit-learn", "matplotlib")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def gpu_info() -> dict[str, Any]:
    """GPU names and the driver version from NVML, or ``{"gpus": [], "driver": None}``.

    Never initialises CUDA; any NVML failure (no driver, no GPU) reads as no GPU.
    """
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # pynvml missing or no NVIDIA driver
        return {"gpus": [], "driver": None}
    try:
        names = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
            names.append(name.decode() if isinstance(name, bytes) else str(name))
        driver = pynvml.nvmlSystemGetDriverVersion()
        return {"gpus": names, "driver": driver.decode() if isinstance(driver, bytes) else str(driver)}
    except Exception:
        return {"gpus": [], "driver": None}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def shell_command(args: Sequence[str]) -> str:
    """``python -m nasenergy.search`` with ``args``, each shell-quoted: the command as a shell
    runs it again."""
    return shlex.join(["python", "-m", "nasenergy.search", *args])


def collect_env(
    *, seed: int, workers: dict[str, dict[str, Any]], storage: str, command: str,
    secrets: Iterable[str | None] = ()
) -> dict[str, Any]:
    """The ``env.json`` document.

    Args:
        seed: the run's base seed (worker of rank k samples with ``seed + k``).
        workers: worker id -> what it recorded about itself (rank, seed, pid, parts).
        storage: the storage, printable (password masked).
        command: the command that runs (and resumes) the search, shell-quoted so that it can be
            pasted into a shell as written.
        secrets: strings masked in the command (beside any URL's password).
    """
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "versions": {p: __version__ if p == "nasenergy" else _version(p) for p in _PACKAGES},
        **gpu_info(),
        "seed": seed,
        "workers": workers,
        "storage": storage,
        "command": mask_text(command, secrets=secrets),
    }
