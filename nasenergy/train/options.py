"""How a training runs (device, precision, memory format, graphs, where the data lives), apart
from what it computes (`nasenergy.train.recipe`). ``auto`` settings resolve per device: on a CUDA
GPU bf16 autocast, channels_last, one CUDA graph per training step and the data held on the GPU
when it fits; on the CPU plain fp32 eager steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from nasenergy.errors import UsageError

PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16")
STEP_MODES: tuple[str, ...] = ("auto", "eager", "cuda_graph", "compile")
DATA_PLACES: tuple[str, ...] = ("auto", "device", "host")
DATA_ON_DEVICE_SHARE = 0.25
"""``data="auto"`` holds the data on the GPU when it takes at most this share of the free memory."""


@dataclass(frozen=True)
class TrainOptions:
    """The settings of a training's speed, not of its result's meaning.

    Attributes:
        device: ``cpu``, ``cuda`` or ``cuda:<n>``.
        precision: ``fp32``, ``bf16`` (autocast; master weights and the optimiser stay fp32) or
            ``auto`` (bf16 on a GPU that has it, else fp32). fp16 is not offered: it needs loss
            scaling, which a captured graph cannot adapt.
        channels_last: NHWC memory format for the network and its inputs (``None``: on CUDA).
        step: ``eager``, ``cuda_graph`` (the whole step, forward, backward and optimiser, replayed
            from one captured graph), ``compile`` (``torch.compile`` of the network; its compile
            time is counted in the training's time) or ``auto`` (``cuda_graph`` on CUDA).
        data: ``device`` (the whole split copied to the GPU once), ``host`` (batches copied from
            pinned memory) or ``auto``.
        eval_batch_size: images per batch when measuring accuracy.
        cpu_threads: threads of a CPU training (``torch.set_num_threads`` for the training, put
            back afterwards); ``None``: torch's default (all cores). Several trainings sharing a
            CPU each need ``cores // trainings``: two 2-thread trainings on 2 cores took 30 s each
            where two 1-thread ones took 9 s (one alone: 5 s). A result is deterministic for a
            seed and a thread count.
    """

    device: str = "cpu"
    precision: str = "auto"
    channels_last: bool | None = None
    step: str = "auto"
    data: str = "auto"
    eval_batch_size: int = 1024
    cpu_threads: int | None = None

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise UsageError(f"precision {self.precision!r}: choose one of {', '.join(PRECISIONS)}")
        if self.step not in STEP_MODES:
            raise UsageError(f"step {self.step!r}: choose one of {', '.join(STEP_MODES)}")
        if self.data not in DATA_PLACES:
            raise UsageError(f"data {self.data!r}: choose one of {', '.join(DATA_PLACES)}")
        if not (self.device == "cpu" or self.device == "cuda" or self.device.startswith("cuda:")):
            raise UsageError(f"device {self.device!r}: expected cpu, cuda or cuda:<n>")
        if not isinstance(self.eval_batch_size, int) or self.eval_batch_size < 1:
            raise UsageError(f"eval batch size must be a positive integer, got {self.eval_batch_size!r}")
        if self.cpu_threads is not None and (not isinstance(self.cpu_threads, int) or self.cpu_threads < 1):
            raise UsageError(f"cpu threads must be a positive integer, got {self.cpu_threads!r}")

    @property
    def is_cuda(self) -> bool:
        """Whether the training runs on a CUDA GPU."""
        return self.device.startswith("cuda")

    def resolved(self) -> "TrainOptions":
        """The options with every ``auto`` decided for the device (the data place is decided
        when the data's size is known, `data_on_device`)."""
        cuda = self.is_cuda
        precision = self.precision
        if precision == "auto":
            precision = "bf16" if cuda and _bf16_supported() else "fp32"
        step = self.step if self.step != "auto" else ("cuda_graph" if cuda else "eager")
        if step == "cuda_graph" and not cuda:
            raise UsageError("step cuda_graph needs a CUDA device")
        channels_last = cuda if self.channels_last is None else self.channels_last
        return replace(self, precision=precision, step=step, channels_last=channels_last)

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict (for JSON)."""
        return asdict(self)


def _bf16_supported() -> bool:
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


PLAIN_LOOP = TrainOptions(device="cuda", precision="fp32", channels_last=False, step="eager", data="device")
"""The plain loop the trainer is measured against: fp32 eager steps, contiguous memory."""
