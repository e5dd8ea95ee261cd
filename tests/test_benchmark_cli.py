"""Tests of ``python -m nasenergy.benchmark``: import, info, query, schema and exit codes."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nasenergy.benchmark import build_parser, main
from shared_files import TSS_TABLES, require_shared, shared_file


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_import_info_query(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    shared = require_shared(*TSS_TABLES)
    code, out, err = run("import", str(shared), "--cache-dir", cache)
    assert code == 0, err
    assert "benchmark-tss.npz" in out and "cifar10-valid" in out
    code, out, _ = run("info", "--cache-dir", cache)
    assert code == 0
    assert "tss:" in out and str(shared) in out and "MiB" in out and "x-valid" in out and "200" in out
    code, out, _ = run("info", "--cache-dir", cache, "--json")
    (bench,) = json.loads(out)["benchmarks"]
    assert bench["space"] == "tss" and bench["coverage"]["cifar10-valid/x-valid/12"]["archs"] == 15625
    code, out, _ = run("query", "6111", "--cache-dir", cache)
    assert code == 0 and "search:" in out and "report: 94.373%" in out and "(estimated)" in out
    code, out, _ = run("query", "6111", "--cache-dir", cache, "--estimate", "none")
    assert code == 0 and "cost 0.0 s (unknown)" in out


def test_import_of_the_official_fixture(tmp_path: Path) -> None:
    fixture = str(shared_file("nats_bench_fixture/fake_torch_dir"))
    code, out, err = run("import", fixture, "--cache-dir", str(tmp_path))  # 3 of 15,625 architectures
    assert code == 2 and "covers 3 of the 15,625 tss architectures" in err and "--partial" in err, err
    assert not (tmp_path / "benchmark-tss.npz").exists()
    code, out, err = run("import", fixture, "--cache-dir", str(tmp_path), "--partial")
    assert code == 0, err
    code, out, err = run("query", "11", "--dataset", "imagenet16", "--cache-dir", str(tmp_path))
    assert code == 0 and "(recorded)" in out
    code, out, err = run("query", "12", "--cache-dir", str(tmp_path))
    assert code == 2 and err.startswith("error: ") and "architecture 12" in err


@pytest.mark.parametrize(
    ("argv", "code", "needle"),
    [
        (["import", "/nonexistent/bench"], 2, "does not exist"),
        (["import", "{tmp}", "--cache-dir", ""], 2, "expected a folder"),  # was: the current folder
        (["import", "{tmp}", "--cache-dir", "{tmp}/a_file"], 2, "is a file, not a folder"),
        (["import", "{tmp}", "--cache-dir", "{tmp}/a_file/sub"], 2, "cannot write"),
        (["build-embedded", "--shared-data", "{tmp}/none"], 2, "is not a folder"),
        (["build-embedded", "--shared-data", "{tmp}", "--out", "{tmp}/out"], 2, "lacks nats_tss_first1000"),
        (["query", "|bad|", "--benchmark", "{fixture}"], 2, "error: "),
        (["query", "0", "--dataset", "mnist", "--benchmark", "{fixture}"], 2, "unknown dataset"),
        (["import", "{tmp}", "--workers", "0"], 2, "--workers"),
        (["import", "{tmp}"], 2, "neither NATS-Bench files nor .csv tables"),
    ],
)
def test_bad_input_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv, code, needle) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    fixture = "nats_bench_fixture/fake_torch_dir"
    (tmp_path / "a_file").write_text("mine\n")
    argv = [a.format(tmp=tmp_path, fixture=shared_file(fixture) if "{fixture}" in a else "") for a in argv]
    got, out, err = run(*argv)
    assert got == code
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_query_without_an_installed_benchmark_uses_the_embedded_one(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    code, out, err = run("query", "0", "--cache-dir", str(tmp_path))
    assert code == 0, err
    assert out.startswith("embedded tss benchmark") and "search: 63.364% on cifar10 x-valid after 12 epochs" in out
    assert "report: 85.863% on cifar10 ori-test after 200 epochs" in out
    code, out, err = run("info", "--cache-dir", str(tmp_path))
    assert code == 0 and "use the embedded benchmark" in out and not err


def test_query_takes_the_architecture_as_the_other_commands_do(tmp_path: Path) -> None:
    """``query ARCH`` and ``query --arch ARCH`` answer alike; none or both is one usage line."""
    from nasenergy._cli import ARCH_EXAMPLES

    arch = ARCH_EXAMPLES["tss"]
    positional, flag = run("query", arch, "--cache-dir", str(tmp_path)), run("query", "--arch", arch,
                                                                             "--cache-dir", str(tmp_path))
    assert positional[0] == flag[0] == 0 and positional[1] == flag[1]
    for argv in (("query",), ("query", arch, "--arch", arch)):
        code, _, err = run(*argv, "--cache-dir", str(tmp_path))
        assert code == 2 and err.count("\n") == 1 and "--arch" in err


def test_every_architecture_argument_shows_a_string_of_each_space() -> None:
    """The help of ``query``, ``profile --arch`` and ``proxies --arch`` shows a valid string of each
    space."""
    from nasenergy._cli import ARCH_EXAMPLES, ARCH_HELP
    from nasenergy.profile import build_parser as profile_parser
    from nasenergy.proxies.cli import build_parser as proxies_parser
    from search_spaces import get_space

    for space, text in ARCH_EXAMPLES.items():
        assert str(get_space(space).parse(text)) == text and text in ARCH_HELP
    helps = [profile_parser().format_help(), proxies_parser().format_help()]
    query = next(a for a in build_parser()._actions if a.dest == "command").choices["query"]
    helps.append(query.format_help())
    for text in helps:
        flat = "".join(text.split())
        assert all(example in flat for example in ARCH_EXAMPLES.values())


def test_build_embedded_writes_the_tables(tmp_path: Path) -> None:
    from nasenergy.oracles.embedded_sources import SOURCES

    shared = require_shared(*(source.file for source in SOURCES))
    code, out, err = run("build-embedded", "--shared-data", str(shared), "--out", str(tmp_path))
    assert code == 0, err
    assert "built 4 embedded tables" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ATTRIBUTION.md", "manifest.json", "sss_accuracy.csv.gz", "tss_accuracy.csv.gz",
        "tss_cost_model.csv.gz", "tss_times.csv.gz"]


def test_corrupt_installed_file(tmp_path: Path) -> None:
    (tmp_path / "benchmark-tss.npz").write_bytes(b"junk")
    code, _, err = run("info", "--cache-dir", str(tmp_path))
    assert code == 2 and "re-create it" in err


def test_usage_errors_exit_2() -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2


def test_module_entry_point(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "nasenergy.benchmark", "import", str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    proc = subprocess.run([sys.executable, "-m", "nasenergy.benchmark", "schema"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "cifar10valid_valid_acc_12ep" in proc.stdout


def _table(path: Path, n: int, value: str = "70") -> Path:
    rows = "".join(f"{i},{value}\n" for i in range(n))
    path.write_text("arch_index,cifar10valid_valid_acc_12ep\n" + rows)
    return path


def test_import_refuses_bad_tables_and_shrinking_in_one_line(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    code, _, err = run("import", str(_table(tmp_path / "bad.csv", 4, "101")), "--cache-dir", cache)
    assert code == 2 and err.startswith("error: ") and "row 2 (101)" in err and err.count("\n") == 1
    code, _, err = run("import", str(_table(tmp_path / "empty.csv", 3, "")), "--cache-dir", cache)
    assert code == 2 and "no usable row" in err and err.count("\n") == 1
    assert not (tmp_path / "cache" / "benchmark-tss.npz").exists()

    assert run("import", str(_table(tmp_path / "big.csv", 20)), "--cache-dir", cache, "--partial")[0] == 0
    code, _, err = run("import", str(_table(tmp_path / "small.csv", 5)), "--cache-dir", cache, "--partial")
    assert code == 2 and "5 architectures instead of 20" in err and "--force" in err and err.count("\n") == 1
    code, out, err = run("import", str(tmp_path / "small.csv"), "--cache-dir", cache, "--force", "--partial")
    assert code == 0, err
    code, out, _ = run("info", "--cache-dir", cache, "--json")
    assert json.loads(out)["benchmarks"][0]["coverage"]["cifar10-valid/x-valid/12"]["archs"] == 5


def test_import_help_warns_that_nats_bench_files_are_pickles() -> None:
    done = subprocess.run([sys.executable, "-m", "nasenergy.benchmark", "import", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "are Python pickles" in text and "trusted source" in text and "--force" in text


def test_info_with_nothing_installed_says_so_and_exits_0(tmp_path: Path) -> None:
    """A fresh install works (searches use the embedded tables): info says so on stdout, status 0."""
    import os

    env = {**os.environ, "NASENERGY_HOME": str(tmp_path / "empty"), "TORCH_HOME": str(tmp_path / "torch")}
    done = subprocess.run([sys.executable, "-m", "nasenergy.benchmark", "info"], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.count("\n") == 1 and "no benchmark installed" in done.stdout
    assert "searches use the embedded benchmark tables" in done.stdout
    assert run("info", "--json", "--cache-dir", str(tmp_path / "empty"))[0] == 0


def test_an_unwritable_cache_dir_is_refused_before_the_source_is_read(tmp_path: Path, monkeypatch) -> None:
    """A read-only place (root ignores permissions, so ``os.access`` stands in for one here)."""
    import os

    from nasenergy import benchmark

    real_access = os.access
    monkeypatch.setattr(benchmark.os, "access",
                        lambda path, mode: False if Path(path) == tmp_path / "ro" else real_access(path, mode))
    (tmp_path / "ro").mkdir()
    code, out, err = run("import", "/nonexistent/bench", "--cache-dir", str(tmp_path / "ro"))
    assert code == 2 and err == f"error: cannot write {tmp_path / 'ro'}: Permission denied\n"


def test_a_write_that_fails_leaves_one_line_and_the_installed_file(tmp_path: Path, monkeypatch) -> None:
    import errno

    from nasenergy.oracles import cache

    def full_disk(data, target):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "save_benchmark", full_disk)
    table = shared_file("nats_official_3arch_records__nats_bench_fixture.csv")
    code, out, err = run("import", str(table), "--partial", "--cache-dir", str(tmp_path))
    assert code == 2 and err.startswith("error: cannot write ") and err.endswith(": No space left on device\n")
