"""The hypervolume convention: fixed zero reference, energy as img/J; checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from nasenergy.run.objectives import front_mask, hv_curve, hv_hypervolume, objectives_for, points_of

ACC_THR = objectives_for(["accuracy", "throughput"])
ALL = objectives_for(["accuracy", "throughput", "energy"])


def test_two_objectives_by_hand():
    # Rectangles [0, acc] x [0, img/s]: 80*40 + 50*(100-40) + 30*(200-100) = 9200; (20, 50) is dominated.
    pts = np.array([[50, 100], [80, 40], [30, 200], [20, 50]], dtype=float)
    assert hv_hypervolume(pts, ACC_THR) == pytest.approx(9200.0)
    assert front_mask(pts, ACC_THR).tolist() == [True, True, True, False]


def test_three_objectives_energy_enters_as_its_reciprocal():
    # (80 %, 40 img/s, 0.5 J) -> box 80*40*2; (50 %, 100 img/s, 0.25 J) -> box 50*100*4;
    # their overlap is 50*40*2: 6400 + 20000 - 4000 = 22400.
    pts = np.array([[80, 40, 0.5], [50, 100, 0.25]])
    assert hv_hypervolume(pts, ALL) == pytest.approx(22400.0)
    # A point worse in every objective adds nothing; a missing figure is ignored.
    more = np.vstack([pts, [[40, 30, 1.0], [np.nan, 500, 0.1]]])
    assert hv_hypervolume(more, ALL) == pytest.approx(22400.0)


def test_curve_is_stable_and_non_decreasing():
    pts = np.array([[50, 100, 0.5], [20, 10, 2.0], [80, 40, 0.5], [50, 100, 0.25]])
    curve = hv_curve(pts, ALL)
    assert curve[0] == pytest.approx(50 * 100 * 2)
    assert curve[1] == curve[0]  # a dominated point changes nothing
    assert np.all(np.diff(curve) >= 0)
    assert curve[-1] == pytest.approx(hv_hypervolume(pts, ALL))
    # Later points never change earlier values (the reference is fixed).
    assert np.allclose(hv_curve(pts[:3], ALL), curve[:3])


def test_points_of_reads_columns_and_blanks():
    rows = [{"accuracy_pct": 90.0, "throughput_img_per_s": "1000"}, {"accuracy_pct": None}]
    pts = points_of(rows, ACC_THR)
    assert pts[0].tolist() == [90.0, 1000.0]
    assert np.isnan(pts[1]).all()
