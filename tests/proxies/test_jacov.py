import math

import numpy as np
import pytest

from nasenergy.proxies.jacov import K, jacov_score


def test_uncorrelated_jacobians_score_the_identity_matrix_value():
    rows = np.array([[1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]], dtype=float)  # centred, orthogonal
    assert jacov_score(rows).score == pytest.approx(-3 * (math.log(1 + K) + 1 / (1 + K)))


def test_less_correlated_jacobians_score_higher():
    rng = np.random.default_rng(1)
    base = rng.standard_normal(40)
    similar = base + 0.05 * rng.standard_normal((8, 40))
    distinct = rng.standard_normal((8, 40))
    assert jacov_score(distinct).score > jacov_score(similar).score


def test_zero_or_constant_jacobians_score_minus_infinity_with_a_reason():
    assert jacov_score(np.zeros((4, 10))).score == -math.inf
    v = jacov_score(np.vstack([np.ones(10), np.arange(10.0), np.arange(10.0) ** 2]))
    assert v.score == -math.inf and "constant" in v.reason
