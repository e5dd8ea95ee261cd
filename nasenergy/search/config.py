"""The settings of one search run, their defaults and their validation.

A `SearchConfig` is what the command line builds and what `run_search` consumes. It is written to
``config.json`` in the run folder; a resumed run (or a second worker joining through a shared
storage) must agree with the stored settings in every field of `STUDY_DEFINING` (the ones that
change what the objective values mean), and may raise, never lower, the budget.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.filter.registry import FILTERS
from nasenergy.hardware.boards import BOARD_POLICIES, DEFAULT_BOARD_POLICY, DEFAULT_TOLERANCE_FRAC
from nasenergy.hardware.meter_settings import DEFAULT_METER_SETTING, METER_SETTINGS
from nasenergy.hardware.recorded import default_profile
from nasenergy.hardware.registry import AUTO, METERS, hardware_choices
from nasenergy.hardware.select import resolve_hardware
from nasenergy.measurement import PRECISIONS
from nasenergy.objectives import OBJECTIVE_NAMES, OBJECTIVES
from nasenergy.oracles.lookup import ESTIMATE_MODES
from search_spaces import DATASETS, canonical_dataset, space_names
from nasenergy.oracles.datasets import SPLITS
from nasenergy.search.credentials import mask_url
from nasenergy.search.dvfs_modes import DVFS_MODES
from nasenergy.search.filter_features import DEFAULT_FILTER_FEATURES, UNNAMED_FILTER_FEATURES, check_filter_features
from nasenergy.search.filter_features import suffix as filter_features_suffix
from nasenergy.search.filter_yield import YIELD_AFTER, YIELD_TOP
from nasenergy.search.redirect import REDIRECT_AFTER

SAMPLERS: tuple[str, ...] = ("tpe", "nsga2", "random")
ESTIMATES: tuple[str, ...] = ESTIMATE_MODES
"""Cost estimation for benchmark cells without a recorded training time (`nasenergy.oracles.lookup`)."""
_REGISTERED: dict[str, Any] = {"SPACES": space_names, "HARDWARE": hardware_choices, "FILTERS": FILTERS.names}
"""``SPACES``, ``HARDWARE`` and ``FILTERS`` are read from their registries when asked for (module
``__getattr__``), so a space, meter or filter registered later is a valid choice."""
DEFAULT_SEARCH_METRIC = "x-valid/12"
"""The accuracy the search optimises, ``SPLIT/EPOCHS``: NATS-Bench's 12-epoch validation accuracy."""

STUDY_DEFINING: tuple[str, ...] = (
    "space",
    "dataset",
    "objectives",
    "precision",
    "batch_size",
    "filter",
    "target_recall",
    "dvfs",
    "min_accuracy",
)
"""Fields a resumed run or a joining worker must share with the stored study."""

MAX_CANDIDATES_PER_EVALUATION = 50
"""Default safety cap: at most this many candidates per full evaluation of the budget."""

DEFAULT_PATIENCE = 10 * MAX_CANDIDATES_PER_EVALUATION
"""Default stall guard (500): stop once this many consecutive candidates (duplicates, networks
outside a recorded profile, filtered networks) brought no new full evaluation. In the
200-evaluation runs of ``experiments/search_efficiency.py``, runs that finished their budget never
went more than 48 candidates between two full evaluations on the profile of deployed networks (about
130 on the earlier profile of networks as built), while runs that crawled (TPE re-proposing networks it had seen or that the threshold filter
rejects) went 500 to 2,300 candidates between evaluations, for thousands of candidates; 500 leaves
a fourfold margin on the first and stops the second long before the candidate cap."""


MAX_SCREEN = 64
"""The most candidates ``--screen`` may gather per full evaluation."""


def default_target_recall(filter_mode: str) -> float:
    """The filter's target recall when ``--target-recall`` is not given: its registered
    `nasenergy.filter.registry.FilterKind.default_target_recall` (0.95 for an unknown mode).

    The built-in defaults: the dominance filter's 0.95 comes from the target-recall sensitivity
    study of ``experiments/search_efficiency.py`` (TPE, 200 full evaluations, CIFAR-10, 20 seeds)
    on the recorded H200 profile of deployed networks (5,795 of 6,040 classes): the share of the
    true front's points a run matched (front recall) was 0.959 at 0.95, 0.947 at 0.8 (3 of 20
    runs stopped as stalled) and 0.808 at 0.5 (all 20 stalled), against 0.947 for TPE alone; on
    the complete profile (all 6,040) 0.952, 0.950 (3 stalled), 0.809 (all stalled) and 0.947.
    With the path features and the locally calibrated bound (``local_margin``) the order holds:
    0.955, 0.941 (12 stalled), 0.849 (all stalled) against 0.947; on CIFAR-100 (10 seeds, data
    the choice did not see) 0.745 at 0.95 (none stalled), 0.695 at 0.8 (5 of 10 stalled), 0.527
    without a filter. 0.95 never stalled, so the main
    job spends its budget. (On the earlier profile of networks as built, whose figures were not
    those of the deployed networks, 0.8 had been the better choice.) The threshold filter keeps
    its own 0.95 (it learns a plain utilization cut-off; lower recalls cut more of the front).
    ``none`` ignores it.
    """
    return FILTERS.get(filter_mode).default_target_recall if filter_mode in FILTERS else 0.95


def __getattr__(name: str) -> Any:
    """``SPACES``, ``HARDWARE``, ``FILTERS`` and ``DEFAULT_TARGET_RECALL``, read from the registries."""
    if name in _REGISTERED:
        return _REGISTERED[name]()
    if name == "DEFAULT_TARGET_RECALL":
        return {mode: FILTERS.get(mode).default_target_recall for mode in FILTERS.names()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_STUDY_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class SearchConfig:
    """Everything one search run needs to know.

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
            ``None`` takes the filter's default (`default_target_recall`).
        filter_features: which features the accuracy model of the dominance filter and of
            screening reads: groups of `nasenergy.search.filter_features.FEATURE_GROUPS`
            (``measured``, ``size``, ``structure``, ``proxies``, ``proxies-live``); stored in
            their canonical order. Non-default groups define the study.
        dvfs: where the energy-optimal clock comes from, a registered DVFS mode
            (`nasenergy.search.dvfs_modes`): ``auto``, ``modelled``, ``measured``, ``recorded`` or
            ``none`` (score at the default clock).
        allow_clock_control: opt-in to changing the GPU's clocks (needed for ``dvfs=measured``).
        sampler: ``tpe``, ``nsga2`` or ``random``.
        seed: the base seed of the samplers (worker k of the study uses ``seed + k``).
        storage: an RDB URL shared by workers (``postgresql://...``); ``None`` for the local
            journal file in the run folder. Its password is never written (`public_dict`).
        study_name: the Optuna study name; ``None`` derives one from the settings.
        out: the run folder; ``None`` means ``runs/<study name>``.
        workers: worker processes this command starts.
        max_candidates: safety cap on the study's total candidates; ``None`` means
            ``MAX_CANDIDATES_PER_EVALUATION * budget``, divided by the share of cells a partial
            recorded profile answers (`nasenergy.search.coverage.candidate_cap`).
        screen: screening: at least this many new candidates are measured per full evaluation;
            of those the filter admitted, the one of largest expected hypervolume improvement is
            evaluated, a few of the next best wait for the next screening and the others are
            recorded as screened out (`nasenergy.search.screening`);
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
            figure to the first board, ``refuse`` the run, or ``ignore`` (`nasenergy.search.board_step`).
        board_tolerance_pct: the boards' tolerance, percent.
        meter_setting: how much work a live GPU measurement does per candidate
            (`nasenergy.hardware.meter_settings`): ``fast`` (one energy window whose own passes
            give the throughput) or ``full`` (timed throughput repeats, then three energy
            windows); the recorded and CPU meters ignore it.
        filter_yield_after: the filter yields after this many rejections in a row (of one
            worker) to a candidate among the most promising ``filter_yield_top`` of them, and
            after three times as many to the next one (`nasenergy.search.filter_yield`), from the
            start; ``0``: the filter never yields; ``None`` (the default): only in a budget rescue,
            then after `YIELD_AFTER`.
        filter_yield_top: the share of the rejected candidates a yielded one must rank among, (0, 1].
        redirect_after: after this many proposals of known networks in a row (of one worker),
            the worker enqueues unseen networks near the last one (`nasenergy.search.redirect`),
            from the start; ``0``: never; ``None`` (the default): only in a budget rescue, then
            after `REDIRECT_AFTER`.
        budget_rescue: when the stall guard's condition first holds, switch the budget keeping
            settings left at ``None`` on instead of stopping (`nasenergy.search.rescue`); ``False``:
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

    def __post_init__(self) -> None:
        if self.target_recall is None:  # the filter's own default, so it is stored and shown resolved
            object.__setattr__(self, "target_recall", default_target_recall(self.filter))
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

    @property
    def resolved_study_name(self) -> str:
        """The study name: ``study_name`` when given, else `default_study_name`."""
        return self.study_name or self.default_study_name

    @property
    def default_study_name(self) -> str:
        """A name made of the settings that define the study (`STUDY_DEFINING`), the sampler and the
        seed, e.g. ``tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0``: runs
        that differ in any of them never share a default study (or run folder)."""
        objectives = ".".join(OBJECTIVES[o].short if o in OBJECTIVES else o for o in self.objectives)
        filt = "nofilter" if self.filter == "none" else f"{self.filter}{self.target_recall:g}"
        profile = f"-profile.{profile_digest(self.profile)[:8]}" if self.profile is not None else ""
        screen = f"-screen{self.screen}" if self.screen != 1 else ""
        floor = f"-min{self.min_accuracy:g}" if self.min_accuracy is not None else ""
        features = self._features_suffix()
        keeping = "".join(f"-{tag}{value:g}" for tag, value in self.budget_keeping_changed().items())
        return (f"{self.space}-{self.dataset}-{objectives}-{self.precision}-b{self.batch_size}-{filt}{features}-"
                f"dvfs.{self.dvfs}{profile}-{self.sampler}{screen}{floor}{keeping}-seed{self.seed}")

    def keeping_in_effect(self, rescued: bool) -> tuple[int, int]:
        """``(redirect_after, filter_yield_after)`` as a worker applies them: an explicit value
        always; a ``None`` one 0 (off) before a budget rescue and the shipped constant
        (`REDIRECT_AFTER`, `YIELD_AFTER`) in one (`nasenergy.search.rescue`)."""
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
                if getattr(self, name) != _FIELD_DEFAULTS[name]}

    def _features_suffix(self) -> str:
        """``-feat.GROUPS`` where an accuracy model reads `filter_features` and they are not
        `UNNAMED_FILTER_FEATURES` (empty for bad groups, which `validate` refuses)."""
        if not self.reads_filter_features:
            return ""
        try:
            return filter_features_suffix(self.filter_features)
        except UsageError:
            return ""

    @property
    def reads_filter_features(self) -> bool:
        """Whether an accuracy model reads `filter_features`: a filter that takes the search's
        ``cheap_columns`` (``dominance``), or screening (``--screen`` above 1)."""
        kind = FILTERS.get(self.filter) if self.filter in FILTERS else None
        return (kind is not None and "cheap_columns" in kind.search_options) or self.screen > 1

    @property
    def out_dir(self) -> Path:
        """The run folder."""
        return Path(self.out) if self.out else Path("runs") / self.resolved_study_name

    @property
    def candidate_cap(self) -> int:
        """The safety cap on the study's total candidates (before any coverage scaling)."""
        return self.max_candidates or MAX_CANDIDATES_PER_EVALUATION * self.budget

    def validate(self) -> "SearchConfig":
        """Check every value; return ``self``.

        Raises:
            UsageError: a value out of range or a bad combination, with a one-line message.
            DataNotFoundError: ``benchmark`` names a path that does not exist.
        """
        _choice("--space", self.space, space_names())
        _choice("--dataset", self.dataset, DATASETS)
        _choice("--hardware", self.hardware, METERS.choices(AUTO))
        _choice("--precision", self.precision, PRECISIONS)
        _choice("--filter", self.filter, FILTERS.choices())
        _choice("--dvfs", self.dvfs, DVFS_MODES.choices())
        _choice("--sampler", self.sampler, SAMPLERS)
        _choice("--estimate", self.estimate, ESTIMATES)
        if not self.objectives:
            raise UsageError(f"--objectives needs at least one of {', '.join(OBJECTIVE_NAMES)}")
        for name in self.objectives:
            _choice("--objectives", name, OBJECTIVE_NAMES)
        if len(set(self.objectives)) != len(self.objectives):
            raise UsageError(f"--objectives lists an objective twice: {','.join(self.objectives)}")
        parse_search_metric(self.search_metric)
        features = check_filter_features(self.filter_features)
        if features != DEFAULT_FILTER_FEATURES and not self.reads_filter_features:
            raise UsageError(f"--filter-features chooses what the accuracy model of --filter dominance and of "
                             f"--screen reads; --filter {self.filter} without --screen reads none")
        if FILTERS.get(self.filter).needs_accuracy and "accuracy" not in self.objectives:
            raise UsageError(
                f"--filter {self.filter} predicts accuracy, which is not among --objectives; use --filter none"
            )
        if self.budget < 1:
            raise UsageError(f"--budget must be at least 1, got {self.budget}")
        if self.batch_size < 1:
            raise UsageError(f"--batch-size must be at least 1, got {self.batch_size}")
        if not isinstance(self.target_recall, (int, float)) or not 0.0 < self.target_recall <= 1.0:
            raise UsageError(f"--target-recall must be in (0, 1], got {self.target_recall}")
        if self.seed < 0:
            raise UsageError(f"--seed must be non-negative, got {self.seed}")
        if not 1 <= self.workers <= 256:
            raise UsageError(f"--workers must be between 1 and 256, got {self.workers}")
        if self.max_candidates is not None and self.max_candidates < self.budget:
            raise UsageError(
                f"--max-candidates ({self.max_candidates}) must be at least --budget ({self.budget})"
            )
        if isinstance(self.screen, bool) or not isinstance(self.screen, int) or not 1 <= self.screen <= MAX_SCREEN:
            raise UsageError(f"--screen must be a whole number of candidates from 1 to {MAX_SCREEN}, got {self.screen!r}")
        if self.screen > 1 and "accuracy" not in self.objectives:
            raise UsageError("--screen ranks candidates by predicted accuracy: keep accuracy in --objectives")
        if self.min_accuracy is not None:
            if isinstance(self.min_accuracy, bool) or not isinstance(self.min_accuracy, (int, float)) \
                    or not 0.0 <= float(self.min_accuracy) < 100.0:
                raise UsageError(f"--min-accuracy must be an accuracy in percent, 0 to below 100, got {self.min_accuracy!r}")
            if "accuracy" not in self.objectives:
                raise UsageError("--min-accuracy constrains the accuracy: keep accuracy in --objectives")
        if self.patience < 0:
            raise UsageError(f"--patience must be 0 (off) or a positive number of candidates, got {self.patience}")
        if not self.lease_s >= 5.0:
            raise UsageError(f"--lease-s must be at least 5 seconds, got {self.lease_s}")
        if not 0.0 <= self.db_retry_s < float("inf"):
            raise UsageError(f"--db-retry-s must be 0 (no retry) or a number of seconds, got {self.db_retry_s}")
        for name in ("filter_yield_after", "redirect_after"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise UsageError(f"--{name.replace('_', '-')} must be 0 (off) or a whole number of candidates, "
                                 f"got {value!r}")
        top = self.filter_yield_top
        if isinstance(top, bool) or not isinstance(top, (int, float)) or not 0.0 < float(top) <= 1.0:
            raise UsageError(f"--filter-yield-top must be a share in (0, 1], got {top!r}")
        if not isinstance(self.budget_rescue, bool):
            raise UsageError(f"--budget-rescue must be on or off, got {self.budget_rescue!r}")
        _choice("--boards", self.boards, BOARD_POLICIES)
        _choice("--meter-setting", self.meter_setting, tuple(METER_SETTINGS))
        if not 0.0 <= self.board_tolerance_pct < 100.0:
            raise UsageError(f"--board-tolerance-pct must be in [0, 100), got {self.board_tolerance_pct}")
        if DVFS_MODES.get(self.dvfs).changes_clocks and not self.allow_clock_control:
            raise UsageError(f"--dvfs {self.dvfs} changes the GPU clocks; add --allow-clock-control to allow it")
        if self.study_name is not None and not _STUDY_NAME_RE.match(self.study_name):
            raise UsageError(
                f"--study-name must be 1-100 characters of letters, digits, '.', '_' or '-', "
                f"starting with a letter or digit; got {self.study_name!r}"
            )
        if self.benchmark is not None and not Path(self.benchmark).expanduser().exists():
            raise DataNotFoundError(f"--benchmark: {self.benchmark} does not exist")
        if self.profile is not None:
            if "path" not in METERS.get(self.hardware).context:  # the meter reads no profile file
                raise UsageError(f"--profile replays a recorded profile: it goes with --hardware recorded "
                                 f"(or auto), not {self.hardware}")
            if not Path(self.profile).is_file():
                raise DataNotFoundError(f"--profile: {self.profile} is not a file")
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise UsageError(f"--out: {self.out_dir} exists and is not a folder")
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict with the derived names filled in (``max_candidates`` stays
        ``None`` when not given: the effective cap depends on the meter, see
        `nasenergy.search.coverage.candidate_cap`)."""
        d = dataclasses.asdict(self)
        d["objectives"] = list(self.objectives)
        d["filter_features"] = list(self.filter_features)
        d["study_name"] = self.resolved_study_name
        d["out"] = str(self.out_dir)
        replayed = self.replayed_profile()
        if replayed is not None:  # the content of the figures replayed, given or shipped
            d["profile_sha256"] = profile_digest(replayed)
        return d

    def public_dict(self) -> dict[str, Any]:
        """`to_dict` with the storage URL's password masked: what ``config.json`` holds."""
        d = self.to_dict()
        d["storage"] = mask_url(self.storage)
        return d

    def study_defining(self) -> dict[str, Any]:
        """The fields of `STUDY_DEFINING` as a dict (objectives as a list)."""
        d = self.to_dict()
        defining = {k: d[k] for k in STUDY_DEFINING}
        if self.search_metric != DEFAULT_SEARCH_METRIC:  # studies made before the flag stay resumable
            defining["search_metric"] = self.search_metric
        if self.reads_filter_features and tuple(self.filter_features) != UNNAMED_FILTER_FEATURES:
            defining["filter_features"] = list(self.filter_features)  # studies made before the flag: without
        if "profile_sha256" in d:  # the same figures on every worker and on resuming, wherever the file lies
            defining["profile_sha256"] = d["profile_sha256"]
        for name in BUDGET_KEEPING:  # only when changed: studies made before the settings stay resumable
            if getattr(self, name) != _FIELD_DEFAULTS[name]:
                defining[name] = d[name]
        return defining

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

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SearchConfig":
        """Inverse of `to_dict`; unknown keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if "objectives" in kw:
            kw["objectives"] = tuple(kw["objectives"])
        if isinstance(kw.get("filter_features"), list):
            kw["filter_features"] = tuple(kw["filter_features"])
        kw.setdefault("filter_features", UNNAMED_FILTER_FEATURES)  # stored before the flag existed
        return cls(**kw)


BUDGET_KEEPING: dict[str, str] = {
    "filter_yield_after": "yield",
    "filter_yield_top": "yieldtop",
    "redirect_after": "redirect",
}
"""The settings that keep a budget spendable, by their tag in the default study name."""
_FIELD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(SearchConfig)}


def profile_digest(path: str) -> str:
    """The SHA-256 of a profile file's bytes (hex), read once per file and modification.

    Raises:
        DataNotFoundError: the file cannot be read.
    """
    p = Path(path)  # as given, like the recorded meter that reads it
    try:
        st = p.stat()
    except OSError:
        raise DataNotFoundError(f"--profile: {path} is not a file") from None
    return _digest(str(p.resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise DataNotFoundError(f"--profile: cannot read {path}: {exc.strerror or exc}") from None


def parse_objectives(text: str) -> tuple[str, ...]:
    """``"accuracy,energy"`` -> ``("accuracy", "energy")`` in canonical order.

    Raises:
        UsageError: an empty list, an unknown name or a repeated name.
    """
    names = tuple(p.strip().lower() for p in text.split(",") if p.strip())
    if not names:
        raise UsageError(f"--objectives needs at least one of {', '.join(OBJECTIVE_NAMES)}")
    for name in names:
        _choice("--objectives", name, OBJECTIVE_NAMES)
    if len(set(names)) != len(names):
        raise UsageError(f"--objectives lists an objective twice: {text}")
    return tuple(n for n in OBJECTIVE_NAMES if n in names)


def parse_search_metric(text: str) -> tuple[str, str]:
    """``"x-valid/12"`` -> ``("x-valid", "12")``: the split and the NATS schedule (epochs) of
    ``--search-metric``.

    Raises:
        UsageError: not ``SPLIT/EPOCHS``, or an unknown split.
    """
    split, sep, epochs = str(text).strip().partition("/")
    split = split.strip().lower().replace("_", "-")
    if not sep or not epochs.strip().isdigit() or int(epochs) < 1 or split not in (*SPLITS, "valid", "test"):
        raise UsageError(
            f"--search-metric: expected SPLIT/EPOCHS with SPLIT one of {', '.join(SPLITS)}, valid, test "
            f"(e.g. x-valid/12, test/200), got {text!r}"
        )
    return split, str(int(epochs))


def _choice(flag: str, value: str, choices: Collection[str]) -> None:
    if value not in choices:
        raise UsageError(f"{flag}: {value!r} is not one of {', '.join(choices)}")


def check_run_folder(config: SearchConfig) -> None:
    """Refuse a run folder that holds another study: a folder keeps one study's files, and runs
    whose study-defining settings differ get different default study names.

    Raises:
        UsageError: ``config.json`` in the run folder names another study; the message lists the
            settings that differ.
    """
    stored_file = config.out_dir / "config.json"
    if not stored_file.is_file():
        return
    try:
        stored = json.loads(stored_file.read_text())
    except (OSError, ValueError):
        return  # unreadable: the storage's own check still applies
    name = stored.get("study_name") if isinstance(stored, dict) else None
    if not name or name == config.resolved_study_name:
        return
    given = config.study_defining()
    diffs = [f"{k}: stored {stored.get(k)!r}, given {v!r}" for k, v in given.items() if stored.get(k) != v]
    raise UsageError(
        f"--out {config.out_dir} holds study {name!r}, not {config.resolved_study_name!r}"
        + (f" ({'; '.join(diffs)})" if diffs else "")
        + "; use another --out, or the stored settings to resume it"
    )

