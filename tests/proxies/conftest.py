"""Fixtures of the proxy tests: the TSS space and a few deployed TSS networks."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from proxy_nets import CONV_CELL, SKIP_CELL, ZERO_CELL  # noqa: E402
from search_spaces import get_space  # noqa: E402


@pytest.fixture(scope="session")
def tss():
    return get_space("tss")


@pytest.fixture(scope="session")
def tss_nets(tss):
    """Deployed TSS networks (ImageNet16-120 classes) of the skip cell, a 1x1-conv cell and the
    all-none cell, built once."""
    return {name: tss.build_deployed(arch, "ImageNet16-120", seed=0)
            for name, arch in (("skip", SKIP_CELL), ("conv", CONV_CELL), ("zero", ZERO_CELL))}
