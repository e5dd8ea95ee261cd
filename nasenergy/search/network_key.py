"""What makes two candidates the same network for a study: the unit of duplicates, claims and the
budget.

A study evaluates each network once. Two architectures are the same network when they share

* their **canonical class** (`SearchSpace.canonical`, NAS-Bench-201's identification of equivalent
  cells), which is what the accuracy tables are keyed by, and
* the **structure of their deployed network** (`SearchSpace.deployed_key`), which is what the
  hardware figures belong to wherever the meter measures deployed networks (the CUDA and CPU
  meters, the fake meter, a profile of deployed networks).

The two partitions differ: 733 of the 6,466 TSS classes hold members that deploy to different
networks (e.g. one 1x1 convolution read twice against two 1x1 convolutions), and some deployed
networks come from several classes. Keyed by the pair, the TSS space holds 7,837 networks, and a
member of an evaluated class that deploys to another network is a network of its own, with its own
figures, instead of a duplicate shown with another network's throughput and energy.

A profile of the networks *as built* (``network_form`` = ``as_built``) has one row per canonical
class, so there the key is the class alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nasenergy.hardware.coverage import CLASS_UNIT
from search_spaces import Arch

NetworkKeyFn = Callable[[Arch], str]

PAIR_UNIT = "networks (canonical class and deployed structure)"


def measured_form(meter: Any) -> str:
    """The network form a meter's figures belong to: a recorded profile says (``network_form``);
    every other meter measures deployed networks (`nasenergy.hardware.deployed`)."""
    return str(getattr(meter, "network_form", None) or "deployed")


class NetworkKey:
    """The key of an architecture of ``space`` for a meter measuring ``network_form``: the
    canonical class's string, followed by ``" @ "`` and the deployed structure where the space
    defines one (`SearchSpace.deployed_key`), it differs from the class string, and the figures
    belong to deployed networks.

    Attributes:
        unit: what one key stands for, in words (`CLASS_UNIT` or `PAIR_UNIT`).
    """

    def __init__(self, space: Any, network_form: str = "deployed") -> None:
        self.space = space
        self._deployed_key = None if network_form == "as_built" else getattr(space, "deployed_key", None)
        self.unit = CLASS_UNIT if self._deployed_key is None else PAIR_UNIT

    def __call__(self, arch: Arch) -> str:
        canonical = str(self.space.canonical(arch))
        if self._deployed_key is None:
            return canonical
        structure = self._deployed_key(arch)
        return canonical if structure == canonical else f"{canonical} @ {structure}"


def network_key_fn(space: Any, network_form: str = "deployed") -> NetworkKey:
    """`NetworkKey` of ``space`` for a meter measuring ``network_form``."""
    return NetworkKey(space, network_form)
