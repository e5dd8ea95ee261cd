"""Tests of the embedded benchmark: the shipped tables, their build, their sources and the oracle."""

from __future__ import annotations

import fnmatch
import gzip
import json
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest

from nasenergy.oracles import BenchmarkNotFoundError, CachedOracle, CorruptBenchmarkError, install, load_oracle
from nasenergy.oracles.cost_model import fit_rate_model
from nasenergy.oracles.embedded import EmbeddedOracle, embedded_dir, embedded_metrics, load_embedded
from nasenergy.oracles.embedded_build import build_embedded
from nasenergy.oracles.embedded_sources import ATTRIBUTION, MANIFEST, SOURCES, TABLES, tables_of
from nasenergy.oracles.store import save_benchmark
from nasenergy.oracles.tables import read_tables
from shared_files import require_shared

SHIPPED = embedded_dir()
ROOT = Path(__file__).resolve().parents[2]
MAX_BYTES = 2 * 1024 * 1024
ACCURACY_ROUNDING = 5e-5  # 4 decimals


@pytest.fixture(scope="session")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded tables built afresh from the shared data."""
    shared_dir = require_shared(*(s.file for s in SOURCES))
    out = tmp_path_factory.mktemp("embedded")
    build_embedded(shared_dir, out)
    return out


def test_the_shipped_files_are_what_the_build_writes(rebuilt: Path) -> None:
    names = sorted(p.name for p in rebuilt.iterdir())
    assert sorted(p.name for p in SHIPPED.iterdir() if p.is_file()) == names
    for name in names:
        assert (SHIPPED / name).read_bytes() == (rebuilt / name).read_bytes(), (
            f"{name} differs from the build: run `python -m nasenergy.benchmark build-embedded`")


def test_the_shipped_files_are_compact_and_plain() -> None:
    files = [p for p in SHIPPED.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in files) < MAX_BYTES
    for path in files:
        if path.name.endswith(".csv.gz"):
            with gzip.open(path, "rt") as fh:
                assert fh.readline().startswith("arch_index,")
        else:
            assert path.name in (MANIFEST, ATTRIBUTION)
            path.read_text(encoding="utf-8")


def test_the_package_data_ships_every_file() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["nasenergy"]
    for path in SHIPPED.iterdir():
        relative = path.relative_to(ROOT / "nasenergy").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_the_attribution_names_every_source_its_commit_and_licence() -> None:
    text = (SHIPPED / ATTRIBUTION).read_text()
    manifest = json.loads((SHIPPED / MANIFEST).read_text())
    assert "D-X-Y/NATS-Bench" in text and "MIT" in text
    for source in SOURCES:
        assert f"{source.repository} @ {source.commit}" in text and source.file in text
        assert manifest["sources"][source.file]["licence"] == source.licence
        assert len(manifest["sources"][source.file]["sha256"]) == 64
    for repository in ("v-tao/nats-bench-landscape", "alanoe/NATS-Bench-extractor", "vilhess/MONET"):
        assert repository in text.split("Repositories without a licence file")[1].split("\n")[0]
    for spec in TABLES:
        assert f"`{spec.name}`" in text and manifest["tables"][spec.name]["sources"] == list(spec.sources)


def test_the_embedded_values_equal_the_shared_tables(rebuilt: Path, shared_dir: Path, shared_tables) -> None:
    tss = load_embedded("tss")
    for key in tables_of("tss")[0].metrics:
        np.testing.assert_allclose(tss.mean(key), shared_tables.means[key], rtol=0, atol=ACCURACY_ROUNDING)
    recorded = np.isfinite(shared_tables.recorded_train_rate())
    np.testing.assert_allclose(tss.recorded_train_rate()[recorded],
                               shared_tables.recorded_train_rate()[recorded], rtol=1e-7)
    assert np.flatnonzero(np.isfinite(tss.recorded_train_rate())).tolist() == list(range(1000))
    model = fit_rate_model(shared_tables)
    np.testing.assert_allclose(tss.est_train_rate, model.train_rate_s_per_img, rtol=1e-5)
    np.testing.assert_allclose(tss.est_eval_rate, model.eval_rate_s_per_img, rtol=1e-5)
    sss, shared_sss = load_embedded("sss"), read_tables(shared_dir, "sss")
    for key in tables_of("sss")[0].metrics:
        np.testing.assert_allclose(sss.mean(key), shared_sss.means[key], rtol=0, atol=ACCURACY_ROUNDING)


def test_every_cell_is_answered_without_the_shared_data() -> None:
    for space_name, size in (("tss", 15_625), ("sss", 32_768)):
        data = load_embedded(space_name)
        assert data.size == size and data.provenance["kind"] == "embedded"
        for key in tables_of(space_name)[0].metrics:
            assert np.isfinite(data.mean(key)).all(), key
    tss = EmbeddedOracle("tss")
    assert tss.metrics == embedded_metrics("tss")
    for dataset in ("cifar10", "cifar100", "ImageNet16-120"):
        batch = tss.evaluate_many(np.arange(15_625), dataset, seed=0)
        assert set(batch.cost_source[:1000].tolist()) == {"recorded"}
        assert set(batch.cost_source[1000:].tolist()) == {"estimated"} and (batch.cost_s > 0).all()
    assert tss.report(6111, "cifar10").accuracy_pct == pytest.approx(94.3733)
    sss = EmbeddedOracle("sss", estimate="none")
    ev = sss.evaluate(0, "cifar10", seed=0)
    assert (ev.split, ev.schedule, ev.accuracy_pct) == ("x-valid", "90", pytest.approx(76.888))
    assert sss.report(0, "cifar10").accuracy_pct == pytest.approx(79.79)
    assert "90-epoch x-valid" in sss.describe()


def test_an_installed_benchmark_wins_only_when_it_covers_the_space(
        torch_dir: Path, isolated_home: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(load_oracle(None, "tss"), EmbeddedOracle)
    path = install(torch_dir, partial=True).path  # the official fixture: 3 of 15,625 architectures
    capsys.readouterr()
    assert isinstance(load_oracle(None, "tss"), EmbeddedOracle)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "covers 3 of the 15,625 tss architectures" in line and f"--benchmark {path}" in line
    assert isinstance(load_oracle(path, "tss"), CachedOracle)  # named: used
    save_benchmark(load_embedded("tss"), path)  # the embedded tables: every architecture
    capsys.readouterr()
    assert isinstance(load_oracle(None, "tss"), CachedOracle)  # complete: it wins, silently
    assert capsys.readouterr().err == ""


def test_damaged_embedded_tables(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkNotFoundError, match="no embedded benchmark"):
        load_embedded("tss", tmp_path)
    folder = tmp_path / "copy"
    shutil.copytree(SHIPPED, folder)
    (folder / "tss_cost_model.csv.gz").write_bytes(gzip.compress(b"arch_index,train_rate_s_per_img\n0,1\n"))
    with pytest.raises(CorruptBenchmarkError, match="lacks one of the columns") as info:
        load_embedded("tss", folder)
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    (folder / "sss_accuracy.csv.gz").unlink()
    with pytest.raises(BenchmarkNotFoundError, match="lacks sss_accuracy.csv.gz"):
        load_embedded("sss", folder)
    (folder / MANIFEST).write_text("{not json")
    with pytest.raises(CorruptBenchmarkError, match="manifest"):
        load_embedded("tss", folder)


def test_each_embedded_figure_says_which_runs_it_is_and_the_docs_and_attribution_agree() -> None:
    """An evaluation from the embedded tables is labelled with what the figure is (a mean over the
    recorded seeds, or one seed's run), and ATTRIBUTION.md, the manifest and the docs say the same."""
    from nasenergy.oracles.embedded_sources import figure_words

    attribution = (SHIPPED / ATTRIBUTION).read_text()
    manifest = json.loads((SHIPPED / MANIFEST).read_text())
    section = " ".join((ROOT / "docs" / "benchmarks.md").read_text().split())
    for spec in TABLES:
        if spec.kind != "accuracy":
            continue
        assert len(spec.seeds) == len(spec.metrics)
        oracle = EmbeddedOracle(spec.space)
        arch = oracle.data.arch_strs[7]
        for key, seed in spec.seed_of().items():
            words = figure_words(seed)
            assert f"| `{spec.name}` | {' / '.join(key)} | {words} |" in attribution
            assert manifest["tables"][spec.name]["figures"]["/".join(key)] == words
            assert key in oracle.data.means
            if seed is not None:
                assert f"seed {seed}" in section
        # the search metric's label, as a run's report reads it
        evaluation = oracle.evaluate(arch, "cifar100", seed=0)
        seed = spec.seed_of()[("cifar100", "x-valid", evaluation.schedule)]
        assert evaluation.trial == ("mean" if seed is None else f"seed:{seed}")
    cifar10 = EmbeddedOracle("tss").evaluate(EmbeddedOracle("tss").data.arch_strs[7], "cifar10", seed=0)
    assert cifar10.trial == "mean"
