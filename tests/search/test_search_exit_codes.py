"""How the command ends: its own exit status for each way a run stops short of its budget, one
line for an unwritable run folder, and a benchmark lacking the search metric refused before the
first candidate."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_parts import TABLE_ENV
from test_search_stall import stuck_components

from nasenergy.search.command.cli import main
from nasenergy.search.command.exit_codes import STOP_EXIT_CODES, exit_code_for

ROOT = Path(__file__).resolve().parents[2]
SEARCH_PAGE = ROOT / "docs" / "search.md"


def test_every_stop_reason_has_its_own_status():
    codes = [STOP_EXIT_CODES[r] for r in ("max_candidates", "stalled", "exhausted")]
    assert len(set(codes)) == 3 and 0 not in codes and not {1, 2, 130} & set(codes)
    assert exit_code_for("budget") == 0 and exit_code_for("interrupted") == 130
    assert exit_code_for("no such reason") == 1


def test_the_candidate_cap_exits_with_its_status_and_one_line(tmp_path, fake_env, capsys):
    code = main(["--budget", "6", "--dvfs", "none", "--filter", "none", "--patience", "0", "--max-candidates", "8",
                 "--quiet", "--out", str(tmp_path / "run")], components_factory=stuck_components)
    assert code == STOP_EXIT_CODES["max_candidates"]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("stopped: at the candidate cap") and "--max-candidates" in err[0]


def test_help_and_the_docs_document_the_statuses():
    done = subprocess.run([sys.executable, "-m", "nasenergy.search", "--help"], capture_output=True, text=True)
    page = SEARCH_PAGE.read_text()
    for reason, code in STOP_EXIT_CODES.items():
        assert re.search(rf"^\s+{code}\s+\S", done.stdout, re.M), (reason, code)
        assert re.search(rf"`{code}`", page), (reason, code)


def test_an_unwritable_run_folder_is_one_line_and_status_2(tmp_path, fake_env, capsys):
    from fake_parts import fake_components

    code = main(["--budget", "2", "--dvfs", "none", "--quiet", "--out", "/proc/nasenergy-test/run"],
                components_factory=fake_components)
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out: cannot create") and "/proc/nasenergy-test" in err[0]


def test_the_command_line_shows_no_traceback_for_an_unwritable_folder(tmp_path, fake_env):
    script = Path(__file__).resolve().parent / "run_fake_search.py"
    done = subprocess.run([sys.executable, str(script), "--budget", "2", "--quiet", "--out", "/proc/x"],
                          capture_output=True, text=True, env={**fake_env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _table_without_the_search_metric(path: Path, source: Path) -> Path:
    with source.open() as f, path.open("w", newline="") as g:
        reader, writer = csv.DictReader(f), csv.writer(g)
        writer.writerow(["arch_index", "cifar10_test_acc_200ep"])
        for row in reader:
            writer.writerow([row["arch_index"], row["cifar10_test_acc_200ep"]])
    return path


def test_a_benchmark_without_the_search_metric_is_refused_before_the_first_candidate(
    tmp_path, fake_env, table_path, monkeypatch, capsys
):
    from fake_parts import fake_components

    monkeypatch.setenv(TABLE_ENV, str(_table_without_the_search_metric(tmp_path / "t.csv", table_path)))
    code = main(["--budget", "2", "--dvfs", "none", "--quiet", "--out", str(tmp_path / "run")],
                components_factory=fake_components)
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "--search-metric ori-test/200" in err[0], err
    assert not (tmp_path / "run").exists()  # no partial run folder


@pytest.mark.parametrize("bad", ["test", "x-valid/", "train/12", "x-valid/0"])
def test_a_bad_search_metric_is_one_line(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as ei:
        raise SystemExit(main(["--search-metric", bad, "--out", str(tmp_path / "run")]))
    assert ei.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--search-metric" in err[0]
