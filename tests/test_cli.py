"""The shared command-line helpers: one-line errors, exit statuses."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from nasenergy._cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, OneLineParser, run_main
from nasenergy.errors import DataNotFoundError, UsageError


def test_a_bad_flag_is_one_line_and_exit_2(capsys):
    parser = OneLineParser(prog="x")
    parser.add_argument("--n", type=int)
    sub = parser.add_subparsers(dest="cmd")
    sub.add_parser("go").add_argument("--k", type=int)
    for argv in (["--n", "ten"], ["go", "--k", "x"], ["--what"]):
        with pytest.raises(SystemExit) as info:
            parser.parse_args(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "(see --help)" in err


def test_run_main_turns_errors_into_one_line_and_their_status():
    err = io.StringIO()
    assert run_main(lambda: 0, err=err) == 0 and run_main(lambda: None, err=err) == 0 and err.getvalue() == ""

    def bad_input() -> int:
        raise UsageError("--x must be positive")

    def missing() -> int:
        raise DataNotFoundError("no data at /nowhere")

    def interrupted() -> int:
        raise KeyboardInterrupt

    assert run_main(bad_input, err=err) == 2
    assert run_main(missing, err=err) == DataNotFoundError.exit_code
    assert run_main(interrupted, err=err) == EXIT_INTERRUPTED
    assert err.getvalue().splitlines() == [
        "error: --x must be positive", "error: no data at /nowhere", "error: interrupted",
    ]
    with pytest.raises(ValueError):  # anything else is a bug and keeps its traceback
        run_main(lambda: int("x"), err=err)


def test_a_closed_output_pipe_stops_quietly():
    assert run_main(lambda: (_ for _ in ()).throw(BrokenPipeError), err=io.StringIO()) == EXIT_BROKEN_PIPE
    # a command whose reader goes away after one line (`| head -1`): no traceback, status 141
    code = ("import sys; from nasenergy._cli import run_main\n"
            "def body():\n    for i in range(200000):\n        print(i)\n"
            "sys.exit(run_main(body))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"0\n"
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_BROKEN_PIPE and err == b""


@pytest.mark.parametrize("module", ["nasenergy.search.command.cli", "nasenergy.plot", "nasenergy.profile",
                                    "nasenergy.benchmark", "nasenergy.proxies.cli", "nasenergy.train.cli"])
def test_every_command_prints_its_version(module, capsys):
    import importlib

    import nasenergy

    with pytest.raises(SystemExit) as info:
        importlib.import_module(module).build_parser().parse_args(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"nasenergy {nasenergy.__version__}"


def test_the_version_has_one_source():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "nasenergy.__version__"}


def test_the_search_command_prints_its_version_as_a_command():
    done = subprocess.run([sys.executable, "-m", "nasenergy.search", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("nasenergy ")
