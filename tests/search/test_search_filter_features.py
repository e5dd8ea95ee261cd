"""``--filter-features``: the groups, the study name, the refusals, and what the filter and the
screener of a run read."""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pytest
from fake_parts import fake_components

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.filter.feature_providers import FEATURE_PROVIDERS, FeatureProviderKind, register_feature_provider
from nasenergy.filter.features import CHEAP_FEATURE_NAMES
from nasenergy.proxies import table as proxy_table
from nasenergy.proxies.features import proxy_features
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.cli import main
from nasenergy.search.command.filter_features import (
    DEFAULT_FILTER_FEATURES,
    PROXY_FEATURES,
    UNNAMED_FILTER_FEATURES,
    cheap_columns,
    extra_features,
    parse_filter_features,
)
from search_spaces import get_space

SIZE = ("log10_flops_per_img", "log10_params")


# ----- groups -------------------------------------------------------------------------------------

def test_groups_are_parsed_in_their_canonical_order():
    assert parse_filter_features("structure, size ,measured") == UNNAMED_FILTER_FEATURES
    assert parse_filter_features("structure,size") == DEFAULT_FILTER_FEATURES
    assert parse_filter_features("proxies,size") == ("size", "proxies")
    assert cheap_columns(UNNAMED_FILTER_FEATURES) == CHEAP_FEATURE_NAMES
    assert cheap_columns(DEFAULT_FILTER_FEATURES) == SIZE
    assert cheap_columns(("size",)) == SIZE
    assert cheap_columns(("structure", "proxies")) == ()


@pytest.mark.parametrize(("text", "fragment"), [
    ("size,flops", "'flops' is not one of"), ("", "at least one"), ("size,size", "twice"),
    ("proxies,proxies-live", "choose one"),
])
def test_bad_groups_are_refused(text, fragment):
    with pytest.raises(UsageError, match=fragment):
        parse_filter_features(text)


def test_a_bad_group_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["--budget", "3", "--hardware", "recorded", "--out", str(tmp_path / "run"),
                 "--filter-features", "size,bogus"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and "--filter-features" in err and "bogus" in err
    assert not (tmp_path / "run").exists()


# ----- the settings -------------------------------------------------------------------------------

def test_the_study_name_says_every_group_set_but_the_one_of_older_studies():
    default = SearchConfig().validate()
    assert default.resolved_study_name == "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0"
    assert default.study_defining()["filter_features"] == ["size", "structure"]
    older = SearchConfig(filter_features=UNNAMED_FILTER_FEATURES).validate()  # the default before size,structure
    assert older.resolved_study_name == "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-dvfs.auto-tpe-seed0"
    assert "filter_features" not in older.study_defining()
    nofilter = SearchConfig(filter="none").validate()
    assert "-feat" not in nofilter.resolved_study_name and "filter_features" not in nofilter.study_defining()
    size = SearchConfig(filter_features=("size",)).validate()
    proxies = SearchConfig(filter_features=("proxies", "size")).validate()
    assert size.resolved_study_name == "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size-dvfs.auto-tpe-seed0"
    assert "-feat.size.proxies-" in proxies.resolved_study_name
    assert len({default.resolved_study_name, size.resolved_study_name, proxies.resolved_study_name,
                older.resolved_study_name}) == 4
    assert size.study_defining()["filter_features"] == ["size"]
    # the order given does not matter
    assert SearchConfig(filter_features=("structure", "size", "measured")).resolved_study_name == older.resolved_study_name
    assert SearchConfig(filter_features=("structure", "size")).resolved_study_name == default.resolved_study_name


def test_the_groups_round_trip_through_config_json():
    cfg = SearchConfig(filter_features=("size", "proxies"))
    d = json.loads(json.dumps(cfg.public_dict()))
    assert d["filter_features"] == ["size", "proxies"]
    assert SearchConfig.from_dict(d).filter_features == ("size", "proxies")
    assert SearchConfig.from_dict(d).resolved_study_name == cfg.resolved_study_name
    old = {k: v for k, v in SearchConfig().to_dict().items() if k != "filter_features"}  # before the flag
    assert SearchConfig.from_dict(old).filter_features == UNNAMED_FILTER_FEATURES


@pytest.mark.parametrize("filt", ["none", "threshold"])
def test_a_filter_that_reads_no_features_refuses_other_groups_unless_screening(filt):
    SearchConfig(filter=filt).validate()  # the default says nothing
    with pytest.raises(UsageError, match=f"--filter {filt} without --screen reads none"):
        SearchConfig(filter=filt, filter_features=("size",)).validate()
    SearchConfig(filter=filt, filter_features=("size",), screen=4).validate()


# ----- the feature functions ----------------------------------------------------------------------

def _table_rows() -> list[dict[str, str]]:
    return proxy_table.read_rows(proxy_table.default_table_path("tss"))


def test_the_proxies_group_reads_the_recorded_table_and_missing_networks_are_nan(tmp_path, monkeypatch):
    space = get_space("tss")
    fn = extra_features(("size", "proxies"), space, "cifar10", "recorded")
    assert fn is not None and len(fn.names) == len(PROXY_FEATURES)
    rows = [r for r in _table_rows() if r["dataset"] == "cifar10"]
    table = proxy_table.ProxyTable.read(space)
    for row in rows[:3]:
        want = proxy_features(table.report(row["arch"], "cifar10"), PROXY_FEATURES)
        assert np.array_equal(fn(row["arch"]), want) and np.isfinite(want).any()
    path = tmp_path / "tss_proxies.csv.gz"  # a partial table: five networks
    with gzip.open(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=proxy_table.TABLE_COLUMNS)
        w.writeheader()
        w.writerows(rows[:5])
    monkeypatch.setattr(proxy_table, "default_table_path", lambda space: path)
    partial = extra_features(("size", "proxies"), space, "cifar10", "recorded")
    small = proxy_table.ProxyTable.read(space)
    absent = next(a for a in space.enumerate() if ("cifar10", a) not in small)
    assert np.isnan(partial(absent)).all() and partial(absent).shape == (len(PROXY_FEATURES),)
    assert np.array_equal(partial(rows[0]["arch"]), fn(rows[0]["arch"]))


def test_structure_alone_is_the_space_s_features_and_cheap_groups_have_none():
    space = get_space("tss")
    arch = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|none~0|avg_pool_3x3~1|nor_conv_3x3~2|"
    assert np.array_equal(extra_features(DEFAULT_FILTER_FEATURES, space, "cifar10", "recorded")(arch),
                          np.asarray(space.features(arch), dtype=float))
    assert extra_features(("measured", "size"), space, "cifar10", "recorded") is None


def test_a_dataset_without_rows_is_refused_at_the_start(tmp_path, monkeypatch):
    rows = [r for r in _table_rows() if r["dataset"] == "cifar10"][:5]
    path = tmp_path / "tss_proxies.csv.gz"
    with gzip.open(path, "wt", newline="") as f:
        w = csv.DictWriter(f, fieldnames=proxy_table.TABLE_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setattr(proxy_table, "default_table_path", lambda space: path)
    space = get_space("tss")
    assert extra_features(("proxies",), space, "cifar10", "recorded") is not None
    with pytest.raises(UsageError, match="no row for cifar100"):
        extra_features(("proxies",), space, "cifar100", "recorded")
    monkeypatch.setattr(proxy_table, "default_table_path", lambda space: tmp_path / "absent.csv.gz")
    with pytest.raises(DataNotFoundError, match="--filter-features proxies"):
        extra_features(("proxies",), space, "cifar10", "recorded")


class _CountingProxies:
    calls: list[tuple[str, str]] = []

    def __init__(self, space, dataset="cifar10", device="cpu", proxies=()):
        self.device, self.names = device, tuple(proxies)

    def __call__(self, candidate):
        _CountingProxies.calls.append((str(candidate), self.device))
        return np.arange(len(self.names), dtype=float)


def test_live_proxies_run_on_the_meter_s_device_once_per_network():
    space = get_space("tss")
    old = FEATURE_PROVIDERS.get("proxies-live")
    register_feature_provider(FeatureProviderKind("proxies-live", _CountingProxies), replace=True)
    try:
        _CountingProxies.calls = []
        fn = extra_features(("proxies-live",), space, "cifar10", "cuda")
        arch = space.parse("|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|none~0|avg_pool_3x3~1|nor_conv_3x3~2|")
        assert fn(arch).tolist() == fn(str(arch)).tolist() == list(range(len(PROXY_FEATURES)))
        assert [d for _, d in _CountingProxies.calls] == ["cuda"]
        _CountingProxies.calls = []
        extra_features(("proxies-live",), space, "cifar10", "recorded")(arch)
        assert [d for _, d in _CountingProxies.calls] == ["cpu"]
    finally:
        register_feature_provider(old, replace=True)


# ----- a run --------------------------------------------------------------------------------------

def _spied(seen: list):
    def factory(config):
        comp = fake_components(config)
        seen.append(comp)
        return comp
    return factory


def _run(tmp_path, name, **kw):
    seen: list = []
    cfg = SearchConfig(budget=24, dvfs="none", filter="dominance", quiet=True, out=str(tmp_path / name), **kw)
    summary = run_search(cfg, components_factory=_spied(seen))
    assert summary.evaluated == 24
    return seen[0], load_run(tmp_path / name)


def test_the_default_run_gives_the_filter_the_sizes_and_the_structure(tmp_path, fake_env):
    comp, run = _run(tmp_path, "default")
    flt, space = comp.filter, comp.space
    assert flt.cheap_columns == SIZE
    evaluated = {tuple(np.asarray(space.features(r["arch"]), dtype=float)) for r in run.evaluated}
    assert flt.n_observed >= 23
    assert all(o.features in evaluated for o in flt.observations)
    assert "accuracy model features (--filter-features): size,structure" in (run.run_dir / "report.md").read_text()


def test_the_older_default_gives_the_filter_the_five_columns_and_the_structure(tmp_path, fake_env):
    comp, run = _run(tmp_path, "older", filter_features=UNNAMED_FILTER_FEATURES)
    flt, space = comp.filter, comp.space
    assert flt.cheap_columns == CHEAP_FEATURE_NAMES
    evaluated = {tuple(np.asarray(space.features(r["arch"]), dtype=float)) for r in run.evaluated}
    assert all(o.features in evaluated for o in flt.observations)
    assert "accuracy model features (--filter-features): measured,size,structure" in (run.run_dir / "report.md").read_text()


def test_a_size_only_run_gives_the_filter_two_columns_and_no_structure(tmp_path, fake_env):
    comp, run = _run(tmp_path, "size", filter_features=("size",), screen=3)
    flt = comp.filter
    assert flt.cheap_columns == SIZE
    assert flt.n_observed >= 23 and all(o.features is None for o in flt.observations)
    assert json.loads((run.run_dir / "config.json").read_text())["filter_features"] == ["size"]
    assert "-feat.size-" in run.name
    assert "(--filter-features): size" in (run.run_dir / "report.md").read_text()
    assert any(r["filter_admit"] is False for r in run.rows)  # the filter decided


def test_a_run_with_recorded_proxies_survives_networks_the_table_lacks(tmp_path, fake_env, monkeypatch):
    import gzip

    rows = _table_rows()
    part = tmp_path / "part.csv.gz"  # a table that lacks most networks
    with gzip.open(part, "wt", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([r for r in rows if r["dataset"] == "cifar10"][:100])
    monkeypatch.setattr(proxy_table, "default_table_path", lambda space: part)
    comp, run = _run(tmp_path, "proxies", filter_features=("size", "proxies"))
    obs = comp.filter.observations
    assert all(len(o.features) == len(PROXY_FEATURES) for o in obs)
    assert any(np.isnan(o.features).all() for o in obs)  # most networks have no row yet
