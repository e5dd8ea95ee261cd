"""Path summaries of TSS cells (`search_spaces._tss_paths`)."""

from __future__ import annotations

import pytest

from search_spaces import TSS_FEATURE_NAMES, get_space
from search_spaces._tss_arch import parse_tss
from search_spaces._tss_paths import TSS_PATH_FEATURES, cell_paths, tss_path_features

TSS = get_space("tss")


def _paths(arch: str) -> dict[str, float]:
    return dict(zip(TSS_PATH_FEATURES, tss_path_features(parse_tss(arch))))


def test_path_features_close_the_feature_vector():
    assert TSS_FEATURE_NAMES[-len(TSS_PATH_FEATURES):] == TSS_PATH_FEATURES
    arch = "|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|nor_conv_3x3~2|"
    assert TSS.features(arch)[-len(TSS_PATH_FEATURES):].tolist() == list(_paths(arch).values())


def test_paths_of_a_cell_skip_none_edges():
    arch = parse_tss("|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|nor_conv_3x3~2|")
    assert sorted(cell_paths(arch)) == [("nor_conv_3x3", "nor_conv_1x1", "nor_conv_3x3"), ("skip_connect",)]


def test_path_summaries_of_a_cell():
    f = _paths("|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|nor_conv_3x3~2|")
    assert f["paths"] == 2
    assert [f[f"paths_convs={k}"] for k in range(4)] == [1, 0, 0, 1]
    assert [f[f"paths_conv3x3={k}"] for k in range(4)] == [1, 0, 1, 0]
    assert f["max_conv3x3_on_path"] == 2 and f["skip_path"] == 1 and f["pool_paths"] == 0
    assert f["max_kernel_sum"] == 7  # 3 + 1 + 3


@pytest.mark.parametrize(
    ("arch", "paths", "pool_paths", "skip_path"),
    [
        ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", 0, 0, 0),
        ("|skip_connect~0|+|skip_connect~0|skip_connect~1|+|skip_connect~0|skip_connect~1|skip_connect~2|", 4, 0, 1),
        ("|avg_pool_3x3~0|+|none~0|none~1|+|none~0|avg_pool_3x3~1|none~2|", 1, 1, 0),
    ],
)
def test_path_counts(arch, paths, pool_paths, skip_path):
    f = _paths(arch)
    assert (f["paths"], f["pool_paths"], f["skip_path"]) == (paths, pool_paths, skip_path)
    assert sum(f[f"paths_convs={k}"] for k in range(4)) == paths == sum(f[f"paths_conv3x3={k}"] for k in range(4))


def test_disconnected_cell_has_zero_summaries():
    assert set(_paths("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|none~0|none~1|none~2|").values()) == {0.0}
