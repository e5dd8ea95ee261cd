"""The type checker passes on the modules it covers.

``python -m mypy`` reads ``[tool.mypy]`` in pyproject.toml: every module of ``nasenergy`` and
``search_spaces`` is checked with ``disallow_untyped_defs`` and ``check_untyped_defs``, except the
ones its ``exclude`` list names (not yet clean). The list may only shrink: a module added to the
package is checked from its first commit, and a listed module that no longer exists fails here.
The extension points, the candidate record and the run's front are checked under mypy's strict
flags as well (``[[tool.mypy.overrides]]``); that set may only grow.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mypy_config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["mypy"]


def test_mypy_passes_on_every_covered_module(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
                            cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout


def test_the_not_yet_checked_list_names_existing_modules_one_each():
    patterns = _mypy_config()["exclude"]
    for pattern in patterns:
        match = re.fullmatch(r"\^(.+)\$", pattern)
        assert match, f"{pattern!r}: an exclude entry names one file, anchored: '^path/to/module\\.py$'"
        path = match.group(1).replace("\\.", ".")
        assert (ROOT / path).is_file(), f"{path} is listed as not yet type-checked but does not exist"


def test_most_modules_are_checked():
    config = _mypy_config()
    modules = [p for package in config["files"] for p in (ROOT / package).rglob("*.py")]
    assert len(config["exclude"]) < len(modules) / 4, (len(config["exclude"]), len(modules))


STRICT_AT_LEAST = (
    "nasenergy._registry", "nasenergy.dvfs.backends", "nasenergy.errors", "nasenergy.filter.protocol",
    "nasenergy.hardware.meter", "nasenergy.objectives", "nasenergy.oracles.evaluation", "nasenergy.protocols",
    "nasenergy.run.front", "nasenergy.run.record", "nasenergy.run.view", "search_spaces._protocol",
)
"""The modules checked under the strict flags when the set was introduced: it may only grow."""
STRICT_FLAGS = ("disallow_any_generics", "disallow_incomplete_defs", "disallow_subclassing_any",
                "disallow_untyped_calls", "disallow_untyped_decorators", "no_implicit_reexport",
                "strict_equality", "warn_return_any", "warn_unused_ignores")
"""mypy's --strict flags that can be set per module."""


def test_the_extension_points_are_checked_strictly_and_the_set_only_grows():
    overrides = [o for o in _mypy_config().get("overrides", []) if all(o.get(f) is True for f in STRICT_FLAGS)]
    assert overrides, "no [[tool.mypy.overrides]] block sets every strict flag"
    strict = {m for o in overrides for m in ([o["module"]] if isinstance(o["module"], str) else o["module"])}
    assert set(STRICT_AT_LEAST) <= strict, sorted(set(STRICT_AT_LEAST) - strict)
    for module in strict:
        path = ROOT / (module.replace(".", "/") + ".py")
        assert path.is_file() or (ROOT / module.replace(".", "/") / "__init__.py").is_file(), module
        assert not any(re.fullmatch(p, str(path.relative_to(ROOT))) for p in _mypy_config()["exclude"]), module
