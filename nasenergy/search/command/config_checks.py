"""Validation of a search run's settings as a whole: every value in range, every combination
allowed, and a run folder that holds no other study; each refusal is one line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.filter.registry import FILTERS
from nasenergy.hardware.boards import BOARD_POLICIES
from nasenergy.hardware.meter_settings import METER_SETTINGS
from nasenergy.hardware.registry import AUTO, METERS
from nasenergy.measurement import PRECISIONS
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.search.command.config_defaults import ESTIMATES, MAX_SCREEN, SAMPLERS
from nasenergy.search.command.config_fields import SearchSettings
from nasenergy.search.command.config_values import check_choice, parse_search_metric
from nasenergy.search.command.dvfs_modes import DVFS_MODES
from nasenergy.search.command.filter_features import DEFAULT_FILTER_FEATURES, check_filter_features
from nasenergy.search.command.run_folder import check_folder_is_ours, check_folder_name
from nasenergy.search.command.training_setup import check_val_fraction, register_training_data
from nasenergy.search.command.study_identity import resolved_study_name, run_folder, study_defining
from search_spaces import dataset_names, space_names

STUDY_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""What ``--study-name`` may be: 1-100 letters, digits, ``.``, ``_`` or ``-``, starting with a
letter or digit."""


SEED_LIMIT = 2**32
"""Seeds are 32-bit: NumPy's and scikit-learn's generators take 0 to 2^32 - 1 (a worker's seed
``seed + k`` wraps around within that range)."""
MAX_LEASE_S = 86_400.0
"""The longest ``--lease-s``, a day (a worker silent that long is dead; an infinite lease cannot be
scheduled)."""
MIN_TARGET_RECALL = 1e-9
"""The smallest ``--target-recall`` the refusal suggests (any recall whose complement is below 1
in floating point is taken)."""


ORACLES: tuple[str, ...] = ("benchmark", "train")
"""Where a search's accuracies come from (``--oracle``)."""


def check_training(settings: SearchSettings) -> None:
    """The training settings: ``--data`` with ``--oracle train`` only, a positive ``--epochs``,
    a validation share in (0, 1), and a live meter (a recorded profile is never replayed for
    the user's data, whose input shape and classes it was not measured with)."""
    check_choice("--oracle", settings.oracle, ORACLES)
    check_val_fraction(settings.val_fraction)
    if settings.oracle == "train":
        if not settings.data:
            raise UsageError("--oracle train needs --data (digits, a CIFAR folder, an image folder or an .npz)")
        if settings.hardware == "recorded" or settings.profile is not None:
            raise UsageError("--oracle train measures networks built for your data: use --hardware cuda or cpu "
                             "(or auto), not a recorded profile")
        if settings.benchmark is not None:
            raise UsageError("--benchmark answers from NATS-Bench's tables; --oracle train trains on --data instead")
        register_training_data(settings.data, settings.val_fraction)  # the data's dataset name, in this process too
    elif settings.data is not None:
        raise UsageError("--data is the data --oracle train trains on; add --oracle train")
    if not isinstance(settings.epochs, int) or settings.epochs < 1:
        raise UsageError(f"--epochs must be a positive integer, got {settings.epochs!r}")


def check_settings(settings: SearchSettings) -> None:
    """Check every value of ``settings`` (`nasenergy.search.command.config.SearchConfig.validate`).

    Raises:
        UsageError: a value out of range or a bad combination, with a one-line message.
        DataNotFoundError: ``benchmark`` names a path that does not exist.
    """
    check_choice("--space", settings.space, space_names())
    check_training(settings)
    check_choice("--dataset", settings.dataset, dataset_names())
    check_choice("--hardware", settings.hardware, METERS.choices(AUTO))
    check_choice("--precision", settings.precision, PRECISIONS)
    check_choice("--filter", settings.filter, FILTERS.choices())
    check_choice("--dvfs", settings.dvfs, DVFS_MODES.choices())
    check_choice("--sampler", settings.sampler, SAMPLERS)
    check_choice("--estimate", settings.estimate, ESTIMATES)
    if not settings.objectives:
        raise UsageError(f"--objectives needs at least one of {', '.join(OBJECTIVE_NAMES)}")
    for name in settings.objectives:
        check_choice("--objectives", name, OBJECTIVE_NAMES)
    if len(set(settings.objectives)) != len(settings.objectives):
        raise UsageError(f"--objectives lists an objective twice: {','.join(settings.objectives)}")
    parse_search_metric(settings.search_metric)
    features = check_filter_features(settings.filter_features)
    if features != DEFAULT_FILTER_FEATURES and not settings.reads_filter_features:
        raise UsageError(f"--filter-features chooses what the accuracy model of --filter dominance and of "
                         f"--screen reads; --filter {settings.filter} without --screen reads none")
    if FILTERS.get(settings.filter).needs_accuracy and "accuracy" not in settings.objectives:
        raise UsageError(
            f"--filter {settings.filter} predicts accuracy, which is not among --objectives; use --filter none"
        )
    if settings.budget < 1:
        raise UsageError(f"--budget must be at least 1, got {settings.budget}")
    if settings.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {settings.batch_size}")
    if not isinstance(settings.target_recall, (int, float)) or not 0.0 < settings.target_recall <= 1.0:
        raise UsageError(f"--target-recall must be in (0, 1], got {settings.target_recall}")
    if not 1.0 - settings.target_recall < 1.0:  # the conformal level 1 - recall must stay below 1
        raise UsageError(f"--target-recall must be in (0, 1], got {settings.target_recall}, too close to 0 "
                         f"(1 minus it rounds to 1); use at least {MIN_TARGET_RECALL}")
    if not 0 <= settings.seed < SEED_LIMIT:
        raise UsageError(f"--seed must be from 0 to {SEED_LIMIT - 1} (2^32 - 1), got {settings.seed}")
    if not 1 <= settings.workers <= 256:
        raise UsageError(f"--workers must be between 1 and 256, got {settings.workers}")
    if settings.max_candidates is not None and settings.max_candidates < settings.budget:
        raise UsageError(
            f"--max-candidates ({settings.max_candidates}) must be at least --budget ({settings.budget})"
        )
    if isinstance(settings.screen, bool) or not isinstance(settings.screen, int) or not 1 <= settings.screen <= MAX_SCREEN:
        raise UsageError(f"--screen must be a whole number of candidates from 1 to {MAX_SCREEN}, got {settings.screen!r}")
    if settings.screen > 1 and "accuracy" not in settings.objectives:
        raise UsageError("--screen ranks candidates by predicted accuracy: keep accuracy in --objectives")
    if settings.min_accuracy is not None:
        if isinstance(settings.min_accuracy, bool) or not isinstance(settings.min_accuracy, (int, float)) \
                or not 0.0 <= float(settings.min_accuracy) < 100.0:
            raise UsageError(f"--min-accuracy must be an accuracy in percent, 0 to below 100, got {settings.min_accuracy!r}")
        if "accuracy" not in settings.objectives:
            raise UsageError("--min-accuracy constrains the accuracy: keep accuracy in --objectives")
    if settings.patience < 0:
        raise UsageError(f"--patience must be 0 (off) or a positive number of candidates, got {settings.patience}")
    if not 5.0 <= settings.lease_s <= MAX_LEASE_S:
        raise UsageError(f"--lease-s must be from 5 to {MAX_LEASE_S:.0f} seconds, got {settings.lease_s}")
    if not 0.0 <= settings.db_retry_s < float("inf"):
        raise UsageError(f"--db-retry-s must be 0 (no retry) or a number of seconds, got {settings.db_retry_s}")
    for name in ("filter_yield_after", "redirect_after"):
        value = getattr(settings, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise UsageError(f"--{name.replace('_', '-')} must be 0 (off) or a whole number of candidates, "
                             f"got {value!r}")
    top = settings.filter_yield_top
    if isinstance(top, bool) or not isinstance(top, (int, float)) or not 0.0 < float(top) <= 1.0:
        raise UsageError(f"--filter-yield-top must be a share in (0, 1], got {top!r}")
    if not isinstance(settings.budget_rescue, bool):
        raise UsageError(f"--budget-rescue must be on or off, got {settings.budget_rescue!r}")
    check_choice("--boards", settings.boards, BOARD_POLICIES)
    check_choice("--meter-setting", settings.meter_setting, tuple(METER_SETTINGS))
    if not 0.0 <= settings.board_tolerance_pct < 100.0:
        raise UsageError(f"--board-tolerance-pct must be in [0, 100), got {settings.board_tolerance_pct}")
    if DVFS_MODES.get(settings.dvfs).changes_clocks and not settings.allow_clock_control:
        raise UsageError(f"--dvfs {settings.dvfs} changes the GPU clocks; add --allow-clock-control to allow it")
    if settings.study_name is not None and not STUDY_NAME_RE.match(settings.study_name):
        raise UsageError(
            f"--study-name must be 1-100 characters of letters, digits, '.', '_' or '-', "
            f"starting with a letter or digit; got {settings.study_name!r}"
        )
    if settings.benchmark is not None and not Path(settings.benchmark).expanduser().exists():
        raise DataNotFoundError(f"--benchmark: {settings.benchmark} does not exist")
    if settings.profile is not None:
        if "path" not in METERS.get(settings.hardware).context:  # the meter reads no profile file
            raise UsageError(f"--profile replays a recorded profile: it goes with --hardware recorded "
                             f"(or auto), not {settings.hardware}")
        if not Path(settings.profile).is_file():
            raise DataNotFoundError(f"--profile: {settings.profile} is not a file")
    folder = run_folder(settings)
    check_folder_name(folder)


def check_run_folder(config: SearchSettings) -> None:
    """Refuse a run folder that holds another study, or no run at all (`check_folder_is_ours`): a
    folder keeps one study's files, and runs whose study-defining settings differ get different
    default study names.

    Raises:
        UsageError: ``config.json`` in the run folder names another study (the message lists the
            settings that differ), or the folder holds other files or is a system folder.
    """
    folder = run_folder(config)
    check_folder_is_ours(folder)
    stored_file = folder / "config.json"
    if not stored_file.is_file():
        return
    try:
        stored = json.loads(stored_file.read_text())
    except (OSError, ValueError):
        return  # unreadable: the storage's own check still applies
    name = stored.get("study_name") if isinstance(stored, dict) else None
    if not name or name == resolved_study_name(config):
        return
    given = study_defining(config)
    diffs = [f"{k}: stored {stored.get(k)!r}, given {v!r}" for k, v in given.items() if stored.get(k) != v]
    raise UsageError(
        f"--out {folder} holds study {name!r}, not {resolved_study_name(config)!r}"
        + (f" ({'; '.join(diffs)})" if diffs else "")
        + "; use another --out, or the stored settings to resume it"
    )
