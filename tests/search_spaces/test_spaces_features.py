"""Feature vectors for predictors."""

from __future__ import annotations

import numpy as np
import pytest

from search_spaces import TSS_FEATURE_NAMES, get_space

TSS = get_space("tss")


def _structural(arch: str) -> dict[str, float]:
    values = TSS.features(arch)
    return {name: values[TSS_FEATURE_NAMES.index(name)] for name in TSS_FEATURE_NAMES[30:35]}


def test_tss_one_hot_layout():
    arch = TSS.arch_at(0)
    values = TSS.features(arch)
    assert values.shape == (48,) == (len(TSS.feature_names),) and values.dtype == np.float64
    one_hot = values[:30].reshape(6, 5)
    assert (one_hot.sum(axis=1) == 1).all()
    assert values[TSS_FEATURE_NAMES.index("edge_1<-0=avg_pool_3x3")] == 1.0
    assert values[TSS_FEATURE_NAMES.index("edge_3<-2=skip_connect")] == 1.0


@pytest.mark.parametrize(
    ("arch", "expected"),
    [
        ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", (0, 0, 0, 0, 0)),
        ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|none~0|none~1|none~2|", (0, 0, 0, 0, 0)),
        ("|nor_conv_3x3~0|+|none~0|nor_conv_1x1~1|+|skip_connect~0|none~1|nor_conv_3x3~2|", (1, 4, 3, 3, 3)),
        # edge 2<-1 is dead: node 1 receives only `none`
        ("|none~0|+|skip_connect~0|nor_conv_3x3~1|+|none~0|avg_pool_3x3~1|nor_conv_1x1~2|", (1, 2, 1, 2, 1)),
        # edge 2<-0 is dead: node 2 does not reach the output
        ("|nor_conv_1x1~0|+|nor_conv_3x3~0|none~1|+|none~0|skip_connect~1|none~2|", (1, 2, 1, 2, 1)),
    ],
)
def test_tss_structural_features(arch, expected):
    names = ("connected", "live_edges", "live_convs", "depth_edges", "depth_convs")
    assert _structural(arch) == dict(zip(names, map(float, expected)))


def test_sss_features_are_normalised_widths():
    sss = get_space("sss")
    assert sss.features("8:16:32:48:64").tolist() == [0.125, 0.25, 0.5, 0.75, 1.0]
    assert sss.feature_names == ("channels_1", "channels_2", "channels_3", "channels_4", "channels_5")
