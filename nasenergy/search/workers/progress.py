"""The live progress bar: full evaluations out of the budget, with the run's counts (candidates
seen, filtered, duplicates, not in the recorded profile) and the front's size and hypervolume.

It reads the study and the claims (so it counts every worker's candidates, not only this
process's) at most every `REFRESH_S` seconds.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.objectives import SearchObjective
from nasenergy.pareto import ParetoFront
from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.quality import region_of
from nasenergy.search.sampling.study import proposed_trials
from nasenergy.search.storage.claims import ClaimStore

if TYPE_CHECKING:
    from optuna import Study

REFRESH_S = 0.5


class Progress:
    """A tqdm bar (or nothing when ``enabled`` is false).

    Args:
        study: the run's study.
        claims: its claims.
        objectives: the run's objectives.
        enabled: show the bar (``--quiet`` turns it off).
    """

    def __init__(self, study: Study, claims: ClaimStore, objectives: tuple[SearchObjective, ...], *, enabled: bool,
                 floor: tuple[float | None, str] = (None, ""), training_dir: Path | None = None) -> None:
        self._floor = floor
        self._training_dir = training_dir
        self._study = study
        self._claims = claims
        self._objectives = objectives
        self._last = 0.0
        self._bar = None
        if enabled:
            from tqdm import tqdm

            status = claims.status()
            self._bar = tqdm(total=status.budget, initial=status.done, unit="eval", desc="full evaluations", dynamic_ncols=True)

    def refresh(self, *_: Any, force: bool = False) -> None:
        """Update the bar (throttled unless ``force``)."""
        if self._bar is None or (not force and time.monotonic() - self._last < REFRESH_S):
            return
        self._last = time.monotonic()
        status = self._claims.status()
        trials = proposed_trials(self._study)
        outcomes = Counter(t.user_attrs.get(tr.OUTCOME) for t in trials)
        points = np.array(
            [t.values for t in trials if t.user_attrs.get(tr.OUTCOME) == oc.EVALUATED and t.values],
            dtype=float,
        ).reshape(-1, len(self._objectives))
        floor, floor_from = self._floor
        region = None
        if floor is not None:
            measured = [tr.measurement_of(t) or {} for t in trials]
            region = region_of(floor, floor_from, [m.get("throughput_img_per_s") for m in measured],
                               [m.get("energy_j_per_img") for m in measured])
        if region is not None:
            points = points[region.feasible_mask(points, self._objectives)]
        front = ParetoFront.from_points(points, self._objectives)
        self._bar.total = status.budget
        self._bar.n = status.done
        counts: dict[str, int | str] = {"seen": len(trials), "filtered": outcomes[oc.FILTERED],
                                        "dup": outcomes[oc.DUPLICATE]}
        if outcomes[oc.NOT_RECORDED]:  # candidates a partial recorded profile cannot measure
            counts["not_recorded"] = outcomes[oc.NOT_RECORDED]
        if outcomes[oc.INFEASIBLE]:  # networks that cannot learn
            counts["infeasible"] = outcomes[oc.INFEASIBLE]
        running = self._running_trainings()
        if running:  # --oracle train: the epochs of the trainings under way
            counts["training"] = running
        quality = {} if region is None else {"quality": f"{region.volume(points, self._objectives):.4g}"}
        self._bar.set_postfix(ordered_dict=counts, front=len(front), **quality, refresh=False)
        self._bar.refresh()

    def _running_trainings(self) -> str:
        """``epoch/epochs`` of each training under way (``--oracle train``), comma-separated."""
        if self._training_dir is None or not self._training_dir.is_dir():
            return ""
        parts = []
        for path in sorted(self._training_dir.glob("running-*.json")):
            try:
                status = json.loads(path.read_text())
                parts.append(f"{int(status['epoch'])}/{int(status['epochs'])}ep")
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return ",".join(parts)

    def close(self) -> None:
        """Draw the final state and release the terminal line."""
        if self._bar is not None:
            self.refresh(force=True)
            self._bar.close()
            self._bar = None
