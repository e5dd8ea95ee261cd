"""A run folder is a run's or it is refused: ``--out`` on a folder of someone's own files, on the
root or a system folder, or with a name that is not UTF-8 is one line, exit 2, nothing touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_parts import fake_components

from nasenergy.errors import UsageError
from nasenergy.search.command.cli import main
from nasenergy.search.command.run_folder import check_folder_is_ours


def _search(out: str | bytes | Path, *extra: str) -> int:
    out_arg = os.fsdecode(out) if isinstance(out, bytes) else str(out)
    argv = ["--budget", "2", "--filter", "none", "--dvfs", "none", "--quiet", "--out", out_arg, *extra]
    return main(argv, components_factory=fake_components)


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_a_folder_of_other_files_is_refused_and_left_as_it_was(tmp_path, fake_env, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my notes\n")
    (mine / "config.json").write_text('{"learning_rate": 0.1}\n')
    assert _search(mine) == 2
    assert "holds files of no nasenergy run (config.json, report.md)" in _one_error_line(capsys)
    assert sorted(p.name for p in mine.iterdir()) == ["config.json", "report.md"]
    assert (mine / "report.md").read_text() == "my notes\n"


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr"])
def test_the_root_and_system_folders_are_refused(folder, fake_env, capsys):
    assert _search(folder) == 2
    assert "system or home folder" in _one_error_line(capsys)


def test_a_name_that_is_not_utf8_is_refused_before_any_work(tmp_path, fake_env, capsys):
    out = os.fsencode(tmp_path) + b"/run-\xff"
    assert _search(out) == 2
    assert "not a valid UTF-8 name" in _one_error_line(capsys)
    assert not os.path.exists(out)


def test_new_empty_hidden_only_and_own_folders_are_taken(tmp_path, fake_env):
    check_folder_is_ours(tmp_path / "new")
    empty = tmp_path / "empty"
    empty.mkdir()
    check_folder_is_ours(empty)
    (empty / ".gitkeep").write_text("")
    check_folder_is_ours(empty)
    run = tmp_path / "run"
    assert _search(run) == 0
    check_folder_is_ours(run)
    assert _search(run) == 0  # resumed in its own folder
    (run / "claims.sqlite").unlink()
    (run / "study.journal").unlink()
    (run / "run.lock").unlink()
    check_folder_is_ours(run)  # its config.json still names the study


def test_a_config_json_that_names_no_study_does_not_make_a_folder_a_run(tmp_path):
    (tmp_path / "config.json").write_text('{"study_name": "x"}')
    with pytest.raises(UsageError, match="no nasenergy run"):
        check_folder_is_ours(tmp_path)


def test_a_name_too_long_to_look_up_is_one_line(tmp_path, fake_env, capsys):
    assert _search(tmp_path / ("x" * 300)) == 2
    assert "File name too long" in _one_error_line(capsys)
