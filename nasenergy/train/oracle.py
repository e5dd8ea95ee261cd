"""Real training as the search's full evaluation: `TrainingOracle` follows
`nasenergy.oracles.AccuracyOracle`, so the search (or a user's own NAS code) asks it as it asks a
benchmark, and it trains the deployed network of the architecture on the user's data.

What it answers: the validation accuracy after the recipe's epochs (`source` and `cost_source`
``measured``; the cost is the training's wall time, set-up and evaluation included), with the
training's energy, throughput, memory and test accuracy in `Evaluation.training`. ``report``
answers the test accuracy of the same training where the data has a test split (no second
training). A training that stops (the process killed) continues from its last epoch checkpoint
when the same network is asked again with the same checkpoint folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nasenergy.errors import CandidateError, first_line
from nasenergy.oracles.evaluation import Evaluation, MetricSpec, Metrics
from nasenergy.train.data import ImageData
from nasenergy.train.network import train_arch
from nasenergy.train.options import TrainOptions
from nasenergy.train.recipe import TrainRecipe
from nasenergy.train.result import TrainingResult
from search_spaces import Arch, SpaceProtocol


class TrainingFailedError(CandidateError):
    """One network's training failed (out of memory, a numerical failure): its row says why and
    the search goes on."""

    @classmethod
    def of(cls, exc: BaseException) -> "TrainingFailedError":
        """The error for torch's `exc` (out of memory, a CUDA error): its first line, cut short."""
        return cls(f"training failed: {first_line(exc)[:300]}")


def training_figures(result: TrainingResult) -> tuple[tuple[str, Any], ...]:
    """The figures of a training an `Evaluation` carries (stored as ``train_*`` columns)."""
    return (
        ("energy_j", result.energy_j),
        ("energy_source", result.energy_source),
        ("images_per_s", result.images_per_s),
        ("peak_memory_mib", result.peak_memory_mib),
        ("test_accuracy_pct", result.test_accuracy_pct),
        ("epochs", result.epochs),
        ("resumed_from_epoch", result.resumed_from_epoch),
        ("device", result.settings.get("device_name")),
    )


class TrainingOracle:
    """Answers an architecture's accuracy by training it on `data`.

    Args:
        space: the search space whose architectures it trains.
        data: the data (`nasenergy.train.load_data`).
        recipe: what a training computes (`TrainRecipe`; ``epochs`` is the schedule).
        options: how fast (`TrainOptions`).
        checkpoint_dir: where epoch checkpoints are kept (``None``: none; a killed training
            then restarts from its first epoch).
        on_epoch: called with ``(arch, epochs done, epochs in all)`` after every epoch.
    """

    def __init__(self, space: SpaceProtocol, data: ImageData, *, recipe: TrainRecipe, options: TrainOptions,
                 checkpoint_dir: Path | None = None,
                 on_epoch: Callable[[str, int, int], None] | None = None) -> None:
        self.space, self.data, self.recipe, self.options = space, data, recipe, options
        self.checkpoint_dir = checkpoint_dir
        self.on_epoch = on_epoch
        self._results: dict[str, TrainingResult] = {}

    @property
    def space_name(self) -> str:
        """The space's name."""
        return self.space.name

    @property
    def metrics(self) -> Metrics:
        """Validation accuracy after ``epochs`` (search); test accuracy of the same training (report)."""
        epochs = str(self.recipe.epochs)
        return Metrics(search=MetricSpec("x-valid", epochs, "mean"), report=MetricSpec("x-test", epochs, "mean"))

    def describe(self) -> str:
        """One line: what is trained, on what, how."""
        return (f"real training on {self.data.name} ({self.data.source}; {self.data.val_source}), "
                f"{self.recipe.epochs} epochs of NATS-Bench's recipe on {self.options.device}")

    def _checkpoint(self, arch: Arch, seed: int) -> Path | None:
        if self.checkpoint_dir is None:
            return None
        digest = hashlib.sha256(f"{arch}|{seed}".encode()).hexdigest()[:20]
        return self.checkpoint_dir / f"{digest}.npz"

    def train(self, arch: Arch, *, seed: int = 0) -> TrainingResult:
        """Train `arch`'s deployed network (weights and batches from `seed`).

        Raises:
            TrainingFailedError: the training ran out of memory or failed numerically.
        """
        def progress(done: int, total: int) -> None:
            self._write_status(str(arch), done, total)
            if self.on_epoch is not None:
                self.on_epoch(str(arch), done, total)

        self._write_status(str(arch), 0, self.recipe.epochs)
        try:
            result = train_arch(self.space, arch, self.data, recipe=self.recipe, options=self.options, seed=seed,
                                checkpoint=self._checkpoint(arch, seed), on_epoch=progress)
        except RuntimeError as exc:  # torch's out-of-memory and CUDA errors are RuntimeErrors
            raise TrainingFailedError.of(exc) from None
        finally:
            self._write_status(None, 0, 0)
        self._results[str(arch)] = result
        return result

    def _write_status(self, arch: str | None, done: int, total: int) -> None:
        """``<checkpoint folder>/running-<pid>.json``: the training this process runs and its epoch
        (read by the search's progress bar); removed when the training ends."""
        if self.checkpoint_dir is None:
            return
        path = self.checkpoint_dir / f"running-{os.getpid()}.json"
        try:
            if arch is None:
                path.unlink(missing_ok=True)
                return
            self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"arch": arch, "epoch": done, "epochs": total}))
            os.replace(tmp, path)
        except OSError:
            pass  # the progress bar's line is a convenience: never fail a training for it

    def evaluate(self, arch: Arch, dataset: str, *, seed: int | None = None) -> Evaluation:
        """Train `arch` and answer its validation accuracy (`dataset` is the data's registered
        name; any other is the caller's mistake)."""
        result = self.train(arch, seed=0 if seed is None else int(seed))
        return Evaluation(
            arch=str(arch), arch_index=self.space.index(arch), accuracy_pct=result.val_accuracy_pct,
            dataset=dataset, split="x-valid", schedule=str(self.recipe.epochs), cost_s=result.train_s,
            cost_source="measured", source="measured", trial=f"seed:{result.settings.get('seed', 0)}",
            training=training_figures(result),
        )

    def report(self, arch: Arch, dataset: str) -> Evaluation:
        """The test accuracy of `arch`'s training, where the data has a test split.

        Raises:
            CandidateError: no test split, or `arch` was not trained by this oracle.
        """
        result = self._results.get(str(arch))
        if result is None:
            raise CandidateError("not trained in this process (the final figure is the training's own)")
        if result.test_accuracy_pct is None:
            raise CandidateError(f"{self.data.name} has no test split")
        return Evaluation(
            arch=str(arch), arch_index=self.space.index(arch), accuracy_pct=result.test_accuracy_pct, dataset=dataset,
            split="x-test", schedule=str(self.recipe.epochs), cost_s=0.0, cost_source="measured", source="measured",
            trial=f"seed:{result.settings.get('seed', 0)}",
        )
