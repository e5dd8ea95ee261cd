"""The Pareto front kept up to date as points arrive (`ParetoFront`), and reading objective
points from rows.

Dominance and non-dominated sets live in `nasenergy.pareto_dominance`, the hypervolume in
`nasenergy.pareto_volume`; their public names are re-exported here, so ``nasenergy.pareto`` stays
the one import for the Pareto utilities. The rules (senses, ties, NaN) are
`nasenergy.pareto_dominance`'s.

Example:
    >>> front = ParetoFront(NAS_OBJECTIVES)
    >>> front.add((93.1, 5200.0, 0.0021), key="cell-17")
    True
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto_dominance import (
    ACCURACY,
    ENERGY,
    NAS_OBJECTIVES,
    SENSES,
    THROUGHPUT,
    Objective,
    ParetoError,
    Sense,
    SensesLike,
    _as_matrix,
    _as_vector,
    _signs,
    dominates,
    dominating_index,
    is_dominated_by_front,
    non_dominated_mask,
    senses_of,
    to_minimization,
)
from nasenergy.pareto_volume import (
    SEARCH_HV_REFERENCE,
    _require_search_objectives,
    hypervolume,
    search_hypervolume,
)

__all__ = [
    "ACCURACY", "ENERGY", "NAS_OBJECTIVES", "SEARCH_HV_REFERENCE", "SENSES", "THROUGHPUT", "Objective",
    "ParetoError", "ParetoFront", "Sense", "SensesLike", "dominates", "dominating_index", "hypervolume",
    "is_dominated_by_front", "non_dominated_mask", "points_of", "search_hypervolume",
    "search_hypervolume_curve", "senses_of", "to_minimization",
]


def points_of(rows: Sequence[Mapping[str, object]], objectives: Sequence[SearchObjective]) -> np.ndarray:
    """The objective values of ``rows`` (by each objective's ``column``) as an
    ``(n, n_objectives)`` float array (NaN where a value is missing)."""
    out = np.full((len(rows), len(objectives)), np.nan)
    for i, row in enumerate(rows):
        for j, obj in enumerate(objectives):
            value = row.get(obj.column)
            if value is not None and value != "":
                out[i, j] = float(value)  # type: ignore[arg-type]
    return out



def search_hypervolume_curve(points_in_order: np.ndarray | Sequence[Sequence[float]],
                             objectives: Sequence[SearchObjective]) -> np.ndarray:
    """The `search_hypervolume` after each of the points in order (the k-th value uses the first
    k+1); rows with NaN are skipped (the value stays).

    Raises:
        ParetoError: ``objectives`` are not `SearchObjective` objects (e.g. `NAS_OBJECTIVES`).
    """
    _require_search_objectives(objectives)
    pts = np.asarray(points_in_order, dtype=float).reshape(-1, len(objectives))
    out = np.zeros(len(pts))
    front = ParetoFront(objectives)
    hv = 0.0
    for k, p in enumerate(pts):
        if not np.isnan(p).any() and front.add(p):
            hv = front.search_hypervolume()
        out[k] = hv
    return out


class ParetoFront:
    """A Pareto front kept up to date as points arrive.

    Each point may carry a key (e.g. an architecture string or trial number). Equal points are all
    kept; a point with a missing objective (None or NaN) is refused by `add` with a `ParetoError`
    (`extend` and `from_points` leave such rows off the front instead).

    The search's fronts are built from `nasenergy.objectives.SearchObjective` objects (their senses
    come from `nasenergy.objectives.OBJECTIVES`); `search_hypervolume` then gives the search's
    hypervolume of the front.

    Args:
        objectives: the senses (strings), `Objective` objects or `SearchObjective` objects, in
            column order.
    """

    def __init__(self, objectives: SensesLike) -> None:
        self._senses = senses_of(objectives)
        self._objectives = tuple(objectives)
        self._names = tuple(
            o.name if isinstance(o, (Objective, SearchObjective)) else f"objective_{i}"
            for i, o in enumerate(objectives)
        )
        self._signs = _signs(self._senses)
        self._points = np.empty((0, len(self._senses)))
        self._keys: list[Hashable | None] = []

    @classmethod
    def from_points(
        cls,
        points: np.ndarray | Sequence[Sequence[float]],
        objectives: SensesLike,
        keys: Sequence[Hashable | None] | None = None,
    ) -> ParetoFront:
        """A front of the non-dominated points among ``points`` (with their ``keys``)."""
        front = cls(objectives)
        pts = _as_matrix(points, len(front._senses))
        if keys is not None and len(keys) != len(pts):
            raise ParetoError(f"got {len(keys)} keys for {len(pts)} points")
        mask = non_dominated_mask(pts, front._senses)
        front._points = pts[mask].copy()
        front._keys = [keys[int(i)] if keys is not None else None for i in np.flatnonzero(mask)]
        return front

    @property
    def senses(self) -> tuple[str, ...]:
        """The objectives' senses, in column order."""
        return self._senses

    @property
    def names(self) -> tuple[str, ...]:
        """The objectives' names (``objective_<i>`` where only senses were given)."""
        return self._names

    @property
    def points(self) -> np.ndarray:
        """A copy of the front's points, shape ``(len(self), n_objectives)``."""
        return self._points.copy()

    @property
    def keys(self) -> list[Hashable | None]:
        """The keys of the front's points, in row order."""
        return list(self._keys)

    def __len__(self) -> int:
        return len(self._points)

    def __iter__(self) -> Iterator[tuple[Hashable | None, tuple[float, ...]]]:
        """Pairs ``(key, point)`` in row order."""
        return iter(zip(self._keys, (tuple(map(float, p)) for p in self._points)))

    def dominating_index(self, point: Sequence[float] | np.ndarray) -> int | None:
        """The row of the front that dominates ``point``, or ``None``."""
        return dominating_index(point, self._points, self._senses)

    def is_dominated(self, point: Sequence[float] | np.ndarray) -> bool:
        """Whether the front dominates ``point``."""
        return self.dominating_index(point) is not None

    def add(self, point: Sequence[float] | np.ndarray, key: Hashable | None = None) -> bool:
        """Offer a point; it joins the front unless something on the front dominates it.

        Points it dominates leave the front.

        Returns:
            Whether the point joined the front.

        Raises:
            ParetoError: an objective is missing (``None`` or NaN): such a point can be compared
                with nothing, so it is refused rather than silently left off the front.
        """
        p = _as_vector(point, len(self._senses))
        if np.isnan(p).any():
            missing = ", ".join(self._names[i] for i in np.flatnonzero(np.isnan(p)))
            raise ParetoError(
                f"point {tuple(point)} has no value for {missing}; a front compares every objective, so "
                "leave a figure you cannot measure out of its objectives (e.g. ParetoFront(NAS_OBJECTIVES[:2]))"
            )
        if self.is_dominated(p):
            return False
        if len(self._points):
            pm = p * self._signs
            fm = self._points * self._signs
            beaten = np.all(pm <= fm, axis=1) & np.any(pm < fm, axis=1)
            keep = ~beaten
            self._points = self._points[keep]
            self._keys = [k for k, kp in zip(self._keys, keep) if kp]
        self._points = np.vstack([self._points, p[None, :]])
        self._keys.append(key)
        return True

    def extend(self, points: np.ndarray | Sequence[Sequence[float]],
               keys: Sequence[Hashable | None] | None = None) -> bool:
        """Offer several points at once; rows with NaN never join (they compare with nothing).

        The front's rows stay in order (earlier members first, then the new ones that joined).

        Returns:
            Whether the front changed.
        """
        pts = _as_matrix(points, len(self._senses))
        if len(pts) == 0:
            return False
        if keys is not None and len(keys) != len(pts):
            raise ParetoError(f"got {len(keys)} keys for {len(pts)} points")
        merged = np.vstack([self._points, pts])
        merged_keys = [*self._keys, *(keys if keys is not None else [None] * len(pts))]
        mask = non_dominated_mask(merged, self._senses)
        changed = bool(mask[len(self._points):].any()) or not bool(mask[: len(self._points)].all())
        self._points = merged[mask]
        self._keys = [merged_keys[i] for i in np.flatnonzero(mask)]
        return changed

    def hypervolume(self, reference: Sequence[float]) -> float:
        """The front's exact hypervolume against ``reference`` (see `hypervolume`)."""
        return hypervolume(self._points, reference, self._senses)

    def search_hypervolume(self) -> float:
        """The front's hypervolume under the search's convention (see `search_hypervolume`).

        Raises:
            ParetoError: the front was not built from `SearchObjective` objects.
        """
        if not all(isinstance(o, SearchObjective) for o in self._objectives):
            raise ParetoError("search_hypervolume needs a front of SearchObjective objectives")
        return search_hypervolume(self._points, self._objectives)  # type: ignore[arg-type]
