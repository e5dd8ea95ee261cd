"""Cells of the NATS-Bench topology search space (TSS, identical to NAS-Bench-201).

A cell is a DAG over 4 nodes (node 0 is the cell input, node 3 its output). Each of the 6 edges
``dst <- src`` (``src < dst``) carries one of 5 operations, giving 5**6 = 15,625 cells. The official
string lists, node by node, the op on each incoming edge::

    |op~0|+|op~0|op~1|+|op~0|op~1|op~2|
     node 1   node 2      node 3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from search_spaces._errors import ArchError

TSS_OPS: tuple[str, ...] = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
"""The candidate operations, in NAS-Bench-201's order."""

CONV_KERNEL_SIZE: dict[str, int] = {"nor_conv_1x1": 1, "nor_conv_3x3": 3}
"""Kernel side, in pixels, of the convolution ops."""

NUM_NODES = 4
"""Nodes per cell, input and output included."""


class Edge(NamedTuple):
    """One edge of the cell DAG, feeding node `dst` from node `src`."""

    src: int
    dst: int

    def __str__(self) -> str:
        return f"{self.dst}<-{self.src}"


TSS_EDGES: tuple[Edge, ...] = tuple(Edge(s, d) for d in range(1, NUM_NODES) for s in range(d))
"""The 6 edges in the order of the official string: 1<-0, 2<-0, 2<-1, 3<-0, 3<-1, 3<-2."""


@dataclass(frozen=True, slots=True)
class TSSArch:
    """A TSS cell: one op name per edge, in `TSS_EDGES` order. Immutable and hashable.

    Any sequence of op names is accepted and stored as a tuple.

    Raises:
        ArchError: wrong number of ops or an unknown op (the message names the edge).
    """

    ops: tuple[str, ...]

    def __post_init__(self) -> None:
        if isinstance(self.ops, (str, bytes)) or not hasattr(self.ops, "__len__"):
            raise ArchError(f"TSS ops must be a sequence of {len(TSS_EDGES)} op names, got {type(self.ops).__name__}")
        object.__setattr__(self, "ops", tuple(self.ops))
        if len(self.ops) != len(TSS_EDGES):
            raise ArchError(f"a TSS cell has {len(TSS_EDGES)} edges, got {len(self.ops)} ops")
        for edge, op in zip(TSS_EDGES, self.ops):
            if not isinstance(op, str) or op not in TSS_OPS:
                raise ArchError(f"unknown op {op!r} on edge {edge}; expected one of {', '.join(TSS_OPS)}")

    def op(self, src: int, dst: int) -> str:
        """The op on edge ``dst <- src``."""
        return self.ops[TSS_EDGES.index(Edge(src, dst))]

    def __str__(self) -> str:
        nodes = []
        for dst in range(1, NUM_NODES):
            entries = "|".join(f"{op}~{e.src}" for e, op in zip(TSS_EDGES, self.ops) if e.dst == dst)
            nodes.append(f"|{entries}|")
        return "+".join(nodes)

    def __repr__(self) -> str:
        return f"TSSArch({str(self)!r})"


def parse_tss(text: object) -> TSSArch:
    """Parse an official TSS cell string such as ``|nor_conv_3x3~0|+|none~0|skip_connect~1|+|...|``.

    Surrounding whitespace is ignored.

    Raises:
        ArchError: with one line naming the malformed part.
    """
    if not isinstance(text, str):
        raise ArchError(f"a TSS cell must be given as a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ArchError("empty TSS cell string")
    nodes = text.split("+")
    if len(nodes) != NUM_NODES - 1:
        raise ArchError(
            f"a TSS cell string has {NUM_NODES - 1} nodes separated by '+', got {len(nodes)} in {text!r}"
        )
    ops: list[str] = []
    for dst, node in enumerate(nodes, start=1):
        if len(node) < 2 or not (node.startswith("|") and node.endswith("|")):
            raise ArchError(f"node {dst} {node!r} must be enclosed in '|', e.g. '|nor_conv_3x3~0|'")
        entries = node[1:-1].split("|")
        if len(entries) != dst:
            raise ArchError(f"node {dst} {node!r} must have {dst} input(s), got {len(entries)}")
        for src, entry in enumerate(entries):
            op, sep, index = entry.rpartition("~")
            if not sep or not op:
                raise ArchError(f"edge {dst}<-{src}: malformed entry {entry!r}, expected 'op~{src}'")
            if index != str(src):
                raise ArchError(f"edge {dst}<-{src}: input index must be {src}, got {index!r} in {entry!r}")
            ops.append(op)
    return TSSArch(tuple(ops))
