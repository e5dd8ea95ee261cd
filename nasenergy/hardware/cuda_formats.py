"""Memory-format choice for `CudaMeter`: host copies per format, and the faster format on the GPU.

One job: decide which memory format (channels-last or contiguous) a network is measured in. A
convolutional network is tried in both unless told which (`memory_formats`); CPU copies of it,
cast to the precision, are made per format (`host_copies`, safe on a thread while the GPU measures
another network); on the GPU each is probed and the faster kept (`fastest_format`), contiguous
only when faster by more than ``format_tie_frac`` (`takes_over`): at equal speed the two formats
can draw very different power, and a coin-flip choice would make energy per image irreproducible
(`results/profile_agreement/window_0.15s`). torch is imported only inside functions.
"""

from __future__ import annotations

import copy
import math
import time
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.cuda_steps import make_step, time_repeats
from nasenergy.hardware.precision import dtype_of, has_conv

if TYPE_CHECKING:
    import torch

__all__ = ["FORMAT_TIE_FRAC", "FormatChoice", "HostCopies", "fastest_format", "host_copies", "memory_formats",
           "takes_over"]


class HostCopies:
    """CPU copies of a model made ahead of `CudaMeter.measure`, one per memory format, each in eval
    mode and already cast to the precision's dtype and memory format.

    Making them is CPU work only (`host_copies`), so a caller can do it on a thread while the GPU
    measures the previous network; `measure` then only moves each copy to the GPU. Each copy is
    used once (moving it to the GPU changes it): pass a `HostCopies` to one `measure` call.
    """

    def __init__(self, model: "torch.nn.Module", precision: str, copies: dict[bool, "torch.nn.Module"]) -> None:
        self.model = model
        self.precision = precision
        self._copies = copies

    @property
    def formats(self) -> list[bool]:
        """The memory formats still available (True: channels-last), in the order made."""
        return list(self._copies)

    def take(self, channels_last: bool) -> "torch.nn.Module":
        """The copy in that memory format (removed: it is the caller's now)."""
        try:
            return self._copies.pop(channels_last)
        except KeyError:
            fmt = "channels-last" if channels_last else "contiguous"
            raise UsageError(f"no {fmt} host copy left (copies are made by host_copies and used once)") from None


def memory_formats(model: "torch.nn.Module", channels_last: bool | None) -> list[bool]:
    """The memory formats `measure` tries (True: channels-last): the one asked for, else both for a
    network with convolutions (the faster is kept) and contiguous for one without."""
    if channels_last is not None:
        return [channels_last]
    return [True, False] if has_conv(model) else [False]


FORMAT_TIE_FRAC = 0.02
"""Default `CudaMeter` ``format_tie_frac``: probe times within this share of each other are a tie,
kept by the format probed first (channels-last)."""


def takes_over(probe_s: float, best_s: float, tie_frac: float = FORMAT_TIE_FRAC) -> bool:
    """Whether a memory format probed later, at ``probe_s`` seconds per pass, replaces the best so
    far (``best_s``): only when faster by more than ``tie_frac``. Two runs of the meter then choose
    the same format for a network whose formats tie within probe noise (with plain "the faster",
    each run chose either, and on an H200 channels-last drew ~15 % less power than contiguous at
    equal throughput for such networks)."""
    return probe_s < best_s * (1.0 - tie_frac)


def host_copies(model: "torch.nn.Module", precision: str, channels_last: bool | None = None) -> HostCopies:
    """CPU copies of `model` (not modified) for `CudaMeter.measure` at `precision`, one per memory
    format it will try; safe to call on a thread other than the measuring one."""
    import torch

    dtype = dtype_of(precision)
    copies = {}
    for cl in memory_formats(model, channels_last):
        fmt = torch.channels_last if cl else torch.contiguous_format
        copies[cl] = copy.deepcopy(model).eval().to(dtype=dtype, memory_format=fmt)  # type: ignore[call-overload]  # (stub lacks it)
    return HostCopies(model, precision, copies)


class FormatChoice(NamedTuple):
    """The network on the GPU in the memory format `fastest_format` chose, ready to run."""

    pass_s: float
    """GPU seconds of one forward pass (the probe's figure)."""
    net: Any
    """The network on the GPU."""
    x: Any
    """Its input batch on the GPU."""
    step: Callable[[], Any]
    """One forward pass (`nasenergy.hardware.cuda_steps.make_step`)."""
    keep: Any
    """What `step` needs kept alive (a CUDA graph and its output), or ``None``."""
    channels_last: bool
    """The chosen memory format."""
    copy_s: float
    """Wall seconds spent moving copies and inputs to the GPU, over all formats tried."""
    capture_s: float
    """Wall seconds spent capturing graphs and replaying them once, over all formats tried."""


def fastest_format(prepared: HostCopies, formats: Sequence[bool], *, device: "torch.device", batch_size: int,
                   input_shape: Sequence[int], dtype: "torch.dtype", cuda_graphs: bool, format_probe_s: float,
                   tie_frac: float) -> FormatChoice:
    """Move each of `formats`' host copies to `device` with a fixed random input batch, make its
    forward pass and keep the faster (the first unless a later one `takes_over`), as a deployer
    would choose. With more than one format, each is probed twice for at least `format_probe_s`
    GPU seconds. The slower formats' GPU copies are dropped before this returns."""
    import torch

    best: tuple[float, Any, Any, Any, Any, bool] | None = None
    copy_s = capture_s = 0.0
    for cl in formats:
        t0 = time.perf_counter()
        fmt = torch.channels_last if cl else torch.contiguous_format
        net: Any = prepared.take(cl).to(device)
        gen = torch.Generator(device=device).manual_seed(0)
        x: Any = torch.randn((batch_size, *input_shape), generator=gen, device=device,
                             dtype=dtype).contiguous(memory_format=fmt)
        t1 = time.perf_counter()
        step: Any
        step, keep = make_step(net, x, device, cuda_graphs)
        (probe_s,) = time_repeats(step, 1, 1)
        copy_s, capture_s = copy_s + t1 - t0, capture_s + time.perf_counter() - t1
        if len(formats) > 1:
            probe_steps = max(1, math.ceil(format_probe_s / max(probe_s, 1e-6)))
            probe_s = min(time_repeats(step, probe_steps, 2)) / probe_steps
        if best is None or takes_over(probe_s, best[0], tie_frac):
            best = (probe_s, net, x, step, keep, cl)
        net = x = step = keep = None  # the slower format's copies go
    assert best is not None
    return FormatChoice(*best, copy_s, capture_s)
