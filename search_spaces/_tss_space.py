"""The NATS-Bench topology search space (TSS)."""

from __future__ import annotations

from typing import Any

import numpy as np

from search_spaces._deployed import deploy_plan
from search_spaces._network_spec import NetworkSpec
from search_spaces._space import SearchSpace
from search_spaces._tss_arch import TSS_EDGES, TSS_OPS, TSSArch, parse_tss
from search_spaces._tss_canonical import canonical_index, isomorphism_key, representative_indices
from search_spaces._tss_features import TSS_FEATURE_NAMES, tss_features
from search_spaces._tss_order import TSS_SIZE, official_index, official_order

TSS_CHANNELS: tuple[int, ...] = (16,) * 5 + (32,) * 6 + (64,) * 6
"""Layer widths of every TSS network: C = 16 channels, N = 5 cells per stage."""


class TSSSpace(SearchSpace[TSSArch]):
    """15,625 cells of 6 edges x 5 ops inside a fixed 16/32/64-channel network (NAS-Bench-201)."""

    name = "tss"
    size = TSS_SIZE
    feature_names = TSS_FEATURE_NAMES

    def parse(self, text: TSSArch | str) -> TSSArch:
        return text if isinstance(text, TSSArch) else parse_tss(text)

    def _index_of(self, arch: TSSArch) -> int:
        return official_index(arch)

    def _arch_at(self, index: int) -> TSSArch:
        return official_order()[index]

    def canonical(self, arch: TSSArch | str) -> TSSArch:
        """The member of `arch`'s class with the smallest official index (6,466 classes).

        Classes follow NAS-Bench-201's identification of equivalent cells; see
        `search_spaces._tss_canonical` and `isomorphism_key`.
        """
        return official_order()[canonical_index(self.parse(arch))]

    def canonical_classes(self) -> list[TSSArch]:
        order = official_order()
        return [order[i] for i in representative_indices()]

    def isomorphism_key(self, arch: TSSArch | str) -> str:
        """NAS-Bench-201's expression string of the cell; cells share it iff they share a class."""
        return isomorphism_key(self.parse(arch))

    def deployed_key(self, arch: TSSArch | str) -> str:
        """The structure of the deployed cell (`search_spaces._deployed.Plan.key`); 6,040 keys in all.

        Finer than `isomorphism_key` where NAS-Bench-201's classes hold networks with different
        op counts (e.g. one 1x1 convolution read twice against two 1x1 convolutions), and coarser
        where it counts zero terms the deployed network never computes.
        """
        return deploy_plan(self.parse(arch).ops).key

    def output_depends_on_input(self, arch: TSSArch | str) -> bool:
        """Whether a path of non-``none`` edges joins the cell's input to its output; without one
        every cell of the network outputs a constant (or zeros) and the network cannot learn."""
        return deploy_plan(self.parse(arch).ops).input_dependent

    def param_choices(self) -> dict[str, tuple[Any, ...]]:
        """One categorical per edge, ``edge_<dst><-<src>``, over the 5 op names."""
        return {f"edge_{edge}": TSS_OPS for edge in TSS_EDGES}

    def _from_values(self, values: tuple[Any, ...]) -> TSSArch:
        return TSSArch(values)

    def network_spec(self, arch: TSSArch | str) -> NetworkSpec:
        return NetworkSpec(TSS_CHANNELS, self.parse(arch).ops)

    def features(self, arch: TSSArch | str) -> np.ndarray:
        """One-hot op per edge (30 entries), 5 structural numbers and 13 path summaries; see
        `TSS_FEATURE_NAMES`."""
        return tss_features(self.parse(arch))
