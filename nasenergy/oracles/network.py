"""Accuracy of a deployed network: the mean over every cell that deploys to it.

Cells that deploy to the identical network (`SearchSpace.deployed_members`) compute the same
function; a benchmark that trained each of them recorded independent trainings of one network.
`NetworkOracle` answers a network once, with the mean over all of them, so a search evaluates a
network once, whichever of its cells it proposed, and its figure does not depend on that choice.
The cost charged is the mean of the cells' costs: one training of the network. Each cell's draw
of a training run uses its own seed derived from the evaluation's seed. Cells a partial benchmark
lacks are left out of the mean (the proposed cell itself must be there). An oracle that trains for
real (``source = measured``) is asked for the proposed cell alone: one network, one training.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from nasenergy.oracles.errors import ArchNotInBenchmarkError
from nasenergy.oracles.evaluation import AccuracyOracle, Evaluation, Metrics
from search_spaces import Arch, SpaceProtocol


def _cell_seed(seed: int | None, position: int) -> int | None:
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), int(position)]).generate_state(1)[0])


class NetworkOracle:
    """An `AccuracyOracle` answering for deployed networks (see the module's docstring).

    Args:
        oracle: the benchmark's oracle, which answers single cells.
        space: the search space; its ``deployed_members(arch)`` lists a network's cells.
    """

    def __init__(self, oracle: AccuracyOracle, space: SpaceProtocol) -> None:
        self.oracle = oracle
        self.space = space

    @property
    def space_name(self) -> str:
        return self.oracle.space_name

    @property
    def metrics(self) -> Metrics:
        return self.oracle.metrics

    def describe(self) -> str:
        return f"{self.oracle.describe()}; a deployed network's accuracy is the mean over its cells"

    def __getattr__(self, name: str) -> Any:  # what else the wrapped oracle offers (seed, path, ...)
        if name in ("oracle", "space"):
            raise AttributeError(name)
        return getattr(self.oracle, name)

    def _members(self, arch: Arch) -> tuple[Arch, ...]:
        members = getattr(self.space, "deployed_members", None)
        return tuple(members(arch)) if members is not None else (arch,)

    def _mean(self, arch: Arch, evaluations: list[Evaluation], members: tuple[Arch, ...]) -> Evaluation:
        first = next((e for e, m in zip(evaluations, members) if str(m) == str(arch)), evaluations[0])
        accuracies = tuple(float(e.accuracy_pct) for e in evaluations)
        sources = {e.cost_source for e in evaluations}
        return dataclasses.replace(
            first,
            arch=str(arch),
            arch_index=int(self.space.index(arch)),
            accuracy_pct=float(np.mean(accuracies)),
            cost_s=float(np.mean([e.cost_s for e in evaluations])),
            cost_source=first.cost_source if len(sources) == 1 else "estimated",
            trial=f"cells:{len(evaluations)}",
            cell_indices=tuple(int(self.space.index(m)) for m in members),
            cell_accuracies_pct=accuracies,
        )

    def evaluate(self, arch: Arch, dataset: str, *, seed: int | None = None) -> Evaluation:
        """The search metric of `arch`'s deployed network: the mean over its cells."""
        members = self._members(arch)
        if len(members) <= 1:
            return self.oracle.evaluate(arch, dataset, seed=seed)
        own = self.oracle.evaluate(arch, dataset, seed=_cell_seed(seed, members.index(arch)) if arch in members else seed)
        if own.source == "measured":  # real training: one network, one training
            return own
        return self._answered(arch, members, lambda i, m: own if m == arch else
                              self.oracle.evaluate(m, dataset, seed=_cell_seed(seed, i)))

    def _answered(self, arch: Arch, members: tuple[Arch, ...], ask: Any) -> Evaluation:
        """The mean over the members the benchmark holds (a partial table may lack some)."""
        evaluations, held = [], []
        for i, m in enumerate(members):
            try:
                evaluations.append(ask(i, m))
            except ArchNotInBenchmarkError:
                continue
            held.append(m)
        return self._mean(arch, evaluations, tuple(held))

    def report(self, arch: Arch, dataset: str) -> Evaluation:
        """The final reported metric of `arch`'s deployed network: the mean over its cells."""
        members = self._members(arch)
        if len(members) <= 1:
            return self.oracle.report(arch, dataset)
        own = self.oracle.report(arch, dataset)
        if own.source == "measured":
            return own
        return self._answered(arch, members, lambda i, m: own if m == arch else self.oracle.report(m, dataset))
