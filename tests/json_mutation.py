"""Damaging JSON documents for the fuzz tests of loaders: values to put in, places to put them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
"""Any JSON value (NaN included), small."""


def json_paths(doc: Any, prefix: tuple = (), *, list_items: int = 3) -> list[tuple]:
    """Every place in `doc`: the key path of each dict value and of the first `list_items` list items."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += json_paths(v, (*prefix, k), list_items=list_items)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:list_items]):
            out += json_paths(v, (*prefix, i), list_items=list_items)
    return out


def mutate(doc: Any, path: tuple, value: Any, *, delete: bool = False) -> Any:
    """`doc` with the place `path` set to `value` (or its dict entry deleted); the root is replaced."""
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc
