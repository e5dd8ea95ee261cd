"""Path features of TSS cells: how the input-to-output paths of a cell are built.

A TSS cell's accuracy depends mostly on what its input-to-output paths carry (how many
convolutions, of which kernel, whether an identity path exists). The one-hot encoding leaves a
predictor to rediscover that from 30 columns; these summaries state it directly. A path is a
sequence of edges from node 0 to the output node none of which carries ``none``; a cell has at
most 4 of them (``3<-0``, ``3<-1<-0``, ``3<-2<-0``, ``3<-2<-1<-0``).
"""

from __future__ import annotations

from search_spaces._tss_arch import CONV_KERNEL_SIZE, NUM_NODES, TSS_EDGES, TSSArch

_OUTPUT = NUM_NODES - 1
_MAX_CONVS = NUM_NODES - 1
"""Most edges (hence convolutions) on one path."""
_KERNEL_SIDE: dict[str, int] = {**CONV_KERNEL_SIZE, "avg_pool_3x3": 3}
"""Kernel side, in pixels, of the ops that have one (``skip_connect`` has none)."""

TSS_PATH_FEATURES: tuple[str, ...] = (
    ("paths",)
    + tuple(f"paths_convs={k}" for k in range(_MAX_CONVS + 1))
    + tuple(f"paths_conv3x3={k}" for k in range(_MAX_CONVS + 1))
    + ("max_conv3x3_on_path", "skip_path", "pool_paths", "max_kernel_sum")
)
"""Names of `tss_path_features`' entries:

* ``paths``: number of input-to-output paths (0..4);
* ``paths_convs=k``: paths carrying exactly ``k`` convolutions (1x1 or 3x3), ``k`` = 0..3;
* ``paths_conv3x3=k``: paths carrying exactly ``k`` 3x3 convolutions;
* ``max_conv3x3_on_path``: most 3x3 convolutions on one path;
* ``skip_path``: 1.0 if some path is made of ``skip_connect`` only (an identity path), else 0.0;
* ``pool_paths``: paths carrying an ``avg_pool_3x3``;
* ``max_kernel_sum``: the largest sum, over one path, of the kernel sides of its convolutions and
  pools (``skip_connect`` counts 0).
"""


def cell_paths(arch: TSSArch) -> list[tuple[str, ...]]:
    """The ops along each input-to-output path of ``arch`` that avoids ``none`` edges."""
    paths: list[tuple[str, ...]] = []

    def walk(node: int, ops: tuple[str, ...]) -> None:
        if node == _OUTPUT:
            paths.append(ops)
            return
        for edge, op in zip(TSS_EDGES, arch.ops):
            if edge.src == node and op != "none":
                walk(edge.dst, ops + (op,))

    walk(0, ())
    return paths


def tss_path_features(arch: TSSArch) -> list[float]:
    """The path summaries of ``arch``, laid out as `TSS_PATH_FEATURES`."""
    paths = cell_paths(arch)
    convs = [sum(op in CONV_KERNEL_SIZE for op in p) for p in paths]
    convs3 = [sum(op == "nor_conv_3x3" for op in p) for p in paths]
    return (
        [float(len(paths))]
        + [float(convs.count(k)) for k in range(_MAX_CONVS + 1)]
        + [float(convs3.count(k)) for k in range(_MAX_CONVS + 1)]
        + [
            float(max(convs3, default=0)),
            float(any(all(op == "skip_connect" for op in p) for p in paths)),
            float(sum("avg_pool_3x3" in p for p in paths)),
            float(max((sum(_KERNEL_SIDE.get(op, 0) for op in p) for p in paths), default=0)),
        ]
    )
