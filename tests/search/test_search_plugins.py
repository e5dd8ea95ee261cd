"""A filter from a user's installed package is named on the command line: the package declares an
entry point in the ``nasenergy.filters`` group, and ``python -m nasenergy.search --filter <name>``
loads it the first time the name is asked for (nothing of it is imported before)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from nasenergy.run.files import load_run

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''"""A user's filter package: skips every second candidate it is asked about."""

from nasenergy.filter import Decision
from nasenergy.filter.registry import FilterKind, register_filter


class EveryOther:
    mode = "every-other"

    def __init__(self, *, objectives):
        self.objectives = objectives
        self.asked = 0

    def admit(self, measurement, front=None, *, features=None):
        self.asked += 1
        return Decision(admit=self.asked % 2 == 1, reason="every other", mode=self.mode,
                        utilization=float(measurement.utilization), n_observed=0)

    def observe(self, measurement, accuracy, **_):
        pass


def register():
    register_filter(FilterKind("every-other", EveryOther, search_options=("objectives",), needs_accuracy=False))
'''


def install(site: Path) -> None:
    """The package ``every_other_filter`` as pip leaves it in ``site``: its module and its
    ``.dist-info`` folder with the entry point."""
    site.mkdir()
    (site / "every_other_filter.py").write_text(PLUGIN)
    info = site / "every_other_filter-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: every-other-filter\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[nasenergy.filters]\nevery-other = every_other_filter:register\n")


def _search(tmp_path: Path, *extra: str, site: Path | None) -> subprocess.CompletedProcess:
    path = os.pathsep.join(str(p) for p in (site, ROOT) if p is not None)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": path, "NASENERGY_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "nasenergy.search", "--filter", "every-other", "--budget", "5",
                           "--hardware", "recorded", "--quiet", *extra], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_an_installed_plugin_filter_serves_a_search(tmp_path):
    install(tmp_path / "site")
    proc = _search(tmp_path, "--out", str(tmp_path / "run"), site=tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = load_run(tmp_path / "run")
    assert run.config["filter"] == "every-other"
    outcomes = Counter(r["outcome"] for r in run.rows)
    assert outcomes["evaluated"] == 5 and outcomes["filtered"] >= 4
    assert {r["filter_mode"] for r in run.rows if r["filter_mode"]} == {"every-other"}
    # it takes no target recall, so none is in its study's name or its report
    assert "-every-other-" in run.config["study_name"] and "every-other0" not in run.config["study_name"]
    assert "filter every-other, " in (tmp_path / "run" / "report.md").read_text()


def test_without_the_package_the_name_is_refused_in_one_line(tmp_path):
    proc = _search(tmp_path, "--out", str(tmp_path / "run"), site=None)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: argument --filter: invalid choice: 'every-other'")
    assert proc.stderr.count("\n") == 1 and not (tmp_path / "run").exists()
