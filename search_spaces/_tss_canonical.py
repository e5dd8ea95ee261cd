"""Canonical forms of TSS cells: NAS-Bench-201's identification of equivalent cells.

NAS-Bench-201 reports 6,466 "unique" cells among the 15,625. Its identification writes each node
as a formal sum of one term per incoming edge, bottom-up from the input node ``0``:

* an edge carrying ``none``, or leaving a node that is itself a lone zero, gives the zero term ``#``;
* ``skip_connect`` passes its source node's expression through unchanged (identity);
* any other op gives ``(<source expression>)@<op>``;
* a node's terms are sorted as strings and joined with ``+``.

Cells whose output expressions are equal form one class. Ops with weights are treated as distinct
functions per edge; ``skip_connect`` chains, edge orderings and dead branches (edges whose result
never reaches the output, ops fed only by zero) are identified as the same computation. Two
properties of this convention are kept on purpose, because they define the benchmark's 6,466
classes: a zero term still counts as a term, and a node fed by several ``none`` edges (``#+#``) is
not simplified to zero. So every class computes one function, but a few functionally equal cells
remain in different classes.

The representative of a class is its member with the smallest official index. Classes are
computed once per process, on first use.
"""

from __future__ import annotations

import functools

from search_spaces._tss_arch import NUM_NODES, TSS_EDGES, TSSArch
from search_spaces._tss_order import official_order

ZERO_TERM = "#"
INPUT_TERM = "0"


def isomorphism_key(arch: TSSArch) -> str:
    """The expression string of the cell output; equal strings mean one class.

    Example: ``|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|`` gives ``#+#+0``.
    """
    expressions = [INPUT_TERM]
    for dst in range(1, NUM_NODES):
        terms = []
        for edge, op in zip(TSS_EDGES, arch.ops):
            if edge.dst != dst:
                continue
            source = expressions[edge.src]
            if op == "none" or source == ZERO_TERM:
                terms.append(ZERO_TERM)
            elif op == "skip_connect":
                terms.append(source)
            else:
                terms.append(f"({source})@{op}")
        expressions.append("+".join(sorted(terms)))
    return expressions[-1]


@functools.cache
def _smallest_index_by_key() -> dict[str, int]:
    smallest: dict[str, int] = {}
    for index, arch in enumerate(official_order()):
        smallest.setdefault(isomorphism_key(arch), index)
    return smallest


def canonical_index(arch: TSSArch) -> int:
    """The official index of the representative of `arch`'s class."""
    return _smallest_index_by_key()[isomorphism_key(arch)]


@functools.cache
def representative_indices() -> tuple[int, ...]:
    """The official indices of all class representatives, ascending (6,466 of them)."""
    return tuple(sorted(_smallest_index_by_key().values()))
