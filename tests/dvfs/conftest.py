"""Fixtures of the DVFS tests."""

from __future__ import annotations

import numpy as np
import pytest

from dvfs_helpers import make_params
from nasenergy.dvfs.params import GpuDvfsParams


@pytest.fixture
def params() -> GpuDvfsParams:
    return make_params()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
