"""Exact hypervolume for a few objectives, and the search's hypervolume convention.

`hypervolume` is the one routine (exact for 1 to 3 objectives); `search_hypervolume` applies it on
(accuracy %, img/s, img/J) against the fixed origin reference. The public names are re-exported by
`nasenergy.pareto`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto_dominance import ParetoError, SensesLike, _as_matrix, _as_vector, _signs, non_dominated_mask


def _hv2_min(pts: np.ndarray, ref: np.ndarray) -> float:
    """Area dominated by 2-D minimisation points (all strictly better than ``ref``)."""
    if len(pts) == 0:
        return 0.0
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    x = pts[order, 0]
    y_best = np.minimum.accumulate(pts[order, 1])
    widths = np.diff(np.append(x, ref[0]))
    return float(np.sum(widths * (ref[1] - y_best)))


def hypervolume(
    points: np.ndarray | Sequence[Sequence[float]],
    reference: Sequence[float],
    senses: SensesLike,
) -> float:
    """The exact hypervolume dominated by ``points`` and bounded by ``reference``.

    Exact for 1, 2 and 3 objectives (a sweep in 2-D; slicing along the third objective in 3-D).
    Maximised objectives are negated first, so ``reference`` is given in the original units and
    senses (for a maximised objective it is a lower bound, for a minimised one an upper bound).
    Points that are not strictly better than the reference in every objective add nothing; rows
    with NaN are ignored. The result is in the product of the objectives' units.

    Raises:
        ParetoError: more than three objectives, or mismatched shapes.
    """
    signs = _signs(senses)
    d = len(signs)
    if d > 3:
        raise ParetoError(f"hypervolume is implemented exactly for up to 3 objectives, got {d}")
    ref = _as_vector(reference, d, "reference") * signs
    if np.isnan(ref).any():
        raise ParetoError("the hypervolume reference point has a NaN")
    pts = _as_matrix(points, d) * signs
    pts = pts[~np.isnan(pts).any(axis=1)]
    pts = pts[np.all(pts < ref, axis=1)]
    if len(pts) == 0:
        return 0.0
    if d == 1:
        return float(ref[0] - pts[:, 0].min())
    pts = pts[non_dominated_mask(pts, ("minimize",) * d)]
    if d == 2:
        return _hv2_min(pts, ref)
    order = np.argsort(pts[:, 2], kind="stable")
    pts = pts[order]
    z_next = np.append(pts[1:, 2], ref[2])
    total = 0.0
    for k in range(len(pts)):
        depth = z_next[k] - pts[k, 2]
        if depth > 0:
            total += depth * _hv2_min(pts[: k + 1, :2], ref[:2])
    return float(total)



SEARCH_HV_REFERENCE = 0.0
"""The search's hypervolume reference: the origin of (accuracy %, img/s, img/J), see `search_hypervolume`."""


def _efficiency_points(points: np.ndarray | Sequence[Sequence[float]],
                       objectives: Sequence[SearchObjective]) -> np.ndarray:
    """``points`` with the energy column (J/img) turned into efficiency (img/J); non-positive
    energies become NaN."""
    pts = np.array(points, dtype=float, copy=True).reshape(-1, len(objectives))
    for j, obj in enumerate(objectives):
        if obj.name == "energy":
            with np.errstate(divide="ignore", invalid="ignore"):
                col = pts[:, j]
                pts[:, j] = np.where(col > 0, 1.0 / col, np.nan)
    return pts


def _require_search_objectives(objectives: Sequence[object]) -> None:
    """Refuse objectives other than `SearchObjective` objects: the search's hypervolume needs to
    know which column is energy (it enters as 1 / energy), which a sense or an `Objective` (such as
    `NAS_OBJECTIVES`) does not say, and would silently give another volume."""
    wrong = [o for o in objectives if not isinstance(o, SearchObjective)]
    if wrong:
        raise ParetoError(
            f"the search hypervolume needs nasenergy.objectives.SearchObjective objects (e.g. "
            f"nasenergy.objectives.objectives_for(['accuracy', 'throughput', 'energy'])), got {wrong[0]!r}; "
            "for plain senses and a reference point of your own use nasenergy.pareto.hypervolume")


def search_hypervolume(points: np.ndarray | Sequence[Sequence[float]],
                       objectives: Sequence[SearchObjective]) -> float:
    """The hypervolume of ``points`` under the search's convention.

    The hypervolume is computed (by `hypervolume`, the one routine) on (accuracy %, throughput
    img/s, energy efficiency img/J = 1 / energy) against the fixed reference point (0, 0, 0): every
    objective is bounded below by a physical zero, so the reference is the same for every run, every
    space and every moment of a run, and curves of different runs are comparable. Turning energy
    into its reciprocal keeps the Pareto front unchanged (a monotone map).

    Args:
        points: ``(n, n_objectives)`` in the objectives' own units (energy in J/img).
        objectives: the `SearchObjective` of each column.

    Returns:
        The dominated volume in the product of the objectives' ``hv_unit``; rows with NaN or a
        non-positive energy are ignored.

    Raises:
        ParetoError: ``objectives`` are not `SearchObjective` objects (e.g. `NAS_OBJECTIVES`).
    """
    _require_search_objectives(objectives)
    pts = _efficiency_points(points, objectives)
    return hypervolume(pts, [SEARCH_HV_REFERENCE] * len(objectives), ["maximize"] * len(objectives))
