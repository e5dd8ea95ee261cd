"""The interface shared by the NATS-Bench search spaces."""

from __future__ import annotations

import functools
import operator
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np

from search_spaces._errors import ArchError, UsageError
from search_spaces._cost import ModelCost, deployed_network_cost, network_cost
from search_spaces._datasets import dataset_info
from search_spaces._network_spec import NetworkSpec

if TYPE_CHECKING:
    from torch import nn

ArchT = TypeVar("ArchT")


class CategoricalTrial(Protocol):
    """What `SearchSpace.suggest` needs of a trial (an ``optuna.Trial`` fits)."""

    def suggest_categorical(self, name: str, choices: Sequence[Any]) -> Any: ...


class SearchSpace(ABC, Generic[ArchT]):
    """A NATS-Bench search space: its architectures, their official order, networks and costs.

    Methods taking an architecture accept the arch object or its official string.
    """

    name: ClassVar[str]
    """Short name: ``tss`` or ``sss``."""
    size: ClassVar[int]
    """Number of architectures."""
    feature_names: ClassVar[tuple[str, ...]]
    """Names of the entries of `features`."""

    # --- strings and order -------------------------------------------------------------------

    @abstractmethod
    def parse(self, text: ArchT | str) -> ArchT:
        """The architecture of an official string (an architecture is returned unchanged).

        Raises:
            ArchError: a malformed string; the one-line message names the bad part.
        """

    @abstractmethod
    def _index_of(self, arch: ArchT) -> int: ...

    @abstractmethod
    def _arch_at(self, index: int) -> ArchT: ...

    def index(self, arch: ArchT | str) -> int:
        """The official NATS-Bench index of `arch`, ``0 .. size - 1``."""
        return self._index_of(self.parse(arch))

    def arch_at(self, index: int) -> ArchT:
        """The architecture at an official index.

        Raises:
            ArchError: `index` is not an integer in ``0 .. size - 1``.
        """
        try:
            i = operator.index(index)
        except TypeError:
            raise ArchError(f"a {self.name} index must be an integer, got {type(index).__name__}") from None
        if not 0 <= i < self.size:
            raise ArchError(f"{self.name} index {i} is out of range 0..{self.size - 1}")
        return self._arch_at(i)

    def enumerate(self) -> Iterator[ArchT]:
        """Every architecture, in official index order."""
        return (self._arch_at(i) for i in range(self.size))

    def sample(self, n: int, seed: int | np.random.Generator) -> list[ArchT]:
        """`n` distinct architectures drawn uniformly at random, without replacement.

        Args:
            n: how many, ``0 .. size``.
            seed: an integer seed or a ``numpy.random.Generator`` (which is advanced).

        Raises:
            UsageError: `n` out of range.
        """
        count = operator.index(n)
        if not 0 <= count <= self.size:
            raise UsageError(f"cannot sample {count} architectures from {self.name} (size {self.size})")
        rng = np.random.default_rng(seed)
        return [self._arch_at(int(i)) for i in rng.choice(self.size, size=count, replace=False)]

    # --- equivalence --------------------------------------------------------------------------

    @abstractmethod
    def canonical(self, arch: ArchT | str) -> ArchT:
        """The representative of the class of architectures computing the same function as `arch`."""

    @abstractmethod
    def canonical_classes(self) -> list[ArchT]:
        """The class representatives, in official index order."""

    # --- Optuna -------------------------------------------------------------------------------

    @abstractmethod
    def param_choices(self) -> dict[str, tuple[Any, ...]]:
        """The categorical parameters `suggest` asks for: name -> choices, in order."""

    @abstractmethod
    def _from_values(self, values: tuple[Any, ...]) -> ArchT: ...

    def suggest(self, trial: CategoricalTrial) -> ArchT:
        """Ask `trial` for one categorical per `param_choices` entry; the architecture they name."""
        values = tuple(trial.suggest_categorical(name, list(choices)) for name, choices in self.param_choices().items())
        return self._from_values(values)

    def arch_from_params(self, params: Mapping[str, Any]) -> ArchT:
        """The architecture named by parameters as `suggest` creates them (e.g. ``trial.params``).

        Keys not in `param_choices` are ignored.

        Raises:
            ArchError: a parameter is missing or has a value outside its choices.
        """
        missing = [name for name in self.param_choices() if name not in params]
        if missing:
            raise ArchError(f"missing {self.name} parameter(s): {', '.join(missing)}")
        return self._from_values(tuple(params[name] for name in self.param_choices()))

    # --- networks, costs, features ------------------------------------------------------------

    @abstractmethod
    def network_spec(self, arch: ArchT | str) -> NetworkSpec:
        """The layer widths and cell of the network of `arch`."""

    def input_shape(self, dataset: str) -> tuple[int, int, int]:
        """The shape of one input image, ``(channels, height, width)`` in pixels.

        Raises:
            UsageError: unknown dataset.
        """
        return dataset_info(dataset).input_shape

    def num_classes(self, dataset: str) -> int:
        """Number of classes (logits) of `dataset`."""
        return dataset_info(dataset).num_classes

    def build(self, arch: ArchT | str, dataset: str = "cifar10", *, seed: int = 0) -> nn.Module:
        """The PyTorch network NATS-Bench trains for `arch` on `dataset`, in eval mode, on CPU.

        Its forward pass maps images ``(batch, 3, H, W)`` to logits ``(batch, num_classes)``.

        Args:
            arch: the architecture.
            dataset: one of `search_spaces.DATASETS`.
            seed: seeds the weight initialisation (PyTorch's default initialisers); the global
                torch random state is left unchanged.
        """
        from search_spaces._nets import build_network  # lazy: imports torch

        info = dataset_info(dataset)
        return build_network(self.network_spec(arch), info.input_shape[0], info.num_classes, seed)

    def build_deployed(self, arch: ArchT | str, dataset: str = "cifar10", *, seed: int = 0) -> nn.Module:
        """The network a user would deploy for `arch`: `build`'s function without dead or zero ops.

        Same weights as ``build(arch, dataset, seed=seed)`` (the deployed network shares the
        as-built modules it keeps), in eval mode, on CPU. See `search_spaces._deployed`.
        """
        from search_spaces._nets import build_deployed_network  # lazy: imports torch

        info = dataset_info(dataset)
        return build_deployed_network(self.network_spec(arch), info.input_shape[0], info.num_classes, seed)

    def count_deployed(self, arch: ArchT | str, dataset: str = "cifar10") -> ModelCost:
        """Parameters, MACs and FLOPs per image of the *deployed* network of `arch` on `dataset`.

        Not NATS-Bench's figures (those are `count`, of the network as built): only the ops the
        deployed network computes count. Equal for all architectures with one `deployed_key`.
        """
        info = dataset_info(dataset)
        return deployed_network_cost(self.network_spec(arch), info.input_shape, info.num_classes)

    @abstractmethod
    def deployed_key(self, arch: ArchT | str) -> str:
        """A name of `arch`'s deployed network: architectures sharing it deploy to identical networks."""

    @functools.cached_property
    def _deployed_representatives(self) -> dict[str, ArchT]:
        """`deployed_key` -> the class's member of smallest official index, in index order (built once)."""
        representatives: dict[str, ArchT] = {}
        for arch in self.enumerate():
            representatives.setdefault(self.deployed_key(arch), arch)
        return representatives

    def deployed_classes(self) -> list[ArchT]:
        """One architecture per `deployed_key` (its member of smallest official index), in index order."""
        return list(self._deployed_representatives.values())

    @functools.cached_property
    def _deployed_members(self) -> dict[str, tuple[ArchT, ...]]:
        """`deployed_key` -> every architecture that deploys to it, in index order (built once)."""
        members: dict[str, list[ArchT]] = {}
        for arch in self.enumerate():
            members.setdefault(self.deployed_key(arch), []).append(arch)
        return {key: tuple(group) for key, group in members.items()}

    def deployed_members(self, arch: ArchT | str) -> tuple[ArchT, ...]:
        """Every architecture of `arch`'s deployed class, in index order: the cells that deploy to
        the identical network (independent trainings of one network, as a benchmark records them)."""
        return self._deployed_members[self.deployed_key(arch)]

    def deployed_members_by_key(self) -> dict[str, tuple[ArchT, ...]]:
        """`deployed_key` -> the members of that deployed class, in index order of their first member."""
        return dict(self._deployed_members)

    def output_depends_on_input(self, arch: ArchT | str) -> bool:
        """Whether the network's output depends on its input image. A network whose output is a
        constant cannot learn anything: its accuracy is chance whatever its training."""
        return True

    def deployed_representative(self, arch: ArchT | str) -> ArchT:
        """The member of smallest official index of `arch`'s deployed class (see `deployed_classes`)."""
        return self._deployed_representatives[self.deployed_key(arch)]

    def count(self, arch: ArchT | str, dataset: str = "cifar10") -> ModelCost:
        """Parameters, MACs and FLOPs per image of the network of `arch` on `dataset`.

        Equal to NATS-Bench's recorded figures: ``params`` = its ``params`` (in millions there)
        and ``macs`` = its ``flops`` (in millions there; NATS-Bench's ``flops_M`` counts
        multiply-accumulates). nasenergy's ``flops`` is ``2 * macs``. Analytic and cached: all
        15,625 TSS cells take well under a second.
        """
        info = dataset_info(dataset)
        return network_cost(self.network_spec(arch), info.input_shape, info.num_classes)

    @abstractmethod
    def features(self, arch: ArchT | str) -> np.ndarray:
        """A float64 vector describing `arch` for predictors, laid out as `feature_names`."""
