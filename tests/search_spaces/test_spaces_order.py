"""Official NATS-Bench index order, derived by rule, checked against the official files."""

from __future__ import annotations

import numpy as np
import pytest

from nasenergy.errors import ArchError
from search_spaces import get_space


@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_order_equals_official_meta_file(space_name, official_meta_archs):
    space = get_space(space_name)
    meta = official_meta_archs(space_name)
    assert len(meta) == space.size
    assert [str(arch) for arch in space.enumerate()] == meta
    for index in (0, 1, 11, 284, space.size // 2, space.size - 1):
        assert space.index(meta[index]) == index
        assert str(space.arch_at(index)) == meta[index]


def test_tss_order_equals_hp12_table(hp12_rows):
    tss = get_space("tss")
    assert len(hp12_rows) == tss.size
    for row in hp12_rows:
        assert tss.index(row["arch_str"]) == int(row["arch_index"])


@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_index_and_arch_at_are_inverse(space_name):
    space = get_space(space_name)
    assert all(space.index(arch) == i for i, arch in enumerate(space.enumerate()))
    assert space.arch_at(np.int64(7)) == space.arch_at(7)


def test_known_indices_without_data_files():
    tss, sss = get_space("tss"), get_space("sss")
    assert str(tss.arch_at(0)) == "|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|"
    assert str(tss.arch_at(284)) == "|skip_connect~0|+|skip_connect~0|skip_connect~1|+|none~0|nor_conv_1x1~1|none~2|"
    assert str(sss.arch_at(11)) == "8:8:8:16:32" and str(sss.arch_at(284)) == "8:8:40:32:40"
    assert sss.index("64:64:64:64:64") == sss.size - 1 == 32_767


@pytest.mark.parametrize("space_name", ["tss", "sss"])
@pytest.mark.parametrize("bad", [-1, "size", 1.0, None])
def test_arch_at_rejects_bad_indices(space_name, bad):
    space = get_space(space_name)
    index = space.size if bad == "size" else bad
    with pytest.raises(ArchError):
        space.arch_at(index)


@pytest.mark.parametrize("space_name", ["tss", "sss"])
def test_sample_is_reproducible_distinct_and_bounded(space_name):
    space = get_space(space_name)
    first = space.sample(50, seed=1)
    assert first == space.sample(50, seed=1) != space.sample(50, seed=2)
    assert len(set(first)) == 50
    rng = np.random.default_rng(5)
    assert space.sample(3, seed=rng) != space.sample(3, seed=rng)  # the generator advances
    assert space.sample(0, seed=0) == []
    with pytest.raises(Exception, match="cannot sample"):
        space.sample(space.size + 1, seed=0)
