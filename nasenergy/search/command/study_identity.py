"""The study that a run's settings name: its default name, its run folder, the settings that
define it (`STUDY_DEFINING`, which a resumed run or a joining worker must share), the content
digest of a replayed profile, and the settings as ``config.json`` records them.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from pathlib import Path
from typing import Any

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.filter.registry import takes_target_recall
from nasenergy.objectives import OBJECTIVES
from nasenergy.search.command.config_defaults import DEFAULT_SEARCH_METRIC
from nasenergy.search.command.config_fields import BUDGET_KEEPING, FIELD_DEFAULTS, SearchSettings
from nasenergy.search.command.filter_features import UNNAMED_FILTER_FEATURES
from nasenergy.search.command.filter_features import suffix as filter_features_suffix

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


def resolved_study_name(settings: SearchSettings) -> str:
    """The study name: ``study_name`` when given, else `default_study_name`."""
    return settings.study_name or default_study_name(settings)


def default_study_name(settings: SearchSettings) -> str:
    """A name made of the settings that define the study (`STUDY_DEFINING`), the sampler and the
    seed, e.g. ``tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0``: runs
    that differ in any of them never share a default study (or run folder)."""
    s = settings
    objectives = ".".join(OBJECTIVES[o].short if o in OBJECTIVES else o for o in s.objectives)
    if s.filter == "none":
        filt = "nofilter"
    elif takes_target_recall(s.filter):
        filt = f"{s.filter}{s.target_recall:g}"
    else:  # a filter without a target recall is named without one
        filt = s.filter
    profile = f"-profile.{profile_digest(s.profile)[:8]}" if s.profile is not None else ""
    screen = f"-screen{s.screen}" if s.screen != 1 else ""
    floor = f"-min{s.min_accuracy:g}" if s.min_accuracy is not None else ""
    features = _features_suffix(s)
    keeping = "".join(f"-{tag}{value:g}" for tag, value in s.budget_keeping_changed().items())
    if s.oracle == "train":
        keeping += f"-train{s.epochs}ep"
    return (f"{s.space}-{s.dataset}-{objectives}-{s.precision}-b{s.batch_size}-{filt}{features}-"
            f"dvfs.{s.dvfs}{profile}-{s.sampler}{screen}{floor}{keeping}-seed{s.seed}")


def _features_suffix(settings: SearchSettings) -> str:
    """``-feat.GROUPS`` where an accuracy model reads `filter_features` and they are not
    `UNNAMED_FILTER_FEATURES` (empty for bad groups, which validation refuses)."""
    if not settings.reads_filter_features:
        return ""
    try:
        return filter_features_suffix(settings.filter_features)
    except UsageError:
        return ""


def run_folder(settings: SearchSettings) -> Path:
    """The run folder: ``out`` when given, else ``runs/<study name>``."""
    return Path(settings.out) if settings.out else Path("runs") / resolved_study_name(settings)


def settings_dict(settings: SearchSettings) -> dict[str, Any]:
    """A JSON-serialisable dict with the derived names filled in (``max_candidates`` stays
    ``None`` when not given: the effective cap depends on the meter, see
    `nasenergy.search.command.coverage.candidate_cap`)."""
    d = dataclasses.asdict(settings)
    d["objectives"] = list(settings.objectives)
    d["filter_features"] = list(settings.filter_features)
    d["study_name"] = resolved_study_name(settings)
    d["out"] = str(run_folder(settings))
    replayed = settings.replayed_profile()
    if replayed is not None:  # the content of the figures replayed, given or shipped
        d["profile_sha256"] = profile_digest(replayed)
    return d


def study_defining(settings: SearchSettings) -> dict[str, Any]:
    """The fields of `STUDY_DEFINING` as a dict (objectives as a list)."""
    d = settings_dict(settings)
    defining = {k: d[k] for k in STUDY_DEFINING}
    if settings.search_metric != DEFAULT_SEARCH_METRIC:  # studies made before the flag stay resumable
        defining["search_metric"] = settings.search_metric
    if settings.reads_filter_features and tuple(settings.filter_features) != UNNAMED_FILTER_FEATURES:
        defining["filter_features"] = list(settings.filter_features)  # studies made before the flag: without
    if "profile_sha256" in d:  # the same figures on every worker and on resuming, wherever the file lies
        defining["profile_sha256"] = d["profile_sha256"]
    if settings.oracle != "benchmark":  # real training: what is trained on, and how long
        defining.update(oracle=settings.oracle, data=d["data"], epochs=settings.epochs,
                        val_fraction=settings.val_fraction)
    for name in BUDGET_KEEPING:  # only when changed: studies made before the settings stay resumable
        if getattr(settings, name) != FIELD_DEFAULTS[name]:
            defining[name] = d[name]
    return defining


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
def _digest(path: str, mtime_ns: int, size_bytes: int) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise DataNotFoundError(f"--profile: cannot read {path}: {exc.strerror or exc}") from None
