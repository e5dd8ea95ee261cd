"""The NATS-Bench size search space (SSS)."""

from __future__ import annotations

from typing import Any

import numpy as np

from search_spaces._network_spec import NetworkSpec
from search_spaces._space import SearchSpace
from search_spaces._sss_arch import SSS_CHANNELS, SSS_POSITIONS, SSS_SIZE, SSSArch, parse_sss
from search_spaces._tss_arch import parse_tss

SSS_CELL = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|"
"""The cell every SSS network uses (N = 1 cell per stage)."""

SSS_FEATURE_NAMES: tuple[str, ...] = tuple(f"channels_{p}" for p in range(1, SSS_POSITIONS + 1))


class SSSSpace(SearchSpace[SSSArch]):
    """32,768 width configurations (5 layers x 8 widths) of a fixed-cell network."""

    name = "sss"
    size = SSS_SIZE
    feature_names = SSS_FEATURE_NAMES

    def parse(self, text: SSSArch | str) -> SSSArch:
        return text if isinstance(text, SSSArch) else parse_sss(text)

    def _index_of(self, arch: SSSArch) -> int:
        return arch.index

    def _arch_at(self, index: int) -> SSSArch:
        return SSSArch.from_index(index)

    def canonical(self, arch: SSSArch | str) -> SSSArch:
        """`arch` itself: distinct width configurations are distinct networks."""
        return self.parse(arch)

    def canonical_classes(self) -> list[SSSArch]:
        return list(self.enumerate())

    def deployed_key(self, arch: SSSArch | str) -> str:
        """The configuration's string: every configuration deploys to its own network."""
        return str(self.parse(arch))

    def deployed_classes(self) -> list[SSSArch]:
        return list(self.enumerate())

    def deployed_members(self, arch: SSSArch | str) -> tuple[SSSArch, ...]:
        """The configuration alone: it is its own deployed network."""
        return (self.parse(arch),)

    def deployed_members_by_key(self) -> dict[str, tuple[SSSArch, ...]]:
        return {str(a): (a,) for a in self.enumerate()}

    def deployed_representative(self, arch: SSSArch | str) -> SSSArch:
        return self.parse(arch)

    ordinal_widths: bool = False
    """Whether `suggest` asks for each width as an integer (8..64, step 8) instead of a
    categorical: the sampler's model then treats the widths as ordered."""

    def suggest(self, trial: Any) -> SSSArch:
        """One width per position: categoricals, or integers where `ordinal_widths` holds."""
        if not self.ordinal_widths:
            return super().suggest(trial)
        lo, hi = min(SSS_CHANNELS), max(SSS_CHANNELS)
        step = SSS_CHANNELS[1] - SSS_CHANNELS[0]
        return SSSArch(tuple(trial.suggest_int(name, lo, hi, step=step) for name in SSS_FEATURE_NAMES))

    def param_choices(self) -> dict[str, tuple[Any, ...]]:
        """One categorical per position, ``channels_1`` .. ``channels_5``, over the 8 widths."""
        return {name: SSS_CHANNELS for name in SSS_FEATURE_NAMES}

    def _from_values(self, values: tuple[Any, ...]) -> SSSArch:
        return SSSArch(values)

    def network_spec(self, arch: SSSArch | str) -> NetworkSpec:
        return NetworkSpec(self.parse(arch).channels, parse_tss(SSS_CELL).ops)

    def features(self, arch: SSSArch | str) -> np.ndarray:
        """The 5 widths divided by the largest width (64), each in (0, 1]."""
        return np.asarray(self.parse(arch).channels, dtype=np.float64) / max(SSS_CHANNELS)
