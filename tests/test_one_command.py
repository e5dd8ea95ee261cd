"""``nasenergy <command>``: one entry point for every tool, the same flags and results as
``python -m nasenergy.<module>``."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nasenergy
from nasenergy.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_help_lists_every_command_and_version_prints_it(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"  {name} " in out for name in COMMANDS)
    assert main(["--version"]) == 0 and capsys.readouterr().out.strip() == f"nasenergy {nasenergy.__version__}"
    assert main(["nope"]) == 2 and "unknown command 'nope'" in capsys.readouterr().err
    assert main([]) == 2


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_has_the_help_of_its_module(name: str, capsys) -> None:  # type: ignore[no-untyped-def]
    import importlib

    with pytest.raises(SystemExit) as info:
        main([name, "--help"])
    assert info.value.code == 0
    expected = importlib.import_module(COMMANDS[name][0]).build_parser().format_help()
    assert capsys.readouterr().out.split("\n", 1)[1] == expected.split("\n", 1)[1]  # the same flags


def test_nasenergy_search_runs_the_same_search_as_python_m(tmp_path: Path) -> None:
    one = run(tmp_path, "nasenergy", "search", "--budget", "10", "--quiet", "--out", str(tmp_path / "one"))
    two = run(tmp_path, "nasenergy.search", "--budget", "10", "--quiet", "--out", str(tmp_path / "two"))
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)

    def networks(folder: str) -> list[tuple[str, str, str]]:
        with open(tmp_path / folder / "candidates.csv", newline="") as fh:
            return [(r["network"], r["outcome"], r["accuracy_pct"]) for r in csv.DictReader(fh)]

    assert networks("one") == networks("two")
    configs = [json.loads((tmp_path / f / "config.json").read_text()) for f in ("one", "two")]
    assert configs[0]["study_name"] == configs[1]["study_name"]


def test_the_installed_command_prints_the_version() -> None:
    exe = shutil.which("nasenergy")
    if exe is None:
        pytest.skip("the nasenergy command is not installed in this environment")
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"nasenergy {nasenergy.__version__}"
