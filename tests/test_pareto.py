"""Tests of nasenergy.pareto: dominance, fronts with ties and NaN, exact hypervolume."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from nasenergy.pareto import (
    NAS_OBJECTIVES,
    Objective,
    ParetoError,
    ParetoFront,
    dominates,
    dominating_index,
    hypervolume,
    is_dominated_by_front,
    non_dominated_mask,
    senses_of,
)

MIN2 = ("minimize", "minimize")
MIN3 = ("minimize", "minimize", "minimize")


def test_dominates_respects_senses() -> None:
    senses = ("maximize", "minimize")
    assert dominates((90, 1.0), (80, 2.0), senses)
    assert dominates((90, 2.0), (80, 2.0), senses)
    assert not dominates((80, 2.0), (90, 1.0), senses)
    assert not dominates((90, 2.0), (80, 1.0), senses)  # trade-off


def test_equal_points_do_not_dominate_each_other() -> None:
    assert not dominates((1, 2, 3), (1, 2, 3), MIN3)
    mask = non_dominated_mask([[1, 2], [1, 2], [2, 3]], MIN2)
    assert mask.tolist() == [True, True, False]


def test_nan_never_dominates_and_is_never_on_the_front() -> None:
    assert not dominates((0, math.nan), (5, 5), MIN2)
    assert not dominates((0, 0), (math.nan, 5), MIN2)
    mask = non_dominated_mask([[math.nan, 0.0], [1.0, 1.0], [2.0, 2.0]], MIN2)
    assert mask.tolist() == [False, True, False]
    # a NaN row must not knock out a point it would otherwise beat
    mask = non_dominated_mask([[0.0, math.nan], [1.0, 1.0]], MIN2)
    assert mask.tolist() == [False, True]
    assert not is_dominated_by_front((math.nan, 9.0), [[0.0, 0.0]], MIN2)
    assert not is_dominated_by_front((9.0, 9.0), [[0.0, math.nan]], MIN2)


def test_empty_inputs() -> None:
    assert non_dominated_mask(np.empty((0, 3)), MIN3).shape == (0,)
    assert not is_dominated_by_front((1, 2, 3), [], MIN3)
    assert dominating_index((1, 2, 3), np.empty((0, 3)), MIN3) is None
    assert hypervolume([], (1, 1), MIN2) == 0.0


def test_non_dominated_mask_matches_brute_force_with_ties() -> None:
    rng = np.random.default_rng(7)
    pts = rng.integers(0, 4, size=(120, 3)).astype(float)  # many exact ties
    senses = ("maximize", "minimize", "maximize")
    mask = non_dominated_mask(pts, senses)
    brute = [not any(dominates(q, p, senses) for q in pts) for p in pts]
    assert mask.tolist() == brute
    assert mask.any()


def test_dominating_index_returns_first_dominator() -> None:
    front = [[5.0, 5.0], [1.0, 1.0], [0.0, 0.0]]
    assert dominating_index((2.0, 2.0), front, MIN2) == 1
    assert dominating_index((1.0, 1.0), front, MIN2) == 2
    assert dominating_index((0.0, 0.0), front, MIN2) is None


def test_hypervolume_2d_hand_computed() -> None:
    # staircase: [1,2)x1 + [2,3)x2 + [3,4)x3 = 6
    assert hypervolume([[1, 3], [2, 2], [3, 1]], (4, 4), MIN2) == pytest.approx(6.0)
    # mixed senses: boxes 20x1 and 10x2 overlapping in 10x1 -> 30
    assert hypervolume([[90, 2], [80, 1]], (70, 3), ("maximize", "minimize")) == pytest.approx(30.0)
    # dominated and out-of-reference points add nothing
    assert hypervolume([[1, 3], [2, 2], [3, 1], [3, 3], [5, 0]], (4, 4), MIN2) == pytest.approx(6.0)


def test_hypervolume_3d_hand_computed() -> None:
    assert hypervolume([[1, 1, 1]], (2, 3, 4), MIN3) == pytest.approx(6.0)
    assert hypervolume([[1, 2, 2], [2, 1, 1]], (3, 3, 3), MIN3) == pytest.approx(5.0)
    # three 3x1x1 boxes, pairwise overlaps 1, triple overlap 1: 9 - 3 + 1
    assert hypervolume([[0, 2, 2], [2, 0, 2], [2, 2, 0]], (3, 3, 3), MIN3) == pytest.approx(7.0)
    # the NAS senses: accuracy up, throughput up, energy down
    hv = hypervolume([[90.0, 1000.0, 0.5]], (80.0, 0.0, 1.0), NAS_OBJECTIVES)
    assert hv == pytest.approx(10.0 * 1000.0 * 0.5)


def _box_union_inclusion_exclusion(pts: np.ndarray, ref: np.ndarray) -> float:
    total = 0.0
    for r in range(1, len(pts) + 1):
        for combo in itertools.combinations(range(len(pts)), r):
            corner = pts[list(combo)].max(axis=0)
            total += (-1) ** (r + 1) * float(np.prod(np.clip(ref - corner, 0, None)))
    return total


@pytest.mark.parametrize("d", [2, 3])
def test_hypervolume_matches_inclusion_exclusion(d: int) -> None:
    rng = np.random.default_rng(d)
    for _ in range(20):
        pts = rng.integers(0, 6, size=(7, d)).astype(float)
        ref = np.full(d, 6.0)
        assert hypervolume(pts, ref, ("minimize",) * d) == pytest.approx(
            _box_union_inclusion_exclusion(pts, ref)
        )


def test_hypervolume_ignores_nan_and_rejects_bad_input() -> None:
    assert hypervolume([[1, 1], [math.nan, 0]], (2, 2), MIN2) == pytest.approx(1.0)
    with pytest.raises(ParetoError):
        hypervolume([[1, 1, 1, 1]], (2, 2, 2, 2), ("minimize",) * 4)
    with pytest.raises(ParetoError):
        hypervolume([[1, 1]], (2, 2, 2), MIN3)
    with pytest.raises(ParetoError):
        senses_of(["up"])
    with pytest.raises(ParetoError):
        Objective("x", "bigger")


def test_pareto_front_incremental_add() -> None:
    front = ParetoFront(NAS_OBJECTIVES)
    assert front.add((90.0, 1000.0, 1.0), key="a")
    assert front.add((80.0, 2000.0, 1.0), key="b")  # trade-off
    assert not front.add((85.0, 900.0, 1.5), key="c")  # dominated by a
    assert front.add((90.0, 1000.0, 1.0), key="a2")  # tie stays
    for missing in (math.nan, None):
        with pytest.raises(ParetoError, match="no value for throughput_img_per_s") as ei:
            front.add((95.0, missing, 0.1), key="nan")
        assert "\n" not in str(ei.value)
    assert sorted(front.keys) == ["a", "a2", "b"]
    assert front.add((91.0, 2000.0, 0.9), key="d")  # dominates everything
    assert front.keys == ["d"]
    assert front.points.tolist() == [[91.0, 2000.0, 0.9]]
    assert front.names == ("accuracy_pct", "throughput_img_per_s", "energy_j_per_img")
    assert front.is_dominated((90.0, 1000.0, 1.0))
    assert front.hypervolume((90.0, 1000.0, 1.0)) == pytest.approx(1.0 * 1000.0 * 0.1)


def test_pareto_front_from_points_equals_incremental() -> None:
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(200, 3))
    senses = ("maximize", "maximize", "minimize")
    inc = ParetoFront(senses)
    for i, p in enumerate(pts):
        inc.add(p, key=i)
    bulk = ParetoFront.from_points(pts, senses, keys=list(range(len(pts))))
    assert sorted(inc.keys) == sorted(bulk.keys)
    assert inc.hypervolume((-5, -5, 5)) == pytest.approx(bulk.hypervolume((-5, -5, 5)))


def test_the_search_hypervolume_refuses_objectives_that_do_not_name_energy() -> None:
    """`NAS_OBJECTIVES` (columns and senses) cannot tell the search hypervolume which column is
    energy; given them, it used to return a volume with energy taken as is. Now it refuses."""
    from nasenergy.objectives import objectives_for
    from nasenergy.pareto import NAS_OBJECTIVES, ParetoError, search_hypervolume, search_hypervolume_curve

    points = [[90.0, 1000.0, 0.5], [80.0, 4000.0, 0.25]]
    right = search_hypervolume(points, objectives_for(["accuracy", "throughput", "energy"]))
    assert right == pytest.approx(80.0 * 4000.0 * 4.0 + 10.0 * 1000.0 * 2.0)
    for call in (search_hypervolume, search_hypervolume_curve):
        with pytest.raises(ParetoError, match="SearchObjective"):
            call(points, NAS_OBJECTIVES)
        with pytest.raises(ParetoError, match="SearchObjective"):
            call(points, ["maximize", "maximize", "minimize"])
