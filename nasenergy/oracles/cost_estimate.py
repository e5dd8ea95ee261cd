"""Estimated training costs on this device, for benchmark cells with no recorded time.

The estimate times real SGD steps of the network NATS-Bench trains (``space.build(arch, dataset)``)
on a random batch, then scales to the full NATS training run:

    cost_s = train_step_s * ceil(train_images / batch) * epochs
             + eval_step_s * ceil(eval_images / batch)

with NATS-Bench's optimiser (SGD, momentum 0.9, Nesterov, weight decay 5e-4), cross-entropy loss,
a batch of 256 and the image counts of `nasenergy.oracles.datasets`. It is the seconds *this*
device would take, not NATS-Bench's recorded (GPU) seconds, and is labelled ``estimated``.

Step times depend only on the computation graph, so they are kept per canonical class
(``space.canonical``) and dataset, in memory and in a small SQLite file
(``<cache dir>/step_times.sqlite``) keyed by device, torch version and batch size, so each class
is timed once per device.
"""

from __future__ import annotations

import math
import platform
import sqlite3
import statistics
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nasenergy.oracles.datasets import NatsCell, schedule_epochs
from nasenergy.oracles.errors import CostEstimationError
from search_spaces import Arch, SearchSpace, get_space

DEFAULT_BATCH_SIZE = 256
STEP_TIMES_FILE = "step_times.sqlite"


@dataclass(frozen=True)
class StepTime:
    """Timed steps of one network on one device.

    Attributes:
        train_step_s: seconds of one SGD step (forward, backward, update) on a batch (median).
        eval_step_s: seconds of one forward pass without gradients on a batch (median).
        batch_size: images per batch.
        device: the device, e.g. ``cuda:NVIDIA H200`` or ``cpu:x86_64 (2 threads)``.
        source: ``measured`` now, or ``recorded`` (read back from the step-time file).
    """

    train_step_s: float
    eval_step_s: float
    batch_size: int
    device: str
    source: str


def device_label(device: str) -> str:
    """A stable name for `device` (``cpu`` or ``cuda[:n]``) used to key stored step times."""
    import torch

    if device.startswith("cuda"):
        return f"cuda:{torch.cuda.get_device_name(torch.device(device))}"
    return f"cpu:{platform.machine()} {platform.processor() or ''} ({torch.get_num_threads()} threads)".replace("  ", " ")


class StepTimeEstimator:
    """Estimates NATS-Bench training costs from timed training steps on this device.

    Args:
        space_name: ``tss`` or ``sss``.
        device: ``cpu``, ``cuda`` or ``cuda:<n>``; None picks CUDA when available.
        batch_size: images per timed batch (NATS-Bench trains with 256).
        warmup_steps: untimed steps first.
        timed_steps: timed steps; the median is kept.
        store_path: SQLite file for step times; None keeps them in memory only.
    """

    def __init__(
        self,
        space_name: str,
        *,
        device: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        warmup_steps: int = 1,
        timed_steps: int = 2,
        store_path: str | Path | None = None,
    ) -> None:
        self.space_name = space_name
        self.batch_size = int(batch_size)
        self.warmup_steps = int(warmup_steps)
        self.timed_steps = max(1, int(timed_steps))
        self._device = device
        self._device_label: str | None = None
        self._store_path = Path(store_path) if store_path is not None else None
        self._memory: dict[tuple[str, str], StepTime] = {}

    @property
    def device(self) -> str:
        """The torch device the steps run on."""
        if self._device is None:
            import torch

            self._device = "cuda" if torch.cuda.is_available() else "cpu"
        return self._device

    def cost_s(self, arch: Arch, cell: NatsCell, schedule: str) -> float:
        """Estimated seconds to train `arch` on `cell`'s training set for `schedule` and score it.

        Raises:
            CostEstimationError: the network cannot be built or run.
        """
        step = self.step_time(arch, cell.dataset)
        batches_per_epoch = math.ceil(cell.train_images / step.batch_size)
        eval_batches = math.ceil(cell.eval_images / step.batch_size)
        epochs = schedule_epochs(schedule)
        return step.train_step_s * batches_per_epoch * epochs + step.eval_step_s * eval_batches

    def step_time(self, arch: Arch, dataset: str) -> StepTime:
        """Step times of `arch` on `dataset` (cached per canonical class)."""
        space = get_space(self.space_name)
        canonical = str(space.canonical(arch))
        key = (canonical, dataset)
        if key in self._memory:
            return self._memory[key]
        stored = self._read_store(canonical, dataset)
        step = stored or self._measure(space, canonical, dataset)
        if stored is None:
            self._write_store(canonical, dataset, step)
        self._memory[key] = step
        return step

    def _label(self) -> str:
        if self._device_label is None:
            self._device_label = device_label(self.device)
        return self._device_label

    def _measure(self, space: SearchSpace, arch: str, dataset: str) -> StepTime:
        import torch

        device = torch.device(self.device)
        try:
            model = space.build(arch, dataset).to(device).train()
            generator = torch.Generator().manual_seed(0)
            images = torch.randn(
                (self.batch_size, *space.input_shape(dataset)), generator=generator
            ).to(device)
            labels = torch.randint(
                0, space.num_classes(dataset), (self.batch_size,), generator=generator
            ).to(device)
            optimizer = torch.optim.SGD(
                model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4
            )
            loss_fn = torch.nn.CrossEntropyLoss()

            def train_step() -> None:
                optimizer.zero_grad(set_to_none=True)
                loss_fn(model(images), labels).backward()
                optimizer.step()

            def eval_step() -> None:
                with torch.no_grad():
                    model(images)

            train_s = self._time(train_step, device)
            model.eval()
            eval_s = self._time(eval_step, device)
        except Exception as exc:  # torch raises many kinds (OOM, unsupported ops)
            raise CostEstimationError(
                f"cannot time training steps of {arch} on {dataset} ({self.device}): "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc
        return StepTime(train_s, eval_s, self.batch_size, self._label(), "measured")

    def _time(self, step: Any, device: Any) -> float:
        import torch

        def sync() -> None:
            if device.type == "cuda":
                torch.cuda.synchronize(device)

        for _ in range(self.warmup_steps):
            step()
        sync()
        times = []
        for _ in range(self.timed_steps):
            start = time.perf_counter()
            step()
            sync()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    # --- the step-time file ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._store_path is None:
            return None
        try:
            self._store_path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._store_path, timeout=10)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS step_times (device TEXT, torch TEXT, space TEXT, "
                "canonical TEXT, dataset TEXT, batch_size INTEGER, train_step_s REAL, "
                "eval_step_s REAL, measured_utc TEXT, "
                "PRIMARY KEY (device, torch, space, canonical, dataset, batch_size))"
            )
            return conn
        except sqlite3.Error:
            return None  # an unwritable cache only costs re-timing

    def _store_key(self, canonical: str, dataset: str) -> tuple[Any, ...]:
        import torch

        return (self._label(), torch.__version__, self.space_name, canonical, dataset, self.batch_size)

    def _read_store(self, canonical: str, dataset: str) -> StepTime | None:
        conn = self._connect()
        if conn is None:
            return None
        with conn:
            row = conn.execute(
                "SELECT train_step_s, eval_step_s FROM step_times WHERE device=? AND torch=? "
                "AND space=? AND canonical=? AND dataset=? AND batch_size=?",
                self._store_key(canonical, dataset),
            ).fetchone()
        conn.close()
        if row is None:
            return None
        return StepTime(float(row[0]), float(row[1]), self.batch_size, self._label(), "recorded")

    def _write_store(self, canonical: str, dataset: str, step: StepTime) -> None:
        conn = self._connect()
        if conn is None:
            return
        try:
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO step_times VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*self._store_key(canonical, dataset), step.train_step_s, step.eval_step_s,
                     datetime.now(timezone.utc).isoformat(timespec="seconds")),
                )
        except sqlite3.Error:
            pass
        finally:
            conn.close()
