"""A password in the storage URL is never written or printed, and its run folder stays private."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest
from fake_parts import fake_components, start_search
from hypothesis import given
from hypothesis import strategies as st

from nasenergy.search.command.cli import build_parser, config_from_args, main
from nasenergy.search.storage.credentials import STORAGE_ENV, has_password, mask_argv, mask_text, mask_url, password_of
from nasenergy.search.storage.storages import StorageSpec
from nasenergy.search.workers import runner

_SAFE = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%!$&'()*+,;=@:/?#[]",
                min_size=1, max_size=30)


@given(user=st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True), password=_SAFE,
       host=st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True))
def test_any_password_is_masked(user, password, host):
    secret = f"PW{password}"
    url = f"postgresql://{user}:{secret}@{host}:5432/nas"
    assert password_of(url) == secret and has_password(url)
    for text in (url, f"python -m nasenergy.search --storage {url} --budget 5", f"--storage={url}"):
        masked = mask_text(text)
        assert secret not in masked
        assert f"{user}:***@" in masked
    assert mask_url(url) == f"postgresql://{user}:***@{host}:5432/nas"


def test_urls_without_a_password_are_left_alone():
    for url in ("postgresql://user@host/db", "sqlite:///runs/x.db", "/path/to/study.journal"):
        assert not has_password(url) and mask_url(url) == url
    assert mask_url(None) is None
    assert mask_text("pw is 'hunter2'", secrets=["hunter2", None]) == "pw is '***'"


def test_the_environment_variable_gives_the_storage(monkeypatch):
    monkeypatch.setenv(STORAGE_ENV, "postgresql://u:envPW@h/db")
    assert config_from_args(build_parser().parse_args([])).storage == "postgresql://u:envPW@h/db"
    flag = config_from_args(build_parser().parse_args(["--storage", "postgresql://v@h/db"]))
    assert flag.storage == "postgresql://v@h/db"  # the flag wins
    monkeypatch.setenv(STORAGE_ENV, "")
    assert config_from_args(build_parser().parse_args([])).storage is None


def test_config_json_masks_the_password():
    from nasenergy.search.command.config import SearchConfig

    cfg = SearchConfig(storage="postgresql://u:cfgPW@h/db")
    assert cfg.public_dict()["storage"] == "postgresql://u:***@h/db"
    assert cfg.to_dict()["storage"] == "postgresql://u:cfgPW@h/db"  # workers still need the real URL


@pytest.mark.parametrize("how", ["flag", "env"])
def test_an_unreachable_storage_names_no_password(how, tmp_path, capfd, monkeypatch):
    secret = f"unreach{uuid.uuid4().hex[:8]}"
    url = f"postgresql://u:{secret}@127.0.0.1:1/db"
    argv = ["--budget", "3", "--out", str(tmp_path / "run")]
    if how == "flag":
        argv += ["--storage", url]
    else:
        monkeypatch.setenv(STORAGE_ENV, url)
    assert main(argv) == 2
    out, err = capfd.readouterr()
    assert secret not in out + err
    assert "u:***@127.0.0.1:1" in err and len(err.strip().splitlines()) == 1


def _assert_nothing_holds(secret: str, run_dir: Path, *texts: str) -> None:
    for text in texts:
        assert secret not in text
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert any(p.name == "report.md" for p in files)
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def _assert_private(run_dir: Path) -> None:
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    for path in run_dir.iterdir():
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


class _InterruptAfter:
    """An oracle that raises KeyboardInterrupt (a Ctrl-C) at its ``n``-th evaluation."""

    def __init__(self, oracle, n: int) -> None:
        self._oracle, self._left = oracle, n

    def evaluate(self, arch, dataset, *, seed=None):
        self._left -= 1
        if self._left == 0:
            raise KeyboardInterrupt
        return self._oracle.evaluate(arch, dataset, seed=seed)

    def __getattr__(self, name):
        return getattr(self._oracle, name)


def _interrupting_components(config):
    import dataclasses

    parts = fake_components(config)
    return dataclasses.replace(parts, oracle=_InterruptAfter(parts.oracle, 4))


@pytest.mark.parametrize("odd", ["", pytest.param(" sp'a\"ce", marks=pytest.mark.slow)])
def test_a_run_with_a_password_writes_and_prints_none(tmp_path, fake_env, capfd, monkeypatch, odd):
    """The database is a local SQLite file standing in for PostgreSQL: the URL the user gave,
    password and all, is what the command, config, report, env and messages see."""
    secret = f"s3cret{uuid.uuid4().hex[:8]}{odd}"
    url = f"postgresql://nas:{secret}@db.example:5432/nas"
    db = f"sqlite:///{tmp_path / 'study.db'}"

    def resolve(given, out):
        assert given == url
        return StorageSpec("rdb", db, db, mask_url(given))

    monkeypatch.setattr(runner, "resolve_storage", resolve)
    monkeypatch.setattr(runner, "check_reachable", lambda spec: None)
    run_dir = tmp_path / "run"
    argv = ["--budget", "6", "--storage", url, "--dvfs", "none", "--filter", "none", "--out", str(run_dir)]
    monkeypatch.setattr("sys.argv", ["nasenergy-search", *argv])

    assert main(argv, components_factory=_interrupting_components) == 130  # stopped by the Ctrl-C
    out, err = capfd.readouterr()
    assert "nas:***@db.example" in err and "resume with" in err
    _assert_nothing_holds(secret, run_dir, out, err)
    assert "nas:***@db.example" in (run_dir / "report.md").read_text()
    assert "nas:***@db.example" in (run_dir / "env.json").read_text()
    _assert_private(run_dir)

    monkeypatch.setenv(STORAGE_ENV, url)  # resume with the URL in the environment
    argv = argv[:2] + argv[4:]
    monkeypatch.setattr("sys.argv", ["nasenergy-search", *argv])
    assert main(argv, components_factory=fake_components) == 0
    out, err = capfd.readouterr()
    _assert_nothing_holds(secret, run_dir, out, err)
    _assert_private(run_dir)


def test_a_run_without_a_password_keeps_the_usual_modes(tmp_path, fake_env):
    from nasenergy.search import SearchConfig, run_search

    run_search(SearchConfig(budget=2, dvfs="none", filter="none", quiet=True, out=str(tmp_path / "run")),
               components_factory=fake_components)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "run" / "report.md").stat().st_mode) == 0o666 & ~umask


@pytest.mark.postgres
def test_a_postgres_run_with_a_password_writes_and_prints_none(tmp_path, fake_env, pg_url, unique_name):
    from sqlalchemy.engine import make_url

    parsed = make_url(pg_url)
    if parsed.password is None:  # a trust-authenticated test server accepts any password
        parsed = parsed.set(password=f"pg{uuid.uuid4().hex[:10]}")
    secret = parsed.password
    url = parsed.render_as_string(hide_password=False)
    run_dir = tmp_path / "run"
    common = ["--budget", "4", "--study-name", unique_name, "--dvfs", "none", "--filter", "none", "--out", str(run_dir)]

    proc = start_search([*common, "--storage", url], fake_env)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    _assert_nothing_holds(secret, run_dir, out, err)
    _assert_private(run_dir)

    proc = start_search([*common, "--budget", "6"], {**fake_env, STORAGE_ENV: url})
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert "6/6 full evaluations" in out
    _assert_nothing_holds(secret, run_dir, out, err)


def test_arguments_are_masked_whole():
    url = "postgresql://u:sp ace'quote\"x@127.0.0.1:1/db"
    assert mask_argv(["--storage", url, f"--storage={url}"]) == [
        "--storage", "postgresql://u:***@127.0.0.1:1/db", "--storage=postgresql://u:***@127.0.0.1:1/db"]


def test_a_short_password_masks_its_url_but_no_ordinary_words():
    assert mask_text("python -m nasenergy.search --storage postgresql://u:nas@h/db", secrets=["nas"]) == (
        "python -m nasenergy.search --storage postgresql://u:***@h/db")
