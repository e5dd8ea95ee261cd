"""Pareto dominance, non-dominated sets and exact hypervolume for a few objectives.

Every objective has a sense, ``"maximize"`` or ``"minimize"``. Internally all points are turned
into a minimisation problem by negating the maximised objectives, so one set of rules holds
everywhere:

* ``a`` dominates ``b`` when ``a`` is at least as good as ``b`` in every objective and strictly
  better in at least one. Equal points do not dominate each other, so ties all stay on a front.
* NaN: a point with NaN in any objective is never on a front and never dominates anything, and
  nothing dominates it (comparisons with an unknown figure are undecided). `non_dominated_mask`
  marks such rows ``False``; `hypervolume` ignores them; `ParetoFront.add` raises `ParetoError`.

Example:
    >>> front = ParetoFront(NAS_OBJECTIVES)
    >>> front.add((93.1, 5200.0, 0.0021), key="cell-17")
    True
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
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
ACCURACY, THROUGHPUT, ENERGY = NAS_OBJECTIVES

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
    point: Sequence[float], front: np.ndarray | Sequence[Sequence[float]], senses: SensesLike
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
        front._keys = [keys[i] if keys is not None else None for i in np.flatnonzero(mask)]
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

    def dominating_index(self, point: Sequence[float]) -> int | None:
        """The row of the front that dominates ``point``, or ``None``."""
        return dominating_index(point, self._points, self._senses)

    def is_dominated(self, point: Sequence[float]) -> bool:
        """Whether the front dominates ``point``."""
        return self.dominating_index(point) is not None

    def add(self, point: Sequence[float], key: Hashable | None = None) -> bool:
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
