"""Threshold calibration: recall targets on data whose truth is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from nasenergy.filter import FilterError, calibrate_threshold, clopper_pearson_lower

# good candidates' utilization ~ Beta(5, 2), others ~ Beta(2, 5): the population recall of a
# threshold t is exactly 1 - BetaCDF(t; 5, 2).
GOOD_A, GOOD_B = 5, 2


def _sample(rng: np.random.Generator, n_good: int, n_bad: int) -> tuple[np.ndarray, np.ndarray]:
    u = np.concatenate([rng.beta(GOOD_A, GOOD_B, n_good), rng.beta(2, 5, n_bad)])
    good = np.concatenate([np.ones(n_good, bool), np.zeros(n_bad, bool)])
    return u, good


def _true_recall(tau: float) -> float:
    return float(beta.sf(tau, GOOD_A, GOOD_B))


def test_clopper_pearson_known_values() -> None:
    # with k = n the bound is (1 - c) ** (1 / n)
    assert clopper_pearson_lower(10, 10, 0.95) == pytest.approx(0.05 ** 0.1)
    assert clopper_pearson_lower(0, 10, 0.95) == 0.0
    assert clopper_pearson_lower(50, 100, 0.95) < 0.5
    with pytest.raises(FilterError):
        clopper_pearson_lower(3, 2, 0.9)


def test_empirical_rule_picks_the_largest_threshold_meeting_the_target() -> None:
    rng = np.random.default_rng(0)
    u, good = _sample(rng, 57, 300)
    cal = calibrate_threshold(u, good, 0.9)
    pos = np.sort(u[good])
    assert cal.recall_empirical >= 0.9
    assert cal.certified
    higher = pos[pos > cal.threshold]
    assert len(higher) > 0
    assert np.mean(u[good] >= higher[0]) < 0.9  # the next larger threshold misses the target
    assert cal.pass_rate_empirical == pytest.approx(np.mean(u >= cal.threshold))
    assert cal.n_good == 57 and cal.n_calibration == 357


def test_empirical_rule_meets_target_on_average_in_the_population() -> None:
    recalls = []
    for seed in range(200):
        u, good = _sample(np.random.default_rng(seed), 60, 240)
        recalls.append(_true_recall(calibrate_threshold(u, good, 0.8).threshold))
    # tau is the ceil(0.8 * 60) = 48th of 60 order statistics: E[recall] = 48 / 61
    assert np.mean(recalls) == pytest.approx(48 / 61, abs=0.02)


def test_confidence_rule_covers_at_the_requested_level() -> None:
    hits, certified = 0, 0
    for seed in range(300):
        u, good = _sample(np.random.default_rng(1000 + seed), 100, 300)
        cal = calibrate_threshold(u, good, 0.8, confidence=0.9)
        certified += cal.certified
        assert cal.recall_lower_bound is not None and cal.recall_lower_bound >= 0.8
        hits += _true_recall(cal.threshold) >= 0.8
    assert certified == 300
    assert hits / 300 >= 0.86  # nominal 0.9; binomial sd over 300 runs is about 0.017


def test_confidence_rule_cannot_certify_with_too_few_good_candidates() -> None:
    u = np.array([0.9, 0.8, 0.7, 0.2, 0.1])
    good = np.array([True, True, True, False, False])
    cal = calibrate_threshold(u, good, 0.95, confidence=0.95)
    assert not cal.certified
    assert cal.threshold == pytest.approx(0.7)  # the lowest good utilization
    assert cal.recall_empirical == 1.0
    assert cal.recall_lower_bound == pytest.approx(0.05 ** (1 / 3))


def test_ties_and_nan() -> None:
    u = np.array([0.5, 0.5, 0.5, 0.5, 0.1, math.nan])
    good = np.array([True, True, True, True, False, True])
    cal = calibrate_threshold(u, good, 0.5)
    assert cal.threshold == 0.5
    assert cal.recall_empirical == 1.0  # ties all pass
    assert cal.n_calibration == 5 and cal.n_good == 4  # the NaN row is left out
    assert cal.pass_rate_empirical == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("u", "good", "target", "conf"),
    [
        ([0.1, 0.2], [False, False], 0.9, None),
        ([0.1, 0.2], [True, False], 0.0, None),
        ([0.1, 0.2], [True, False], 0.9, 1.0),
        ([0.1, 0.2], [True], 0.9, None),
    ],
)
def test_bad_input_is_a_filter_error(u, good, target, conf) -> None:
    with pytest.raises(FilterError):
        calibrate_threshold(u, good, target, conf)
