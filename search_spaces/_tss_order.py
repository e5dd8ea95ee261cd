"""The official NATS-Bench / NAS-Bench-201 index order of the 15,625 TSS cells.

The order is not stored anywhere in this package; it is derived by the rule the benchmark was
built with: list the cells in product order (edges in `TSS_EDGES` order, the first edge varying
slowest; ops in `TSS_OPS` order), then shuffle that list with Python's Mersenne-Twister
``random.Random(88).shuffle``. The result equals the benchmark's ``meta_archs`` list entry by entry
(tested). A private ``random.Random`` instance is used; the global random state is never touched.
"""

from __future__ import annotations

import functools
import random

from search_spaces._tss_arch import TSS_EDGES, TSS_OPS, TSSArch

TSS_SIZE = len(TSS_OPS) ** len(TSS_EDGES)
_SHUFFLE_SEED = 88


def product_rank(arch: TSSArch) -> int:
    """The position of `arch` in product order (``0..15624``), before the official shuffle."""
    rank = 0
    for op in arch.ops:
        rank = rank * len(TSS_OPS) + TSS_OPS.index(op)
    return rank


def _from_product_rank(rank: int) -> TSSArch:
    ops = []
    for _ in TSS_EDGES:
        rank, digit = divmod(rank, len(TSS_OPS))
        ops.append(TSS_OPS[digit])
    return TSSArch(tuple(reversed(ops)))


@functools.cache
def official_order() -> tuple[TSSArch, ...]:
    """All cells in official index order (computed once per process, ~20 ms)."""
    cells = [_from_product_rank(rank) for rank in range(TSS_SIZE)]
    random.Random(_SHUFFLE_SEED).shuffle(cells)
    return tuple(cells)


@functools.cache
def _index_by_rank() -> tuple[int, ...]:
    index_by_rank = [0] * TSS_SIZE
    for index, arch in enumerate(official_order()):
        index_by_rank[product_rank(arch)] = index
    return tuple(index_by_rank)


def official_index(arch: TSSArch) -> int:
    """The official index (``0..15624``) of `arch`."""
    return _index_by_rank()[product_rank(arch)]
