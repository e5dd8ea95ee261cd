"""Choosing a meter: `select_meter`."""

from __future__ import annotations

import logging
import os
from typing import Any, Callable

from nasenergy.errors import UsageError
from nasenergy.hardware.meter import ArchMeter, Meter
from nasenergy.hardware.registry import AUTO, METERS, hardware_choices
from nasenergy.hardware.recorded import default_profile
from search_spaces import SpaceProtocol

logger = logging.getLogger(__name__)


def cuda_available() -> bool:
    """Whether PyTorch sees a CUDA GPU."""
    import torch

    return bool(torch.cuda.is_available())


def resolve_hardware(hardware: str, announce: Callable[[str], None] | None = logger.info, *,
                     space_name: str = "tss") -> str:
    """The concrete hardware for `hardware`: ``auto`` becomes ``cuda`` if a GPU is present, else
    ``recorded`` where a recorded profile of `space_name` is installed, else ``cpu`` (announced in
    one line through `announce`: by default this module's logger at INFO; ``None``: nowhere).

    Raises:
        UsageError: unknown `hardware`.
    """
    if hardware != AUTO and hardware not in METERS:
        raise UsageError(f"unknown hardware {hardware!r}; choose from {', '.join(hardware_choices())}")
    if hardware != AUTO:
        return hardware
    if cuda_available():
        return "cuda"

    if default_profile(space_name).is_file():
        if announce is not None:
            announce("no CUDA GPU found: replaying the recorded H200 profile (source=recorded)")
        return "recorded"
    if announce is not None:
        announce(f"no CUDA GPU found and no recorded profile of the {space_name} space is installed: "
                 "measuring on this CPU (source=measured)")
    return "cpu"


def select_meter(
    hardware: str = "auto",
    *,
    profile_path: str | os.PathLike[str] | None = None,
    space: SpaceProtocol | None = None,
    announce: Callable[[str], None] | None = logger.info,
    **meter_options: Any,
) -> Meter | ArchMeter:
    """A meter for `hardware`.

    Args:
        hardware: a registered meter (`nasenergy.hardware.registry`): ``cuda`` (`CudaMeter`),
            ``cpu`` (`CpuMeter`), ``recorded`` (`RecordedMeter`), ...; or ``auto``: CUDA if a GPU
            is present, else the space's recorded profile where one is installed, else the CPU
            (saying so in one line through `announce`).
        profile_path: the profile for the recorded meter (default: the shipped H200 profile).
        space: the search space (for meters answering architectures, e.g. the recorded one).
        announce: where the one-line note of `auto` goes (default: this module's logger at INFO,
            which `nasenergy.log` writes to stderr; ``None``: nowhere).
        **meter_options: passed to the meter's constructor (`CudaMeter`, `CpuMeter`, ...).

    Raises:
        UsageError: unknown `hardware`, or ``cuda`` without a GPU.
        DataNotFoundError: the recorded profile is missing.
    """
    hardware = resolve_hardware(hardware, announce, space_name=getattr(space, "name", "tss"))
    return METERS.get(hardware).create(path=profile_path, space=space, **meter_options)
