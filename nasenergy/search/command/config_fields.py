"""The settings of one search run as a frozen dataclass (`SearchSettings`): their fields, their
defaults, their normal form, and what follows from the fields alone.

`nasenergy.search.command.config.SearchConfig` adds to it the study the settings name
(`nasenergy.search.command.study_identity`), their validation (`nasenergy.search.command.config_checks`) and their
``config.json`` form.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.filter.registry import FILTERS
from nasenergy.hardware.boards import DEFAULT_BOARD_POLICY, DEFAULT_TOLERANCE_FRAC
from nasenergy.hardware.meter_settings import DEFAULT_METER_SETTING
from nasenergy.hardware.recorded import default_profile
from nasenergy.hardware.select import resolve_hardware
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.search.command.config_defaults import (
    DEFAULT_PATIENCE,
    DEFAULT_SEARCH_METRIC,
    MAX_CANDIDATES_PER_EVALUATION,
    default_target_recall,
)
from nasenergy.search.command.filter_features import DEFAULT_FILTER_FEATURES, check_filter_features
from nasenergy.search.loop.filter_yield import YIELD_AFTER, YIELD_TOP
from nasenergy.search.loop.redirect import REDIRECT_AFTER
from search_spaces import canonical_dataset


@dataclass(frozen=True)
class SearchSettings:
    """Everything one search run needs to know (the fields of `nasenergy.search.command.config.SearchConfig`).

    Attributes:
        budget: the number of full accuracy evaluations of the study (over all workers).
        space: ``tss``, ``sss`` or a registered space (`search_spaces.register_space`).
        dataset: ``cifar10``, ``cifar100`` or ``ImageNet16-120``, in any spelling
            `search_spaces.canonical_dataset` takes (stored as that name).
        objectives: a non-empty subset of ``accuracy``, ``throughput``, ``energy``, in that order.
        benchmark: the accuracy benchmark (file or folder); ``None`` uses the installed cache, else
            NATS-Bench in ``$TORCH_HOME``, else the embedded tables (`nasenergy.oracles.embedded`).
        search_metric: the accuracy searched on, ``SPLIT/EPOCHS`` (``x-valid/12``, ``test/200``,
            ...; see `parse_search_metric`).
        estimate: how the oracle charges cells without a recorded training time: ``auto``,
            ``fit``, ``device`` or ``none`` (see `nasenergy.oracles.lookup`).
        hardware: the meter: ``auto``, ``cuda``, ``cpu``, ``recorded`` or a registered one
            (`nasenergy.hardware.registry`).
        profile: a recorded profile to replay instead of the space's shipped one (with
            ``hardware`` ``recorded``, or ``auto``, which it then resolves to ``recorded``); its
            content digest defines the study (`profile_digest`).
        precision: ``fp32``, ``tf32``, ``fp16`` or ``bf16``.
        batch_size: images per forward pass of the cheap measurement.
        filter: the utilization filter: ``dominance``, ``threshold``, ``none`` or a registered one
            (`nasenergy.filter.registry`).
        target_recall: the share of would-be front members the filter aims to let through (0..1];
            ``None`` takes the filter's default in the space (`default_target_recall`: 0.95; 0.65
            for the dominance filter in the size space).
        filter_features: which features the accuracy model of the dominance filter and of
            screening reads: groups of `nasenergy.search.command.filter_features.FEATURE_GROUPS`
            (``measured``, ``size``, ``structure``, ``proxies``, ``proxies-live``); stored in
            their canonical order. Non-default groups define the study.
        dvfs: where the energy-optimal clock comes from, a registered DVFS mode
            (`nasenergy.search.command.dvfs_modes`): ``auto``, ``modelled``, ``measured``, ``recorded`` or
            ``none`` (score at the default clock).
        allow_clock_control: opt-in to changing the GPU's clocks (needed for ``dvfs=measured``).
        sampler: a registered sampler (`nasenergy.search.sampling.samplers`): ``tpe``, ``nsga2``, ``random`` or one of yours.
        seed: the base seed of the samplers (worker k of the study uses ``seed + k``).
        storage: an RDB URL shared by workers (``postgresql://...``); ``None`` for the local
            journal file in the run folder. Its password is never written (`public_dict`).
        study_name: the Optuna study name; ``None`` derives one from the settings.
        out: the run folder; ``None`` means ``runs/<study name>``.
        workers: worker processes this command starts.
        max_candidates: safety cap on the study's total candidates; ``None`` means
            ``MAX_CANDIDATES_PER_EVALUATION * budget``, divided by the share of cells a partial
            recorded profile answers (`nasenergy.search.command.coverage.candidate_cap`).
        screen: screening: at least this many new candidates are measured per full evaluation;
            of those the filter admitted, the one of largest expected hypervolume improvement is
            evaluated, a few of the next best wait for the next screening and the others are
            recorded as screened out (`nasenergy.search.loop.screening`);
            ``1`` evaluates every admitted candidate.
        patience: stall guard: stop when the study's last ``patience`` candidates (finished ones,
            in trial order) brought no new full evaluation; ``0`` turns it off. Counted over the
            whole study, so a resumed run that stopped this way stops again at once unless the
            value is raised.
        lease_s: seconds after its last heartbeat that a silent worker counts as dead and its
            claimed evaluation may be taken over by another worker.
        db_retry_s: how long a worker rides out a database outage (connection refused or reset, a
            restart, a failover), retrying with backoff, before it gives up (exit status 6).
        quiet: no progress bar and no summary lines.
        min_accuracy: the accuracy (%) a user needs: a network below it is infeasible (Optuna's
            constraints tell the sampler), never on the front, and the floor of the quality
            measure (`nasenergy.quality`); ``None``: no constraint, the quality floor is the median
            of the space where the benchmark knows it.
        boards: with worker processes on several GPUs of this host, what to do when the boards'
            calibration ratios differ by more than ``board_tolerance_pct``: ``normalise`` every
            figure to the first board, ``refuse`` the run, or ``ignore`` (`nasenergy.search.loop.board_step`).
        board_tolerance_pct: the boards' tolerance, percent.
        meter_setting: how much work a live GPU measurement does per candidate
            (`nasenergy.hardware.meter_settings`): ``fast`` (one energy window whose own passes
            give the throughput) or ``full`` (timed throughput repeats, then three energy
            windows); the recorded and CPU meters ignore it.
        filter_yield_after: the filter yields after this many rejections in a row (of one
            worker) to a candidate among the most promising ``filter_yield_top`` of them, and
            after three times as many to the next one (`nasenergy.search.loop.filter_yield`), from the
            start; ``0``: the filter never yields; ``None`` (the default): only in a budget rescue,
            then after `YIELD_AFTER`.
        filter_yield_top: the share of the rejected candidates a yielded one must rank among, (0, 1].
        redirect_after: after this many proposals of known networks in a row (of one worker),
            the worker enqueues unseen networks near the last one (`nasenergy.search.loop.redirect`),
            from the start; ``0``: never; ``None`` (the default): only in a budget rescue, then
            after `REDIRECT_AFTER`.
        oracle: where accuracies come from: ``benchmark`` (a NATS-Bench lookup) or ``train``
            (real training of each evaluated network on ``data``, `nasenergy.train`).
        data: with ``oracle`` ``train``: the data (``digits``, a CIFAR folder, an image folder
            or an ``.npz``; `nasenergy.train.load_data`); the run's ``dataset`` is then its
            registered name (`nasenergy.train.datasets.data_dataset_name`).
        epochs: with ``oracle`` ``train``: epochs of NATS-Bench's recipe per training.
        val_fraction: with ``oracle`` ``train``: the share of the training split held out for
            validation where the data has no validation split of its own (split seed 0:
            every run on the same data validates on the same images).
        budget_rescue: when the stall guard's condition first holds, switch the budget keeping
            settings left at ``None`` on instead of stopping (`nasenergy.search.loop.rescue`); ``False``:
            stop there.
    """

    budget: int = 200
    space: str = "tss"
    dataset: str = "cifar10"
    objectives: tuple[str, ...] = OBJECTIVE_NAMES
    benchmark: str | None = None
    search_metric: str = DEFAULT_SEARCH_METRIC
    estimate: str = "auto"
    hardware: str = "auto"
    profile: str | None = None
    precision: str = "fp16"
    batch_size: int = 1024
    filter: str = "dominance"
    target_recall: float | None = None
    filter_features: tuple[str, ...] = DEFAULT_FILTER_FEATURES
    dvfs: str = "auto"
    allow_clock_control: bool = False
    sampler: str = "tpe"
    seed: int = 0
    storage: str | None = None
    study_name: str | None = None
    out: str | None = None
    workers: int = 1
    max_candidates: int | None = None
    screen: int = 1
    patience: int = DEFAULT_PATIENCE
    lease_s: float = 60.0
    db_retry_s: float = 120.0
    quiet: bool = False
    min_accuracy: float | None = None
    boards: str = DEFAULT_BOARD_POLICY
    board_tolerance_pct: float = 100.0 * DEFAULT_TOLERANCE_FRAC
    meter_setting: str = DEFAULT_METER_SETTING
    filter_yield_after: int | None = None
    filter_yield_top: float = YIELD_TOP
    redirect_after: int | None = None
    budget_rescue: bool = True
    oracle: str = "benchmark"
    data: str | None = None
    epochs: int = 12
    val_fraction: float = 0.2

    def __post_init__(self) -> None:
        if self.target_recall is None:  # the filter's own default, so it is stored and shown resolved
            object.__setattr__(self, "target_recall", default_target_recall(self.filter, self.space))
        try:  # the dataset's one name, whatever the spelling; validate refuses an unknown one
            object.__setattr__(self, "dataset", canonical_dataset(self.dataset))
        except UsageError:
            pass
        if self.profile is not None and self.hardware == "auto":  # a profile is replayed, not measured
            object.__setattr__(self, "hardware", "recorded")
        groups = self.filter_features
        if isinstance(groups, str):
            groups = [g for g in groups.split(",") if g.strip()]
        try:  # canonical order; validate refuses bad names
            object.__setattr__(self, "filter_features", check_filter_features(groups))
        except UsageError:
            object.__setattr__(self, "filter_features", tuple(groups))

    def keeping_in_effect(self, rescued: bool) -> tuple[int, int]:
        """``(redirect_after, filter_yield_after)`` as a worker applies them: an explicit value
        always; a ``None`` one 0 (off) before a budget rescue and the shipped constant
        (`REDIRECT_AFTER`, `YIELD_AFTER`) in one (`nasenergy.search.loop.rescue`)."""
        def resolved(value: int | None, constant: int) -> int:
            return int(value) if value is not None else (constant if rescued else 0)

        return resolved(self.redirect_after, REDIRECT_AFTER), resolved(self.filter_yield_after, YIELD_AFTER)

    @property
    def rescue_possible(self) -> bool:
        """Whether a budget rescue can switch anything on: ``budget_rescue`` with at least one
        budget keeping setting left at ``None``."""
        return self.budget_rescue and (self.redirect_after is None or self.filter_yield_after is None)

    def budget_keeping_changed(self) -> dict[str, float]:
        """The settings that keep the budget spendable (`BUDGET_KEEPING`) that differ from their
        defaults, by their study-name tag (e.g. ``{"redirect": 0}``): they join the default study
        name and the study-defining settings, so runs that differ in them never resume each other,
        while runs at the defaults keep their names."""
        return {tag: getattr(self, name) for name, tag in BUDGET_KEEPING.items()
                if getattr(self, name) != FIELD_DEFAULTS[name]}

    @property
    def reads_filter_features(self) -> bool:
        """Whether an accuracy model reads `filter_features`: a filter that takes the search's
        ``cheap_columns`` (``dominance``), or screening (``--screen`` above 1)."""
        kind = FILTERS.get(self.filter) if self.filter in FILTERS else None
        return (kind is not None and "cheap_columns" in kind.search_options) or self.screen > 1

    @property
    def candidate_cap(self) -> int:
        """The safety cap on the study's total candidates (before any coverage scaling)."""
        return self.max_candidates or MAX_CANDIDATES_PER_EVALUATION * self.budget

    def replayed_profile(self) -> str | None:
        """The recorded profile this run replays: ``profile`` when given, else the shipped profile
        of the space where the hardware is (or ``auto`` resolves to) ``recorded``; ``None`` for a
        run that measures. A study records its content, so that a run never resumes with other
        figures than it started with (e.g. after the shipped profile grew)."""
        if self.profile is not None:
            return self.profile
        if resolve_hardware(self.hardware, announce=None, space_name=self.space) != "recorded":
            return None
        shipped = default_profile(self.space)
        return str(shipped) if shipped.is_file() else None


BUDGET_KEEPING: dict[str, str] = {
    "filter_yield_after": "yield",
    "filter_yield_top": "yieldtop",
    "redirect_after": "redirect",
}
"""The settings that keep a budget spendable, by their tag in the default study name."""
FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(SearchSettings)}
"""Every field's default, by name."""
