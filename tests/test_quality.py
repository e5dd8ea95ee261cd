"""The deploy-region quality measure: floor, log axes, exclusive shares, regret, shipped floors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasenergy.objectives import objectives_for
from nasenergy.pareto import ParetoError
from nasenergy.quality import DeployRegion, default_floor_pct, median_floor, region_from_points, regret_profile

OBJS = objectives_for(["accuracy", "throughput", "energy"])
OBJS2 = objectives_for(["accuracy", "throughput"])


def test_volume_is_the_staircase_in_region_coordinates():
    region = DeployRegion(70.0, 1000.0, 1.0)
    pts = [(80.0, 10_000.0, 0.1), (75.0, 100_000.0, 0.1), (60.0, 1e7, 1e-4)]  # the last is below the floor
    # accuracy above 70 x decades of throughput above 1,000 x decades of energy below 1 J
    expected = (10 * 1 + 5 * (2 - 1)) * 1
    assert region.volume(pts, OBJS) == pytest.approx(expected)
    assert region.volume(pts[:2], OBJS) == pytest.approx(expected)  # the fast chance-level network adds nothing
    assert list(region.feasible_mask(pts, OBJS)) == [True, True, False]
    assert region.volume([(70.0, 1e6, 1e-3)], OBJS) == 0.0  # on the floor: no volume


def test_shares_and_curve():
    region = DeployRegion(70.0, 1000.0, 1.0)
    pts = np.array([(80.0, 10_000.0, 0.1), (75.0, 100_000.0, 0.1), (72.0, 2000.0, 0.5)])
    shares = region.shares(pts, OBJS)
    assert shares[0] == pytest.approx(1 - 5 * 2 / 15) and shares[1] == pytest.approx(1 - 10 / 15)
    assert shares[2] == 0.0  # dominated
    curve = region.curve(pts, OBJS)
    assert curve[-1] == pytest.approx(region.volume(pts, OBJS)) and np.all(np.diff(curve) >= 0)


def test_region_from_points_takes_the_slowest_and_the_hungriest():
    pts = [(80.0, 5000.0, 0.2), (60.0, 300.0, 0.9), (90.0, 8000.0, float("nan"))]
    region = region_from_points(pts, OBJS, 70.0)
    assert (region.throughput_ref_img_per_s, region.energy_ref_j_per_img) == (300.0, 0.9)
    with pytest.raises(ParetoError):
        DeployRegion(70.0, 0.0, 1.0)
    with pytest.raises(ParetoError):
        region.volume([(1.0, 2.0)], OBJS)  # the wrong number of columns


def test_regret_profile_counts_the_shortfall_under_each_budget():
    region = DeployRegion(50.0, 10.0, 1.0)
    truth = np.array([(90.0, 100.0, 0.5), (80.0, 1000.0, 0.05), (60.0, 10_000.0, 0.005)])
    full = regret_profile(truth, truth, OBJS, region, n=5)
    assert full.mean_regret_pt == 0.0 and len(full.energy_budgets_j_per_img) == 5
    assert full.energy_budgets_j_per_img[0] == pytest.approx(0.005) and full.energy_budgets_j_per_img[-1] == 0.5
    missing = regret_profile(truth[1:], truth, OBJS, region, n=5)
    assert missing.energy_regret_pt[-1] == pytest.approx(10.0) and missing.mean_regret_pt > 0
    nothing = regret_profile(np.empty((0, 3)), truth, OBJS, region, n=3)
    assert nothing.energy_regret_pt[0] == pytest.approx(60.0 - 50.0)  # the full gap to the floor
    assert regret_profile(truth[:, :2], truth[:, :2], OBJS2, region, n=3).energy_regret_pt == ()


def test_median_floor():
    assert median_floor([1.0, 3.0, float("nan"), 2.0]) == 2.0
    with pytest.raises(ParetoError):
        median_floor([])


def test_the_shipped_tss_floor_is_the_median_of_the_deployed_networks():
    """Recomputed from the embedded tables: the median over the deployed networks that can learn of
    the mean 12-epoch x-valid accuracy of their cells."""
    from nasenergy.oracles import load_oracle
    from nasenergy.oracles.evaluation import Metrics, MetricSpec
    from search_spaces import get_space

    tss = get_space("tss")
    oracle = load_oracle(None, tss, metrics=Metrics(MetricSpec("x-valid", "12", "mean"),
                                                    MetricSpec("test", "200", "mean")), seed=0)
    means = [float(np.mean([oracle.evaluate(a, "cifar10").accuracy_pct for a in members]))
             for members in tss.deployed_members_by_key().values() if tss.output_depends_on_input(members[0])]
    assert len(means) == 6016
    assert default_floor_pct("tss", "cifar10") == pytest.approx(median_floor(means), abs=1e-4)
    assert default_floor_pct("tss", "nope") is None
    assert math.isfinite(default_floor_pct("sss", "cifar100"))
