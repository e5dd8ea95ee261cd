"""The training recipe, stated in one place: NATS-Bench's (NAS-Bench-201's) hyper-parameters.

NATS-Bench trains every topology-space cell with SGD (Nesterov momentum 0.9, weight decay 5e-4),
learning rate 0.1 annealed to 0 by a cosine over the schedule, batch 256, cross-entropy, and random
crop (4-pixel padding at 32x32) plus horizontal flip. The search trains on 12 epochs; 200 is the
full schedule. `TrainRecipe` holds those values; every trainer in `nasenergy.train` reads them
from here.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from nasenergy.errors import UsageError


@dataclass(frozen=True)
class TrainRecipe:
    """What a training does, independent of how fast it runs.

    Attributes:
        epochs: passes over the training split (NATS-Bench's search schedule: 12).
        batch_size: images per optimiser step (NATS-Bench: 256). The last partial batch of an
            epoch is dropped (every step then has one shape; with reshuffling each epoch every
            image is still seen).
        lr: the initial learning rate (0.1), annealed by a cosine to ``lr_min`` (0) over all steps.
        momentum: SGD momentum (0.9, Nesterov).
        weight_decay: L2 weight decay added to every gradient (5e-4).
        crop_padding_px: random-crop padding in pixels at 32x32 (4); scaled with the image
            (``max(1, round(4 * H / 32))``: 2 at 16x16, 1 at 8x8).
        hflip: random horizontal flips (``True``; switch off for data where left and right differ).
        label_smoothing: cross-entropy label smoothing (NATS-Bench: 0).
    """

    epochs: int = 12
    batch_size: int = 256
    lr: float = 0.1
    lr_min: float = 0.0
    momentum: float = 0.9
    weight_decay: float = 5e-4
    crop_padding_px: int = 4
    hflip: bool = True
    label_smoothing: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.epochs, int) or self.epochs < 1:
            raise UsageError(f"epochs must be a positive integer, got {self.epochs!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise UsageError(f"batch size must be a positive integer, got {self.batch_size!r}")
        for name in ("lr", "lr_min", "momentum", "weight_decay", "label_smoothing"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise UsageError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.momentum >= 1 or self.label_smoothing >= 1:
            raise UsageError("momentum and label smoothing must be below 1")
        if self.crop_padding_px < 0:
            raise UsageError(f"crop padding must be >= 0, got {self.crop_padding_px!r}")

    def padding_px(self, height_px: int) -> int:
        """The crop padding for images `height_px` high (4 at 32, 2 at 16, 1 at 8; 0 if off)."""
        if self.crop_padding_px == 0:
            return 0
        return max(1, round(self.crop_padding_px * height_px / 32))

    def lr_at(self, step: int, total_steps: int) -> float:
        """The learning rate of optimiser step `step` (0-based) of `total_steps`: cosine annealing
        from ``lr`` to ``lr_min`` (per step, as NATS-Bench's scheduler updates per iteration)."""
        if total_steps <= 1:
            return self.lr
        frac = min(max(step / total_steps, 0.0), 1.0)
        return self.lr_min + 0.5 * (self.lr - self.lr_min) * (1.0 + math.cos(math.pi * frac))

    def as_dict(self) -> dict[str, Any]:
        """The recipe as a plain dict (for JSON)."""
        return asdict(self)


NATS_RECIPE = TrainRecipe()
"""NATS-Bench's 12-epoch search recipe."""
