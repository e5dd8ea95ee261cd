"""What the command leaves on the terminal and in env.json: a front table at the end, a dashboard
hint that works where it is printed, and a command that runs again as written."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest
from fake_parts import fake_components

from nasenergy.run.files import load_run
from nasenergy.run.front_table import front_table
from nasenergy.run.objectives import objectives_for
from nasenergy.search.command import dashboard
from nasenergy.search.command.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *extra: str, out: str = "my run") -> tuple[list[str], int, Path]:
    run_dir = tmp_path / out
    argv = ["--budget", "4", "--dvfs", "none", "--filter", "none", "--out", str(run_dir), *extra]
    code = main(argv, components_factory=fake_components)
    return argv, code, run_dir


def test_env_json_command_runs_again_as_written(tmp_path, fake_env, capsys):
    argv, code, run_dir = _run(tmp_path, "--quiet", out="it's a run")
    assert code == 0
    command = json.loads((run_dir / "env.json").read_text())["command"]
    assert shlex.split(command) == ["python", "-m", "nasenergy.search", *argv]
    assert f"`{command}`" in (run_dir / "report.md").read_text()


def test_the_terminal_output_ends_with_a_short_front_table(tmp_path, fake_env, capsys):
    _, code, run_dir = _run(tmp_path)
    assert code == 0
    out = capsys.readouterr().out.strip().splitlines()
    front = load_run(run_dir).front
    header = next(i for i, line in enumerate(out) if line.startswith("Pareto front ("))
    table = out[header + 1:]
    assert table[0].split() == ["trial", "arch", "index", "accuracy", "%", "img/s", "J/img"]
    assert len(table) == 1 + len(front) and len(front) >= 1
    assert {int(line.split()[0]) for line in table[1:]} == {int(r["trial_number"]) for r in front}


def test_a_long_front_is_cut_to_a_few_rows():
    rows = [{"trial_number": i, "arch_index": i, "accuracy_pct": float(i), "throughput_img_per_s": 1e3 * (40 - i)}
            for i in range(30)]
    lines = front_table(rows, objectives_for(["accuracy", "throughput"]), max_rows=5)
    assert len(lines) == 1 + 5 + 1 and lines[-1] == "... and 25 more in pareto_front.csv"
    assert lines[1].split()[:3] == ["29", "29", "29.00"]  # the most accurate first
    assert "J/img" not in lines[0]
    assert front_table([], objectives_for(["accuracy"])) == []


def test_front_members_of_one_network_with_the_same_figures_share_a_row():
    same = {"accuracy_pct": 83.0, "throughput_img_per_s": 2.7e5, "energy_j_per_img": 1e-3, "measured_network": "n"}
    rows = [{"trial_number": 14, "arch_index": 2952, **same}, {"trial_number": 63, "arch_index": 8008, **same},
            {"trial_number": 70, "arch_index": 2136, **same},
            {**same, "trial_number": 9, "arch_index": 7, "accuracy_pct": 84.0},  # another point
            {**same, "trial_number": 5, "arch_index": 8, "measured_network": "m"}]  # another network
    lines = front_table(rows, objectives_for(["accuracy", "throughput", "energy"]), max_rows=2)
    assert [line.split()[:3] for line in lines[1:3]] == [["9", "7", "84.00"], ["14", "2952", "+2"]]
    assert lines[3] == "+2 with arch 2952: cells 8008, 2136 deploy to the same network with the same figures"
    assert lines[4] == "... and 1 more in pareto_front.csv"


@pytest.mark.parametrize("installed", [True, False])
def test_the_dashboard_hint_names_the_extra_when_it_is_missing(installed, tmp_path, fake_env, capsys, monkeypatch):
    monkeypatch.setattr(dashboard, "dashboard_importable", lambda: installed)
    _, code, run_dir = _run(tmp_path)
    assert code == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("browse the study: ")]
    report = (run_dir / "report.md").read_text()
    if installed:
        assert line.startswith("browse the study: optuna-dashboard ")
        assert shlex.split(line.removeprefix("browse the study: ")) == ["optuna-dashboard", str(run_dir / "study.journal")]
    else:
        assert "pip install -e '.[dashboard]'" in line and "pip install -e '.[dashboard]'" in report
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
        assert any(req.startswith("optuna-dashboard") for req in extras[dashboard.DASHBOARD_EXTRA])


def test_without_matplotlib_the_run_keeps_its_tables_and_report_and_says_why_no_plot(tmp_path, fake_env, capsys,
                                                                                   monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)  # `import matplotlib` now fails
    _, code, run_dir = _run(tmp_path, "--quiet")
    assert code == 0
    assert (run_dir / "candidates.csv").is_file() and (run_dir / "report.md").is_file()
    assert not list(run_dir.glob("*.png"))
    assert "no plots drawn: matplotlib is not installed" in capsys.readouterr().err
