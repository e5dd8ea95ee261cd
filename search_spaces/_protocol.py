"""`SpaceProtocol`: what nasenergy's search asks of a search space."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from torch import nn


@runtime_checkable
class SpaceProtocol(Protocol):
    """A search space the search can use. `search_spaces.SearchSpace` follows it; a new space is a
    class following it plus one `search_spaces.register_space` call.

    Attributes:
        name: its short name (``tss``, ``sss``, ...).
        size: how many architectures it holds.
    """

    name: str
    size: int

    def parse(self, text: Any) -> Any:
        """The architecture a string names (an architecture passes through)."""
        ...

    def canonical(self, arch: Any) -> Any:
        """The representative of `arch`'s class of functionally identical architectures."""
        ...

    def index(self, arch: Any) -> int:
        """`arch`'s index, ``0 .. size - 1``."""
        ...

    def suggest(self, trial: Any) -> Any:
        """An architecture from an Optuna trial's categorical suggestions."""
        ...

    def features(self, arch: Any) -> np.ndarray:
        """Structural features of `arch` for the filters."""
        ...

    def input_shape(self, dataset: str) -> tuple[int, int, int]:
        """One image's ``(C, H, W)`` for `dataset`."""
        ...

    def build_deployed(self, arch: Any, dataset: str = "cifar10", *, seed: int = 0) -> "nn.Module":
        """The network a meter measures for `arch`."""
        ...


__all__ = ["SpaceProtocol"]
