"""The meter registry: every ``--hardware`` choice is one registered `MeterKind`.

A new meter is one module plus one call::

    from nasenergy.hardware.registry import MeterKind, register_meter
    register_meter(MeterKind("mymeter", "mypackage.mymeter:MyMeter"))

An installed package adds its meters through the ``nasenergy.meters`` entry-point group
(`nasenergy._registry`).

``auto`` is not a kind: `nasenergy.hardware.select.resolve_hardware` picks one of ``cuda``,
``recorded`` and ``cpu`` for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import os
from typing import TYPE_CHECKING, Any

from nasenergy._registry import Registry, resolve

if TYPE_CHECKING:
    from nasenergy.hardware.meter import ArchMeter, Meter
    from search_spaces import SpaceProtocol

AUTO = "auto"
"""The ``--hardware`` choice that picks a meter for this machine."""

__all__ = ["AUTO", "METERS", "MeterKind", "hardware_choices", "register_meter"]


@dataclass(frozen=True)
class MeterKind:
    """One meter the search can select by name.

    Attributes:
        name: the ``--hardware`` value.
        factory: builds the meter (a callable or a ``"module:attribute"`` string), called with the
            options named in ``context`` plus the caller's meter options.
        context: which of ``path`` (a recorded profile) and ``space`` (the search space) the
            factory takes; the others are not passed.
        takes_options: whether the factory takes the caller's meter options (e.g. ``n_repeats``).
        precisions: the precisions the meter measures (``None``: whatever the meter answers; the
            search refuses another ``--precision`` before the first candidate).
        measures_energy: whether it measures energy (without, the search drops the energy
            objective when ``--objectives`` is not given and refuses it when it is).
        default_precision: the precision the search takes when ``--precision`` is not given
            (``None``: `SearchConfig`'s).
        default_batch_size: the batch size it takes when ``--batch-size`` is not given (``None``:
            `SearchConfig`'s).
        batch_size_by_precision: pairs ``(precision, batch size)`` that override
            ``default_batch_size`` at that precision (e.g. a recorded profile measured fp32 at a
            smaller batch than fp16).
        label: how messages name the meter (default ``the <name> meter``).
        uses_gpu: whether it measures on the machine's GPUs, as the CUDA meter does: worker processes
            are then pinned to the visible GPUs (one each, in turn), several GPUs are calibrated
            against each other with the CUDA meter before the search (``--boards``), and live
            zero-cost proxies (``--filter-features proxies-live``) are computed on the GPU.
        takes_cuda_options: whether its factory takes the CUDA meter's keyword options
            (`nasenergy.hardware.cuda_meter.CudaMeter`: ``--meter-setting``'s options in the search,
            ``--peak``, ``--energy-basis`` and ``--no-energy`` in ``python -m nasenergy.profile``).
    """

    name: str
    factory: Callable[..., Meter | ArchMeter] | str
    context: tuple[str, ...] = ()
    takes_options: bool = True
    precisions: tuple[str, ...] | None = None
    measures_energy: bool = True
    default_precision: str | None = None
    default_batch_size: int | None = None
    batch_size_by_precision: tuple[tuple[str, int], ...] = ()
    label: str = ""
    uses_gpu: bool = False
    takes_cuda_options: bool = False

    @property
    def title(self) -> str:
        """How messages name the meter (`label`, else ``the <name> meter``)."""
        return self.label or f"the {self.name} meter"

    def create(self, *, path: str | os.PathLike[str] | None = None, space: SpaceProtocol | None = None,
               **options: Any) -> Meter | ArchMeter:
        """A meter of this kind."""
        given = {"path": path, "space": space}
        kwargs = {k: given[k] for k in self.context}
        if self.takes_options:
            kwargs.update(options)
        return resolve(self.factory)(**kwargs)


METERS: Registry[MeterKind] = Registry("hardware", plugin_group="nasenergy.meters")
"""The registered meters by ``--hardware`` name."""


def register_meter(kind: MeterKind, *, replace: bool = False) -> MeterKind:
    """Make ``kind`` selectable (``--hardware``, `nasenergy.hardware.select_meter`, `SearchConfig`)."""
    return METERS.register(kind.name, kind, replace=replace)


def hardware_choices() -> tuple[str, ...]:
    """``auto`` and every registered meter name: the ``--hardware`` choices."""
    return (AUTO, *METERS.names())


register_meter(MeterKind("cuda", "nasenergy.hardware.cuda_meter:CudaMeter", uses_gpu=True, takes_cuda_options=True))
# The CPU meter measures fp32 and bf16 (`CpuMeter.precisions`) and has no energy counter; 1,024
# images at fp32 take seconds per forward pass on a small CPU, so it takes the recorded profile's
# fp32 batch of 256.
register_meter(MeterKind("cpu", "nasenergy.hardware.cpu_meter:CpuMeter", precisions=("fp32", "bf16"),
                         measures_energy=False, default_precision="fp32", default_batch_size=256,
                         label="the CPU meter"))
# The shipped profiles hold fp16 at batch 1024 and fp32 at batch 256 (the batches they were recorded at).
register_meter(MeterKind("recorded", "nasenergy.hardware.recorded:RecordedMeter", context=("path", "space"),
                         takes_options=False, batch_size_by_precision=(("fp32", 256),)))
