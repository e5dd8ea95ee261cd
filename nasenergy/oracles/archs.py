"""Turning what a caller passes as an architecture into its official NATS-Bench index."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

from nasenergy.errors import ArchError
from nasenergy.oracles.errors import ArchNotInBenchmarkError
from search_spaces import Arch, SpaceProtocol, SSSSpace, TSSSpace, get_space

SPACE_SIZES: dict[str, int] = {space.name: space.size for space in (TSSSpace, SSSSpace)}
"""Architectures in each NATS-Bench space (the spaces NATS-Bench benchmarks)."""


def check_space_name(space_name: str) -> str:
    """``tss`` / ``sss`` (``topology`` / ``size`` accepted).

    Raises:
        ArchError: another name.
    """
    name = str(space_name).strip().lower()
    name = {"topology": "tss", "size": "sss"}.get(name, name)
    if name not in SPACE_SIZES:
        raise ArchError(f"unknown search space {space_name!r}; choose tss or sss")
    return name


def space_name_of(space: SpaceProtocol | str) -> str:
    """The name (``tss`` / ``sss``) of a space given by name or as a `search_spaces` object."""
    if isinstance(space, str):
        return check_space_name(space)
    name = getattr(space, "name", None)
    if isinstance(name, str):
        return check_space_name(name)
    size = getattr(space, "size", None)
    for key, n in SPACE_SIZES.items():
        if size == n:
            return key
    raise ArchError(f"cannot tell which NATS-Bench space {space!r} is; pass 'tss' or 'sss'")


def arch_index(arch: Arch, index_of: Mapping[str, int], space_name: str) -> int:
    """The official index of `arch`.

    Args:
        arch: an index, an architecture string, or an architecture object whose ``str()`` is its
            string.
        index_of: official string → index, from the benchmark.
        space_name: ``tss`` or ``sss``; used to parse strings the benchmark does not spell
            verbatim (and to report malformed ones).

    Raises:
        ArchError: a malformed architecture or an index out of range.
        ArchNotInBenchmarkError: a valid architecture the benchmark does not list.
    """
    size = SPACE_SIZES[space_name]
    if isinstance(arch, bool):
        raise ArchError(f"not an architecture: {arch!r}")
    if isinstance(arch, numbers.Integral):
        index = int(arch)
        if not 0 <= index < size:
            raise ArchError(f"architecture index {index} is out of range 0..{size - 1} for {space_name}")
        return index
    text = str(arch).strip()
    found = index_of.get(text)
    if found is not None:
        return found

    space = get_space(space_name)
    parsed = space.parse(text)  # raises ArchError for malformed strings
    canonical_text = str(parsed)
    found = index_of.get(canonical_text)
    if found is not None:
        return found
    raise ArchNotInBenchmarkError(f"architecture {text} is not listed in the benchmark")
