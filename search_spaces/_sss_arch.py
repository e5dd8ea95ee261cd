"""Configurations of the NATS-Bench size search space (SSS).

A configuration is the channel width of each of the 5 layers of the network (the stem and first
cell, the first reduction block, the second cell, the second reduction block, the last cell), each
one of 8, 16, ..., 64: 8**5 = 32,768 configurations. The official string is e.g. ``8:16:24:32:40``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from search_spaces._errors import ArchError

SSS_CHANNELS: tuple[int, ...] = (8, 16, 24, 32, 40, 48, 56, 64)
"""The candidate channel widths, ascending."""

SSS_POSITIONS = 5
"""Number of channel widths in a configuration."""

SSS_SIZE = len(SSS_CHANNELS) ** SSS_POSITIONS


def _bad_width(position: int, value: object) -> ArchError:
    allowed = ", ".join(map(str, SSS_CHANNELS))
    return ArchError(f"bad channel width {value!r} at position {position}; expected one of {allowed}")


@dataclass(frozen=True, slots=True)
class SSSArch:
    """An SSS configuration: 5 channel widths (channels, not multiplied by anything). Immutable.

    Any sequence of integers is accepted and stored as a tuple of `int`.

    Raises:
        ArchError: wrong number of widths or a width not in `SSS_CHANNELS` (naming its position,
            counted from 1).
    """

    channels: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.channels, (str, bytes)) or not hasattr(self.channels, "__len__"):
            raise ArchError(
                f"SSS channels must be a sequence of {SSS_POSITIONS} widths, got {type(self.channels).__name__}"
            )
        if len(self.channels) != SSS_POSITIONS:
            raise ArchError(f"an SSS configuration has {SSS_POSITIONS} channel widths, got {len(self.channels)}")
        widths = []
        for position, width in enumerate(self.channels, start=1):
            try:
                value = None if isinstance(width, bool) else operator.index(width)
            except TypeError:
                value = None
            if value not in SSS_CHANNELS:
                raise _bad_width(position, width)
            widths.append(value)
        object.__setattr__(self, "channels", tuple(widths))

    @property
    def index(self) -> int:
        """The official NATS-Bench SSS index: the product order, first position most significant."""
        index = 0
        for width in self.channels:
            index = index * len(SSS_CHANNELS) + SSS_CHANNELS.index(width)
        return index

    @classmethod
    def from_index(cls, index: int) -> SSSArch:
        """The configuration at an official index in ``0..32767`` (not range-checked here)."""
        digits = []
        for _ in range(SSS_POSITIONS):
            index, digit = divmod(index, len(SSS_CHANNELS))
            digits.append(SSS_CHANNELS[digit])
        return cls(tuple(reversed(digits)))

    def __str__(self) -> str:
        return ":".join(map(str, self.channels))

    def __repr__(self) -> str:
        return f"SSSArch({str(self)!r})"


def parse_sss(text: object) -> SSSArch:
    """Parse an official SSS string such as ``8:16:24:32:40``; surrounding whitespace is ignored.

    Raises:
        ArchError: with one line naming the malformed part.
    """
    if not isinstance(text, str):
        raise ArchError(f"an SSS configuration must be given as a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ArchError("empty SSS configuration string")
    parts = text.split(":")
    if len(parts) != SSS_POSITIONS:
        raise ArchError(
            f"an SSS configuration has {SSS_POSITIONS} channel widths separated by ':', got {len(parts)} in {text!r}"
        )
    widths = []
    for position, part in enumerate(parts, start=1):
        if not (part.isascii() and part.isdigit() and int(part) in SSS_CHANNELS):
            raise _bad_width(position, part)
        widths.append(int(part))
    return SSSArch(tuple(widths))
