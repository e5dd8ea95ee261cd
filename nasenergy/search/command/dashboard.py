"""The line telling how to browse a study in optuna-dashboard, which is an optional extra."""

from __future__ import annotations

import importlib.util

DASHBOARD_EXTRA = "dashboard"
"""The extra of ``pyproject.toml`` that installs optuna-dashboard: ``pip install -e '.[dashboard]'``."""


def dashboard_importable() -> bool:
    """Whether optuna-dashboard is installed here."""
    return importlib.util.find_spec("optuna_dashboard") is not None


def dashboard_hint(command: str) -> str:
    """``command`` when optuna-dashboard is installed, else the same preceded by how to install it
    (one line)."""
    if dashboard_importable():
        return command
    return f"install optuna-dashboard (pip install -e '.[{DASHBOARD_EXTRA}]'), then: {command}"
