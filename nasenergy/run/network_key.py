"""What makes two candidates the same network for a study: the unit of duplicates, claims, the
budget and the front.

A study evaluates each network once. Where the hardware figures belong to **deployed networks**
(the CUDA and CPU meters, the fake meter, a profile of deployed networks), two architectures are
the same network when they deploy to the identical network (`SearchSpace.deployed_key`: the same
modules, parameters and FLOPs, computing the same function). The key is known before anything is
measured. Cells of one deployed class are, for an accuracy benchmark, independent trainings of one
network: the search answers such a network with the mean over all of them (`nasenergy.oracles.network`),
so it is evaluated once, spends one slot of the budget and stands once on the front. On TSS,
15,625 cells deploy to 6,040 networks.

A profile of the networks *as built* (``network_form`` = ``as_built``) has one row per canonical
class (NAS-Bench-201's identification of equivalent cells), so there the key is the class alone.
"""

from __future__ import annotations

from collections.abc import Callable

from nasenergy.hardware.coverage import CLASS_UNIT
from search_spaces import Arch, SpaceProtocol

NetworkKeyFn = Callable[[Arch], str]

DEPLOYED_UNIT = "deployed networks"


def measured_form(meter: object) -> str:
    """The network form a meter's figures belong to: a recorded profile says (``network_form``);
    every other meter measures deployed networks (`nasenergy.hardware.deployed`)."""
    return str(getattr(meter, "network_form", None) or "deployed")


class NetworkKey:
    """The key of an architecture of ``space`` for a meter measuring ``network_form``: the deployed
    structure (`SearchSpace.deployed_key`) where the space defines one and the figures belong to
    deployed networks, else the canonical class's string.

    Attributes:
        unit: what one key stands for, in words (`CLASS_UNIT` or `DEPLOYED_UNIT`).
        deployed: whether keys are deployed networks.
    """

    def __init__(self, space: SpaceProtocol, network_form: str = "deployed") -> None:
        self.space = space
        self._deployed_key = None if network_form == "as_built" else getattr(space, "deployed_key", None)
        self.deployed = self._deployed_key is not None
        self.unit = CLASS_UNIT if self._deployed_key is None else DEPLOYED_UNIT

    def __call__(self, arch: Arch) -> str:
        if self._deployed_key is None:
            return str(self.space.canonical(arch))
        return str(self._deployed_key(arch))


def network_key_fn(space: SpaceProtocol, network_form: str = "deployed") -> NetworkKey:
    """`NetworkKey` of ``space`` for a meter measuring ``network_form``."""
    return NetworkKey(space, network_form)
