"""`SpaceProtocol`: what nasenergy's search asks of a search space."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from torch import nn


Arch: TypeAlias = Hashable
"""An architecture of a search space: immutable and hashable, with an official string form
(`SpaceProtocol.parse` reads it back). Each space has its own class (`TssArch`, `SssArch`); code that
works with any space types architectures as `Arch`."""


@runtime_checkable
class SpaceProtocol(Protocol):
    """What the search loop asks of a search space for each trial. `search_spaces.SearchSpace`
    follows it; a new space subclasses `SearchSpace` (the search's start also enumerates the space
    and counts each network, `SearchSpace.enumerate` and `SearchSpace.count`) and makes one
    `search_spaces.register_space` call.

    Attributes:
        name: its short name (``tss``, ``sss``, ...).
        size: how many architectures it holds.
    """

    @property
    def name(self) -> str:
        """Its short name."""
        ...

    @property
    def size(self) -> int:
        """How many architectures it holds."""
        ...

    def parse(self, text: Any) -> Arch:
        """The architecture a string names (an architecture passes through)."""
        ...

    def canonical(self, arch: Arch) -> Arch:
        """The representative of `arch`'s class of functionally identical architectures."""
        ...

    def index(self, arch: Arch) -> int:
        """`arch`'s index, ``0 .. size - 1``."""
        ...

    def suggest(self, trial: Any) -> Arch:
        """An architecture from an Optuna trial's categorical suggestions."""
        ...

    def param_choices(self) -> Mapping[str, tuple[Any, ...]]:
        """The categorical parameters `suggest` asks a trial for: name -> choices, in order."""
        ...

    def arch_from_params(self, params: Mapping[str, Any]) -> Arch:
        """The architecture named by parameters as `suggest` creates them (the search reads a
        proposal's network before it builds anything)."""
        ...

    def features(self, arch: Arch) -> np.ndarray:
        """Structural features of `arch` for the filters."""
        ...

    def input_shape(self, dataset: str) -> tuple[int, int, int]:
        """One image's ``(C, H, W)`` for `dataset`."""
        ...

    def build_deployed(self, arch: Arch, dataset: str = "cifar10", *, seed: int = 0) -> "nn.Module":
        """The network a meter measures for `arch`."""
        ...


__all__ = ["SpaceProtocol"]
