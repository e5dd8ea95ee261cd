"""Running and timing one network's forward passes on a CUDA GPU (for `CudaMeter`).

One job: turn a network on the GPU into a callable forward pass (`make_step`: a CUDA graph replay
where capture works, else eager), time runs of it by CUDA events (`time_repeats`), and keep a
backlog of individually timed passes queued while energy windows run (`StreamWorkload`,
`backlog_steps`). torch is imported only inside the functions that need it.
"""

from __future__ import annotations

import collections
import math
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import torch

__all__ = ["StreamWorkload", "backlog_steps", "make_step", "time_repeats"]


def backlog_steps(step_s: float) -> int:
    """Forward passes to keep queued while energy windows run: about 20 ms of work (2 to 1,000)."""
    return min(1000, max(2, math.ceil(0.02 / max(step_s, 1e-6))))


class StreamWorkload:
    """Keeps a short backlog of forward passes queued on the current CUDA stream, each followed by
    a timing event, so a window's passes can be timed one by one (`step_seconds`)."""

    def __init__(self, step: Callable[[], Any], images_per_step: int, backlog_steps: int) -> None:
        import torch

        self._torch = torch
        self._step = step
        self._images = images_per_step
        self._backlog = backlog_steps
        self._pending: collections.deque[Any] = collections.deque()
        self._enqueued = 0
        self._events: list[tuple[Any, bool]] = []  # (timing event, follows a pass) in stream order

    def keep_busy(self) -> None:
        pending = self._pending
        while pending and pending[0].query():
            pending.popleft()
        while len(pending) < self._backlog:
            self._step()
            event = self._torch.cuda.Event(enable_timing=True)
            event.record()
            pending.append(event)
            self._events.append((event, True))
            self._enqueued += 1

    def mark(self) -> tuple[Any, int, int]:
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        self._events.append((event, False))
        return event, self._enqueued, len(self._events) - 1

    def between(self, start: tuple[Any, int, int], end: tuple[Any, int, int]) -> tuple[int, float]:
        end[0].synchronize()
        return (end[1] - start[1]) * self._images, start[0].elapsed_time(end[0]) / 1000.0

    def step_seconds(self, start: tuple[Any, int, int], end: tuple[Any, int, int]) -> list[float]:
        """Device seconds of each pass between two markers: from the event before it to its own."""
        end[0].synchronize()
        events = self._events[start[2]:end[2] + 1]
        return [a.elapsed_time(b) / 1000.0 for (a, _), (b, after_pass) in zip(events, events[1:]) if after_pass]


def make_step(net: "torch.nn.Module", x: "torch.Tensor", device: "torch.device",
              cuda_graphs: bool = True) -> tuple[Callable[[], Any], Any]:
    """A callable running one forward pass of `net` on `x` (a CUDA graph replay where capture works
    and `cuda_graphs` is set, else eager), and what must be kept alive while it is used."""
    import torch

    if cuda_graphs:
        try:
            side = torch.cuda.Stream(device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(side):
                net(x)
            torch.cuda.current_stream(device).wait_stream(side)
            # capture_begin/end directly: `torch.cuda.graph` empties the allocator's cache before
            # every capture, so each network's buffers would be allocated from the driver anew
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.stream(side):
                graph.capture_begin()
                try:
                    out = net(x)
                finally:
                    graph.capture_end()
            torch.cuda.current_stream(device).wait_stream(side)
            graph.replay()
            return graph.replay, (graph, out)
        except Exception:  # capture unsupported by some op: fall back to eager execution
            torch.cuda.synchronize(device)
    net(x)
    return (lambda: net(x)), None


def time_repeats(step: Callable[[], Any], steps: int, repeats: int,
                 while_running: Callable[[], None] | None = None) -> list[float]:
    """GPU seconds of `repeats` contiguous runs of `steps` forward passes each.

    All work is queued first; `while_running` is called while the GPU executes it.
    """
    import torch

    events = [torch.cuda.Event(enable_timing=True) for _ in range(repeats + 1)]
    events[0].record()
    for i in range(repeats):
        for _ in range(steps):
            step()
        events[i + 1].record()
    if while_running is not None:
        while_running()
    events[-1].synchronize()
    return [a.elapsed_time(b) / 1000.0 for a, b in zip(events, events[1:])]
