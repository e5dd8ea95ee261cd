"""The deployed form of a cell: the same function as NATS-Bench's network, without dead or zero ops.

NATS-Bench builds every edge of a cell, also those whose result is multiplied by zero or never
reaches the cell output. A user deploying the network would not compute them. The deployed cell
keeps only the *live* edges:

* an edge carrying ``none`` is never computed;
* a node is *zero* when every edge into it is ``none``, or an identity (``skip_connect``,
  ``avg_pool_3x3`` of unchanged width) of a zero node; such a node is never materialised, except
  as the zeros a convolution reads when that convolution's result reaches the output (ReLU-conv-BN
  of zeros is BN's per-channel constant, not zero, so it must be computed);
* a node is *needed* when it is the cell output or the source of a live edge into a needed node;
  edges into nodes that are not needed are dropped (their results never reach the output).

When the cell output is zero (no live edge reaches it) the cell is *disconnected*: its output is
zeros whatever its input, and in a network of such cells nothing upstream of the head is computed.
When the output is not zero but does not depend on the cell input (only convolutions of zeros
reach it), the network's output is a constant: only the last cell is computed, on zeros.

The live edges are then written as a *plan*: a list of steps, each computing one value from
earlier values (the cell input is value 0). A step is either one op applied to one value (the op's
module is the as-built edge's, so the deployed cell runs with the as-built weights) or a sum.
``skip_connect`` of unchanged width is no step at all: the next step reads its source value. A
node that is a lone term is not materialised, and a sum read only once inside another sum is
merged into it. Steps come in a canonical order, so that cells computing the same ops on the same
values get plans that differ only in which as-built edge supplies each op's weights; `Plan.key`
names that structure, and cells with equal keys deploy to identical networks (the same modules,
parameters and FLOPs, in the same order).

This module is pure Python (no torch).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from search_spaces._tss_arch import CONV_KERNEL_SIZE, NUM_NODES, TSS_EDGES, Edge

OUTPUT_NODE = NUM_NODES - 1
ZERO_KEY = "zero"
"""The key of a disconnected cell (its output is zeros)."""


def _nonzero_result(op: str, source_nonzero: bool) -> bool:
    """Whether an edge can give a nonzero result: a convolution of zeros gives BN's constant."""
    return op != "none" and (source_nonzero or op in CONV_KERNEL_SIZE)


@functools.lru_cache(maxsize=1 << 15)
def depends_on_input(ops: tuple[str, ...]) -> bool:
    """Whether the cell's output depends on its input (a path of non-``none`` edges joins them)."""
    reached = [True] + [False] * (NUM_NODES - 1)
    for edge, op in zip(TSS_EDGES, ops):
        if op != "none" and reached[edge.src]:
            reached[edge.dst] = True
    return reached[OUTPUT_NODE]


@functools.lru_cache(maxsize=1 << 15)
def live_edges(ops: tuple[str, ...]) -> tuple[bool, ...]:
    """For each edge in `TSS_EDGES` order, whether the deployed cell computes it."""
    if len(ops) != len(TSS_EDGES):
        raise ValueError(f"a cell has {len(TSS_EDGES)} edges, got {len(ops)} ops")
    nonzero = [True] + [False] * (NUM_NODES - 1)
    for edge, op in zip(TSS_EDGES, ops):  # edges come ordered by destination node
        if _nonzero_result(op, nonzero[edge.src]):
            nonzero[edge.dst] = True
    needed = [False] * (NUM_NODES - 1) + [True]
    live = [False] * len(TSS_EDGES)
    for i in reversed(range(len(TSS_EDGES))):
        edge, op = TSS_EDGES[i], ops[i]
        if _nonzero_result(op, nonzero[edge.src]) and needed[edge.dst]:
            live[i] = True
            needed[edge.src] = True
    return tuple(live)


@dataclass(frozen=True, slots=True)
class Step:
    """One value the deployed cell computes.

    Attributes:
        kind: ``op`` (one op on one value), ``sum`` (the sum of several values) or ``zeros``
            (zeros shaped like the cell output, read by convolutions of a zero node).
        inputs: indices of the values read (0 is the cell input; step ``i`` makes value ``i + 1``).
        op: the op name (``op`` steps only).
        edge: index in `TSS_EDGES` of the as-built edge whose module computes the op (``op`` steps).
    """

    kind: Literal["op", "sum", "zeros"]
    inputs: tuple[int, ...]
    op: str = ""
    edge: int = -1


@dataclass(frozen=True, slots=True)
class Plan:
    """The deployed cell: its steps and which value is the output.

    Attributes:
        steps: the computed values, in order.
        output: index of the output value; ``None`` when the cell is disconnected (zero output).
        key: the structure's name; equal keys mean identical deployed cells.
        input_dependent: whether the output depends on the cell input (False: a constant, or zeros).
    """

    steps: tuple[Step, ...]
    output: int | None
    key: str
    input_dependent: bool

    @property
    def disconnected(self) -> bool:
        """True when the cell's output is zeros whatever its input."""
        return self.output is None

    @property
    def op_edges(self) -> tuple[int, ...]:
        """The as-built edges whose ops the deployed cell computes, in step order."""
        return tuple(step.edge for step in self.steps if step.kind == "op")


class _Value:
    """A node of the value graph: the input, an op applied to a value, or a sum of values."""

    __slots__ = ("kind", "op", "edge", "args", "uses")

    def __init__(self, kind: str, args: tuple[_Value, ...] = (), op: str = "", edge: int = -1) -> None:
        self.kind, self.args, self.op, self.edge = kind, args, op, edge
        self.uses = 0


def _identity_skip(edge: Edge, op: str, width_change: bool) -> bool:
    return op == "skip_connect" and not (width_change and edge.src == 0)


def _value_graph(ops: tuple[str, ...], width_change: bool) -> _Value | None:
    live = live_edges(ops)
    node_terms: dict[int, list[tuple[str, int, int]]] = {}
    reads = [0] * NUM_NODES  # how many live edges read each node
    for i, (edge, op, is_live) in enumerate(zip(TSS_EDGES, ops, live)):
        if is_live:
            node_terms.setdefault(edge.dst, []).append((op, i, edge.src))
            reads[edge.src] += 1
    if OUTPUT_NODE not in node_terms:
        return None
    values: dict[int, _Value] = {0: _Value("input")}
    zeros = _Value("zeros")  # what a convolution of a zero node reads
    for node in range(1, NUM_NODES):
        if node not in node_terms:
            continue
        terms: list[_Value] = []
        for op, i, src in node_terms[node]:
            source = values.get(src, zeros)
            if not _identity_skip(TSS_EDGES[i], op, width_change):
                terms.append(_Value("op", (source,), op=op, edge=i))
            elif source.kind == "sum" and reads[src] == 1:
                terms.extend(source.args)  # a sum read once, by a skip into this sum: merge
            else:
                terms.append(source)
        values[node] = terms[0] if len(terms) == 1 else _Value("sum", tuple(terms))
    return values[OUTPUT_NODE]


def _count_uses(value: _Value, seen: set[int]) -> None:
    value.uses += 1
    if id(value) in seen:
        return
    seen.add(id(value))
    for arg in value.args:
        _count_uses(arg, seen)


def _name(value: _Value, memo: dict[int, str]) -> str:
    """The value's canonical text; values read more than once carry ``!<reads>``."""
    if id(value) not in memo:
        if value.kind == "input":
            text = "x"
        elif value.kind == "zeros":
            text = "0"
        elif value.kind == "op":
            text = f"{value.op}({_name(value.args[0], memo)})"
        else:
            text = "(" + "+".join(sorted(_name(arg, memo) for arg in value.args)) + ")"
        memo[id(value)] = f"{text}!{value.uses}" if value.uses > 1 else text
    return memo[id(value)]


@functools.lru_cache(maxsize=1 << 16)
def deploy_plan(ops: tuple[str, ...], width_change: bool = False) -> Plan:
    """The deployed plan of the cell whose op per edge (in `TSS_EDGES` order) is `ops`.

    Args:
        ops: the cell's op per edge.
        width_change: True when the cell's input width differs from its output width (SSS); then
            ops leaving the input node change the width and a ``skip_connect`` from it is a 1x1
            convolution, not an identity.
    """
    output = _value_graph(tuple(ops), width_change)
    if output is None:
        return Plan(steps=(), output=None, key=ZERO_KEY, input_dependent=False)
    _count_uses(output, set())
    memo: dict[int, str] = {}
    key = _name(output, memo)
    index: dict[int, int] = {}
    steps: list[Step] = []

    def emit(value: _Value) -> int:
        if value.kind == "input":
            return 0
        if id(value) in index:
            return index[id(value)]
        if value.kind == "zeros":
            steps.append(Step("zeros", ()))
            index[id(value)] = len(steps)
            return len(steps)
            return index[id(value)]
        args = sorted(value.args, key=lambda arg: memo[id(arg)])
        inputs = tuple(emit(arg) for arg in args)
        if value.kind == "op":
            steps.append(Step("op", inputs, op=value.op, edge=value.edge))
        else:
            steps.append(Step("sum", inputs))
        index[id(value)] = len(steps)
        return len(steps)

    output_index = emit(output)
    dependent = depends_on_input(tuple(ops))
    return Plan(steps=tuple(steps), output=output_index, key=key if dependent else f"const:{key}",
                input_dependent=dependent)
