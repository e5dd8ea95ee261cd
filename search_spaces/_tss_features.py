"""Numeric features of TSS cells, for accuracy and cost predictors."""

from __future__ import annotations

import numpy as np

from search_spaces._tss_arch import CONV_KERNEL_SIZE, NUM_NODES, TSS_EDGES, TSS_OPS, TSSArch
from search_spaces._tss_paths import TSS_PATH_FEATURES, tss_path_features

_OUTPUT = NUM_NODES - 1

TSS_STRUCTURAL_FEATURES: tuple[str, ...] = (
    "connected",
    "live_edges",
    "live_convs",
    "depth_edges",
    "depth_convs",
)
"""The structural features appended to the one-hot encoding, computed on the live graph (the edges
not carrying ``none`` that lie on some path from the input node to the output node):

* ``connected``: 1.0 if the output is reachable from the input, else 0.0 (the cell outputs zeros);
* ``live_edges``: number of live edges (0..6);
* ``live_convs``: number of live edges carrying a convolution (0..6);
* ``depth_edges``: edges on the longest live input-to-output path (0..3);
* ``depth_convs``: most convolutions on any live input-to-output path (0..3).
"""

TSS_FEATURE_NAMES: tuple[str, ...] = tuple(
    f"edge_{edge}={op}" for edge in TSS_EDGES for op in TSS_OPS
) + TSS_STRUCTURAL_FEATURES + TSS_PATH_FEATURES
"""Names of the entries of `tss_features`: 30 one-hot entries (edge-major), the structural ones,
then the path summaries (`search_spaces._tss_paths.TSS_PATH_FEATURES`)."""


def live_edges(arch: TSSArch) -> tuple[int, ...]:
    """Positions (in `TSS_EDGES`) of the edges that are not ``none`` and lie on an input-output path."""
    active = [i for i, op in enumerate(arch.ops) if op != "none"]
    from_input = {0}
    for dst in range(1, NUM_NODES):
        if any(TSS_EDGES[i].dst == dst and TSS_EDGES[i].src in from_input for i in active):
            from_input.add(dst)
    to_output = {_OUTPUT}
    for src in range(NUM_NODES - 2, -1, -1):
        if any(TSS_EDGES[i].src == src and TSS_EDGES[i].dst in to_output for i in active):
            to_output.add(src)
    return tuple(i for i in active if TSS_EDGES[i].src in from_input and TSS_EDGES[i].dst in to_output)


def _longest_paths(arch: TSSArch, live: tuple[int, ...]) -> tuple[int, int]:
    """(most edges, most convolutions) over live input-to-output paths; (0, 0) if none exists."""
    best: dict[int, tuple[int, int]] = {0: (0, 0)}
    for i in live:  # live edges are ordered by destination node, so sources are final when used
        edge = TSS_EDGES[i]
        if edge.src not in best:
            continue
        edges, convs = best[edge.src]
        step = (edges + 1, convs + (arch.ops[i] in CONV_KERNEL_SIZE))
        old = best.get(edge.dst, (0, 0))
        best[edge.dst] = (max(old[0], step[0]), max(old[1], step[1]))
    return best.get(_OUTPUT, (0, 0))


def tss_features(arch: TSSArch) -> np.ndarray:
    """The feature vector of `arch`, float64, laid out as `TSS_FEATURE_NAMES` (48 entries)."""
    one_hot = np.zeros((len(TSS_EDGES), len(TSS_OPS)))
    for position, op in enumerate(arch.ops):
        one_hot[position, TSS_OPS.index(op)] = 1.0
    live = live_edges(arch)
    depth_edges, depth_convs = _longest_paths(arch, live)
    structural = [
        float(bool(live)),
        float(len(live)),
        float(sum(arch.ops[i] in CONV_KERNEL_SIZE for i in live)),
        float(depth_edges),
        float(depth_convs),
    ]
    return np.concatenate([one_hot.ravel(), np.asarray(structural), np.asarray(tss_path_features(arch))])
