import math

import numpy as np
import pytest
from torch import nn

from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.data import make_batch
from nasenergy.proxies.naswot import naswot


def test_naswot_is_the_log_det_of_the_code_agreement_kernel():
    # one ReLU reading the image itself: the codes are the images' pixel signs
    net = nn.Sequential(nn.ReLU(), nn.Flatten(), nn.Linear(12, 3))
    batch = make_batch((3, 2, 2), 3, batch_size=6, seed=0)
    codes = (batch.images.reshape(6, -1).numpy() > 0).astype(float)
    kernel = codes @ codes.T + (1 - codes) @ (1 - codes).T
    sign, expected = np.linalg.slogdet(kernel)
    got = naswot(net, ProxyContext((3, 2, 2), 3, "cpu", batch)).score
    if sign > 0:
        assert got == pytest.approx(expected)
    else:
        assert got == -math.inf


def test_identical_codes_and_networks_without_relu_score_minus_infinity(tss_nets):
    batch = make_batch((3, 8, 8), 120, batch_size=4, seed=0)
    v = naswot(tss_nets["zero"], ProxyContext((3, 8, 8), 120, "cpu", batch))
    assert v.score == -math.inf and "singular" in v.reason
    no_relu = nn.Sequential(nn.Flatten(), nn.Linear(192, 3))
    assert "no ReLU" in naswot(no_relu, ProxyContext((3, 8, 8), 3, "cpu", batch)).reason
