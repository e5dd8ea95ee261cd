"""What one training returns: accuracies, time, throughput, memory and energy, each labelled."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class TrainingResult:
    """One finished training.

    Attributes:
        val_accuracy_pct: top-1 accuracy on the validation split after the last epoch, %.
        test_accuracy_pct: the same on the test split, where the data has one (else ``None``).
        final_train_loss: mean cross-entropy over the last epoch's steps.
        train_s: wall-clock seconds of the whole training: set-up (copying the data, graph
            capture or compilation), every epoch and the final evaluation; a resumed training
            adds the seconds spent before it stopped.
        setup_s: the part of ``train_s`` spent before the first step (data copy, capture, compile).
        eval_s: the part of ``train_s`` spent measuring accuracy.
        epoch_s: seconds of each epoch's steps (empty for epochs done before a resume).
        images_per_s: training images per second over the epochs' steps.
        peak_memory_mib: the CUDA allocator's peak during the training (``None`` on the CPU).
        energy_j: the board's energy over ``train_s`` from NVML's counter (``None`` without one).
        energy_source: ``measured`` (this training alone on the board), ``apportioned`` (a share
            of the board's energy while it shared the board) or ``None``.
        epochs: epochs trained in all; ``resumed_from_epoch``: the epoch a checkpoint restarted
            it at (0: from the start).
        steps: optimiser steps in all.
        settings: the resolved `TrainOptions` and `TrainRecipe` as dicts, the device name, the
            seed and the data's description.
        source: ``measured``: every figure is from this training.
    """

    val_accuracy_pct: float
    test_accuracy_pct: float | None
    final_train_loss: float
    train_s: float
    setup_s: float
    eval_s: float
    epoch_s: tuple[float, ...]
    images_per_s: float
    peak_memory_mib: float | None
    energy_j: float | None
    energy_source: str | None
    epochs: int
    resumed_from_epoch: int
    steps: int
    settings: dict[str, Any] = field(default_factory=dict)
    source: str = "measured"

    def as_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        out = asdict(self)
        out["epoch_s"] = list(self.epoch_s)
        return out
