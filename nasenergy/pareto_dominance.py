"""Pareto dominance and non-dominated sets: objectives, senses and the comparisons of points.

Every objective has a sense, ``"maximize"`` or ``"minimize"``. Internally all points are turned
into a minimisation problem by negating the maximised objectives, so one set of rules holds
everywhere:

* ``a`` dominates ``b`` when ``a`` is at least as good as ``b`` in every objective and strictly
  better in at least one. Equal points do not dominate each other, so ties all stay on a front.
* NaN: a point with NaN in any objective is never on a front and never dominates anything, and
  nothing dominates it (comparisons with an unknown figure are undecided). `non_dominated_mask`
  marks such rows ``False``; `nasenergy.pareto_volume.hypervolume` ignores them;
  `nasenergy.pareto.ParetoFront.add` raises `ParetoError`.

The public names are re-exported by `nasenergy.pareto`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from nasenergy.errors import UsageError
from nasenergy.objectives import OBJECTIVES, SearchObjective

Sense = Literal["maximize", "minimize"]
SENSES: tuple[str, ...] = ("maximize", "minimize")


class ParetoError(UsageError, ValueError):
    """Bad objectives, senses or point shapes given to the Pareto utilities."""


@dataclass(frozen=True)
class Objective:
    """One objective of a multi-objective problem.

    Attributes:
        name: the figure's name, with its unit (e.g. ``"energy_j_per_img"``).
        sense: ``"maximize"`` or ``"minimize"``.
    """

    name: str
    sense: str

    def __post_init__(self) -> None:
        if self.sense not in SENSES:
            raise ParetoError(f"objective {self.name!r}: sense must be one of {SENSES}, got {self.sense!r}")


NAS_OBJECTIVES: tuple[Objective, ...] = tuple(Objective(o.column, o.sense) for o in OBJECTIVES.values())
"""The objectives of nasenergy's search (`nasenergy.objectives.OBJECTIVES`) by column, in this order everywhere."""
ACCURACY: Objective = NAS_OBJECTIVES[0]
"""Accuracy (%), maximised."""
THROUGHPUT: Objective = NAS_OBJECTIVES[1]
"""Inference throughput (images/s), maximised."""
ENERGY: Objective = NAS_OBJECTIVES[2]
"""Energy per image (J), minimised."""

SensesLike = Sequence[str] | Sequence[Objective] | Sequence[SearchObjective]


def senses_of(senses: SensesLike) -> tuple[str, ...]:
    """The senses as a tuple of strings, validated.

    Args:
        senses: strings ``"maximize"``/``"minimize"``, `Objective` objects or the search's
            `nasenergy.objectives.SearchObjective` objects.

    Raises:
        ParetoError: an unknown sense or an empty list.
    """
    out = tuple(s.sense if isinstance(s, (Objective, SearchObjective)) else s for s in senses)
    if not out:
        raise ParetoError("at least one objective is needed")
    bad = [s for s in out if s not in SENSES]
    if bad:
        raise ParetoError(f"senses must be 'maximize' or 'minimize', got {bad[0]!r}")
    return out


def _signs(senses: SensesLike) -> np.ndarray:
    """+1 for minimised, -1 for maximised objectives: ``points * signs`` is a minimisation problem."""
    return np.array([1.0 if s == "minimize" else -1.0 for s in senses_of(senses)])


def _as_matrix(points: Iterable[Sequence[float]] | np.ndarray, n_obj: int, what: str = "points") -> np.ndarray:
    arr = np.asarray(points if isinstance(points, np.ndarray) else list(points), dtype=float)
    if arr.size == 0:
        return np.empty((0, n_obj))
    if arr.ndim != 2 or arr.shape[1] != n_obj:
        raise ParetoError(f"{what} must have shape (n, {n_obj}), got {arr.shape}")
    return arr


def _as_vector(point: Sequence[float] | np.ndarray, n_obj: int, what: str = "point") -> np.ndarray:
    arr = np.asarray(point, dtype=float)
    if arr.shape != (n_obj,):
        raise ParetoError(f"{what} must have {n_obj} objectives, got shape {arr.shape}")
    return arr


def to_minimization(points: np.ndarray | Sequence[Sequence[float]], senses: SensesLike) -> np.ndarray:
    """The points with maximised objectives negated, so that smaller is better everywhere."""
    signs = _signs(senses)
    return _as_matrix(points, len(signs)) * signs


def dominates(a: Sequence[float], b: Sequence[float], senses: SensesLike) -> bool:
    """Whether ``a`` Pareto-dominates ``b``.

    Args:
        a: one point, one figure per objective.
        b: another point of the same length.
        senses: the objectives' senses.

    Returns:
        ``True`` when ``a`` is no worse than ``b`` everywhere and strictly better somewhere;
        ``False`` for equal points and whenever either point has a NaN.
    """
    signs = _signs(senses)
    x = _as_vector(a, len(signs), "a") * signs
    y = _as_vector(b, len(signs), "b") * signs
    if np.isnan(x).any() or np.isnan(y).any():
        return False
    return bool(np.all(x <= y) and np.any(x < y))


def _dominator_matrix_row(front_min: np.ndarray, p_min: np.ndarray) -> np.ndarray:
    """Boolean per front row: does that row dominate ``p_min`` (both already minimisation)?"""
    return np.all(front_min <= p_min, axis=1) & np.any(front_min < p_min, axis=1)


def non_dominated_mask(points: np.ndarray | Sequence[Sequence[float]], senses: SensesLike) -> np.ndarray:
    """Which points are on the Pareto front of the set.

    O(n²) comparisons, vectorised in blocks; fine for thousands of points.

    Args:
        points: shape ``(n, n_objectives)``.
        senses: the objectives' senses.

    Returns:
        A boolean array of length ``n``: ``True`` for points no other point dominates. Equal
        points are all kept; rows with NaN are ``False`` and dominate nothing.
    """
    pts = to_minimization(points, senses)
    valid = ~np.isnan(pts).any(axis=1)
    mask = valid.copy()
    vp = pts[valid]
    if len(vp) == 0:
        return mask
    idx = np.flatnonzero(valid)
    block = max(1, 2_000_000 // max(1, len(vp) * pts.shape[1]))
    for start in range(0, len(vp), block):
        chunk = vp[start : start + block]  # candidates to test
        le = np.all(vp[None, :, :] <= chunk[:, None, :], axis=2)
        lt = np.any(vp[None, :, :] < chunk[:, None, :], axis=2)
        dominated = np.any(le & lt, axis=1)
        mask[idx[start : start + block]] = ~dominated
    return mask


def dominating_index(
    point: Sequence[float] | np.ndarray, front: np.ndarray | Sequence[Sequence[float]], senses: SensesLike
) -> int | None:
    """The row of ``front`` that dominates ``point``, or ``None``.

    When several rows dominate, the first one is returned. A point with NaN is dominated by
    nothing; front rows with NaN dominate nothing.
    """
    signs = _signs(senses)
    p = _as_vector(point, len(signs)) * signs
    f = _as_matrix(front, len(signs), "front") * signs
    if len(f) == 0 or np.isnan(p).any():
        return None
    hits = np.flatnonzero(_dominator_matrix_row(f, p) & ~np.isnan(f).any(axis=1))
    return int(hits[0]) if len(hits) else None


def is_dominated_by_front(
    point: Sequence[float], front: np.ndarray | Sequence[Sequence[float]], senses: SensesLike
) -> bool:
    """Whether any row of ``front`` dominates ``point`` (``False`` for an empty front or NaN)."""
    return dominating_index(point, front, senses) is not None
