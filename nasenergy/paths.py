"""Where the read-only reference data lives.

Tests and experiments read third-party reference data (NATS-Bench tables, published DVFS sweeps)
from one configurable folder and never copy it into the project. The folder is named by the
environment variable ``NASENERGY_SHARED_DATA``; by default it is ``../shared/data`` relative to the
project root (the folder holding ``pyproject.toml``), falling back to the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from nasenergy.errors import DataNotFoundError

ENV_VAR = "NASENERGY_SHARED_DATA"
CACHE_ENV = "NASENERGY_HOME"
"""The environment variable naming the user's cache folder (installed benchmarks, step times)."""
_DEFAULT_RELATIVE = Path("..") / "shared" / "data"


def _project_root() -> Path:
    return Path(__file__).resolve().parent.parent


def shared_data_dir(*, must_exist: bool = True) -> Path:
    """The folder of shared reference data.

    Args:
        must_exist: raise `DataNotFoundError` when the folder is missing.

    Returns:
        ``$NASENERGY_SHARED_DATA`` if set, else ``<project root>/../shared/data``, else
        ``./../shared/data``.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
    else:
        candidates = [_project_root() / _DEFAULT_RELATIVE, Path.cwd() / _DEFAULT_RELATIVE]
        path = next((c for c in candidates if c.is_dir()), candidates[0])
    path = path.resolve()
    if must_exist and not path.is_dir():
        raise DataNotFoundError(
            f"shared reference data not found at {path}; set {ENV_VAR} to the folder holding it"
        )
    return path


def dvfs_data_dir(*, must_exist: bool = True) -> Path:
    """The folder of published DVFS sweeps: ``dvfs_data`` beside the shared data folder."""
    path = shared_data_dir(must_exist=False).parent / "dvfs_data"
    if must_exist and not path.is_dir():
        raise DataNotFoundError(
            f"DVFS reference sweeps not found at {path}; they live beside ${ENV_VAR} as 'dvfs_data'"
        )
    return path


def cache_dir(override: str | Path | None = None) -> Path:
    """The cache folder: `override`, else ``$NASENERGY_HOME``, else ``~/.cache/nasenergy``."""
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nasenergy"
