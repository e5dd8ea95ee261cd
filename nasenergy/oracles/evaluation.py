"""What an accuracy oracle returns, which metric it answers, and the protocol every oracle follows.

The NATS-Bench protocol searches on one metric and reports another:

* search: validation accuracy (``x-valid``) after the 12-epoch schedule (``hp="12"``) of one
  training run picked at random, charging the simulated training-plus-evaluation time, exactly as
  ``api.simulate_train_eval(arch, dataset, hp="12")`` does;
* report: test accuracy after the 200-epoch schedule (``hp="200"``), averaged over the recorded runs
  (``is_random=False``).

Both are `MetricSpec` values the user can change.

Randomness: NATS-Bench picks a training run with the global `random` module. Oracles never touch it.
``evaluate(..., seed=s)`` picks the run from a fresh ``random.Random(s)``, so it returns what
``random.seed(s); api.simulate_train_eval(...)`` returns, and ``seed=None`` draws from the oracle's
own stream (seeded when the oracle is made), so a run is reproducible from the oracle's seed.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from nasenergy.oracles.datasets import normalize_schedule
from nasenergy.oracles.errors import UnknownDatasetError
from search_spaces import Arch

CostSource = Literal["recorded", "estimated", "unknown", "measured"]
COST_SOURCES: tuple[str, ...] = ("recorded", "estimated", "unknown", "measured")
AccuracySource = Literal["recorded", "measured"]
TRIAL_MODES: tuple[str, ...] = ("random", "mean")


@dataclass(frozen=True)
class MetricSpec:
    """Which accuracy an oracle answers.

    Attributes:
        split: ``x-valid``, ``x-test``, ``ori-test``, or ``valid`` / ``test`` (resolved per dataset).
        schedule: NATS ``hp``: ``"12"``, ``"200"`` (topology space) or ``"01"``, ``"12"``, ``"90"``
            (size space).
        trial: ``random`` (one recorded training run, as NATS-Bench's simulated search does) or
            ``mean`` (the mean over the recorded runs, as NATS-Bench reports).
    """

    split: str = "x-valid"
    schedule: str = "12"
    trial: str = "random"

    def __post_init__(self) -> None:
        object.__setattr__(self, "schedule", normalize_schedule(self.schedule))
        if self.trial not in TRIAL_MODES:
            raise UnknownDatasetError(
                f"unknown trial mode {self.trial!r}; choose one of {', '.join(TRIAL_MODES)}"
            )


@dataclass(frozen=True)
class Metrics:
    """The search metric and the final reported metric of a run."""

    search: MetricSpec
    report: MetricSpec


def default_metrics(space_name: str = "tss") -> Metrics:
    """NATS-Bench's protocol for a space: search on 12-epoch x-valid, report full-schedule test.

    Args:
        space_name: ``tss`` (full schedule 200 epochs) or ``sss`` (full schedule 90 epochs).
    """
    full = "90" if space_name == "sss" else "200"
    return Metrics(
        search=MetricSpec(split="x-valid", schedule="12", trial="random"),
        report=MetricSpec(split="test", schedule=full, trial="mean"),
    )


@dataclass(frozen=True)
class Evaluation:
    """One accuracy evaluation of one architecture.

    Attributes:
        arch: the architecture string (official NATS-Bench spelling).
        arch_index: the official NATS-Bench index.
        accuracy_pct: top-1 accuracy in percent.
        dataset: ``cifar10``, ``cifar100`` or ``ImageNet16-120``.
        split: ``x-valid``, ``x-test`` or ``ori-test``.
        schedule: NATS ``hp`` (``"12"``, ``"200"``, ...).
        cost_s: seconds a real evaluation (training on the schedule, then one pass over the split)
            would have taken; 0.0 when ``cost_source`` is ``unknown``.
        cost_source: ``recorded`` (NATS-Bench's recorded times), ``estimated`` (timed training
            steps on this device, scaled to the schedule), ``measured`` (a real training's wall
            time, `nasenergy.train`) or ``unknown`` (no record, estimation off).
        source: ``recorded`` (a benchmark lookup) or ``measured`` (real training).
        trial: which training run: ``mean`` (mean over the recorded runs), ``seed:<n>`` or
            ``run:<k>`` (a run whose seed the table does not record); ``cells:<n>`` for the mean
            over the ``n`` cells of one deployed network (`nasenergy.oracles.network`).
        cell_indices: the official indices of the cells whose figures the accuracy is the mean
            of (empty: the architecture's own figure alone).
        cell_accuracies_pct: each of those cells' accuracy, in the same order.
        training: what a real training measured besides its accuracy and seconds (energy,
            throughput, memory, test accuracy, device; `nasenergy.train.oracle.training_figures`);
            empty for a benchmark lookup.
    """

    arch: str
    arch_index: int
    accuracy_pct: float
    dataset: str
    split: str
    schedule: str
    cost_s: float
    cost_source: str
    source: str
    trial: str
    cell_indices: tuple[int, ...] = ()
    cell_accuracies_pct: tuple[float, ...] = ()
    training: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.cost_source not in COST_SOURCES:
            raise ValueError(f"cost_source must be one of {COST_SOURCES}, got {self.cost_source!r}")
        if self.source not in ("recorded", "measured"):
            raise ValueError(f"source must be 'recorded' or 'measured', got {self.source!r}")

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for CSV or JSON); the per-cell fields only where there are
        several cells."""
        out = asdict(self)
        out.pop("training")
        out.update({f"train_{k}": v for k, v in self.training})
        if not self.cell_indices:
            out.pop("cell_indices")
            out.pop("cell_accuracies_pct")
        else:
            out["cell_indices"] = list(self.cell_indices)
            out["cell_accuracies_pct"] = list(self.cell_accuracies_pct)
        return out


@runtime_checkable
class AccuracyOracle(Protocol):
    """Answers the expensive full accuracy evaluation of an architecture, and its final report."""

    @property
    def space_name(self) -> str:
        """``tss`` or ``sss``."""
        ...

    @property
    def metrics(self) -> Metrics:
        """The search and report metrics this oracle answers."""
        ...

    def evaluate(self, arch: Arch, dataset: str, *, seed: int | None = None) -> Evaluation:
        """The search metric of `arch` on `dataset`, with the cost a real evaluation would charge."""
        ...

    def report(self, arch: Arch, dataset: str) -> Evaluation:
        """The final reported metric of `arch` on `dataset`."""
        ...

    def describe(self) -> str:
        """One line naming the benchmark behind the oracle."""
        ...


class TrialStreams:
    """Private random streams that pick NATS training runs, never touching the global `random`."""

    def __init__(self, seed: int | None) -> None:
        self._own = random.Random(seed)

    def stream(self, seed: int | None) -> random.Random:
        """The oracle's own stream when `seed` is None, else a fresh ``random.Random(seed)``."""
        return self._own if seed is None else random.Random(seed)

    @staticmethod
    def pick(rng: random.Random, n_trials: int) -> int:
        """Position of the chosen run among `n_trials`; the same draw as ``random.choice(seeds)``."""
        return rng.choice(range(n_trials))


def trial_label(seed: int | None, position: int | None) -> str:
    """``seed:<n>`` for a run with a known seed, ``run:<k>`` (1-based) otherwise, ``mean`` for a
    mean over the recorded runs (no position and no seed)."""
    if position is None:
        return f"seed:{seed}" if seed is not None and seed >= 0 else "mean"
    if seed is not None and seed >= 0:
        return f"seed:{seed}"
    return f"run:{position + 1}"
