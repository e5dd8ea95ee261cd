"""The shared command-line helpers: one-line errors, exit statuses."""

from __future__ import annotations

import io

import pytest

from nasenergy._cli import EXIT_INTERRUPTED, OneLineParser, run_main
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
