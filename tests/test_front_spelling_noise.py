"""experiments/front_spelling_noise.py on hand-made networks (made-up figures, known answers)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="module")
def fsn(load_experiment):
    return load_experiment("front_spelling_noise")


def test_each_cell_weighs_one_spread_over_its_runs(fsn):
    weights = fsn.spelling_distribution([[50.0], [50.0, 52.0], [51.0]])
    assert weights == {50.0: 1.5, 51.0: 1.0, 52.0: 0.5}
    assert list(weights) == sorted(weights)


def test_a_network_dominated_whatever_its_draw_cannot_be_on_the_front(fsn):
    # (accuracy %, img/s, J/img) at each network's lowest and highest recorded accuracy
    low = np.array([[80.0, 100.0, 1.0], [70.0, 50.0, 2.0], [60.0, 300.0, 0.5], [79.0, 100.0, 1.0]])
    high = np.array([[81.0, 100.0, 1.0], [79.0, 50.0, 2.0], [61.0, 300.0, 0.5], [82.0, 100.0, 1.0]])
    keep = fsn.possible_front(low, high)
    # 1 is slower and dearer than 0 and never more accurate than 0's worst: never on the front;
    # 3 shares 0's hardware and may beat it: both stay
    assert keep.tolist() == [True, False, True, True]


def test_the_ceiling_draws_a_random_cell_and_run_per_network(fsn):
    cells = [[[1.0], [3.0]], [[10.0, 20.0]]]  # network 0: two cells; network 1: one cell, two runs
    hardware = np.array([[100.0, 1.0], [50.0, 2.0]])
    seen = []

    def ratio(rows):
        seen.append(rows.copy())
        return float(rows[:, 0].max())

    sims = fsn.simulate_ceiling(cells, hardware, ratio, draws=400, seed=0)
    assert set(sims.tolist()) == {10.0, 20.0}  # the accurate network's two runs, each drawn
    firsts = {float(r[r[:, 1] == 100.0][0, 0]) for r in seen}
    assert firsts == {1.0, 3.0}  # both cells of network 0 drawn (it is always on the front: fastest)
    assert np.array_equal(sims, fsn.simulate_ceiling(cells, hardware, ratio, draws=400, seed=0))  # seeded


@pytest.mark.parametrize("argv, message", [
    (["--draws", "0"], "--draws must be at least 1"),
    (["--datasets", "mnist"], "--datasets: unknown mnist"),
])
def test_bad_arguments_end_with_one_line(fsn, argv, message, capsys, tmp_path):
    assert fsn.main([*argv, "--out", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
