"""Settings: defaults, validation and the study-defining fields."""

from __future__ import annotations

import json

import pytest

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.search.command.config import SearchConfig, parse_objectives


def test_defaults_are_valid_and_derive_names():
    cfg = SearchConfig().validate()
    assert cfg.resolved_study_name == "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0"
    assert str(cfg.out_dir) == f"runs/{cfg.resolved_study_name}"
    assert cfg.candidate_cap == 50 * cfg.budget
    assert cfg.objectives == ("accuracy", "throughput", "energy")


def test_default_study_names_differ_in_every_study_defining_setting():
    from nasenergy.search.command.config import STUDY_DEFINING

    base = SearchConfig()
    changed = {"space": "sss", "dataset": "cifar100", "objectives": ("accuracy", "throughput"),
               "precision": "fp32", "batch_size": 256, "filter": "none", "target_recall": 0.5, "dvfs": "none",
               "min_accuracy": 80.0}
    assert set(changed) == set(STUDY_DEFINING)
    names = {base.resolved_study_name}
    for key, value in {**changed, "sampler": "nsga2", "seed": 1}.items():
        names.add(SearchConfig(**{key: value}).validate().resolved_study_name)
    assert len(names) == len(changed) + 3
    assert SearchConfig(filter="threshold").resolved_study_name != SearchConfig(filter="none").resolved_study_name
    assert SearchConfig(study_name="mine").resolved_study_name == "mine"
    assert len(SearchConfig(space="sss", dataset="ImageNet16-120", precision="bf16", batch_size=65536,
                            seed=10**9, filter="threshold").validate().resolved_study_name) <= 100


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"budget": 0}, "--budget"),
        ({"batch_size": 0}, "--batch-size"),
        ({"target_recall": 0.0}, "--target-recall"),
        ({"target_recall": 1.5}, "--target-recall"),
        ({"workers": 0}, "--workers"),
        ({"seed": -1}, "--seed"),
        ({"budget": 10, "max_candidates": 5}, "--max-candidates"),
        ({"lease_s": 1.0}, "--lease-s"),
        ({"db_retry_s": -1.0}, "--db-retry-s"),
        ({"db_retry_s": float("nan")}, "--db-retry-s"),
        ({"space": "xyz"}, "--space"),
        ({"objectives": ()}, "--objectives"),
        ({"objectives": ("accuracy", "accuracy")}, "twice"),
        ({"dvfs": "measured"}, "--allow-clock-control"),
        ({"study_name": "has space"}, "--study-name"),
        ({"study_name": "../escape"}, "--study-name"),
        ({"objectives": ("throughput", "energy")}, "--filter none"),
    ],
)
def test_bad_values_raise_one_line_usage_errors(kwargs, fragment):
    with pytest.raises(UsageError) as ei:
        SearchConfig(**kwargs).validate()
    assert fragment in str(ei.value)
    assert "\n" not in str(ei.value)
    assert ei.value.exit_code == 2


def test_missing_benchmark_and_out_that_is_a_file(tmp_path):
    with pytest.raises(DataNotFoundError):
        SearchConfig(benchmark=str(tmp_path / "nope.npz")).validate()
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        SearchConfig(out=str(f)).validate()


def test_parse_objectives_orders_and_rejects():
    assert parse_objectives("energy, accuracy") == ("accuracy", "energy")
    for bad in ("", "speed", "accuracy,accuracy"):
        with pytest.raises(UsageError):
            parse_objectives(bad)


def test_round_trip_keeps_the_study_defining_fields():
    cfg = SearchConfig(budget=12, objectives=("accuracy", "energy"), study_name="x", precision="fp32")
    back = SearchConfig.from_dict(cfg.to_dict())
    assert back.study_defining() == cfg.study_defining()
    assert back.budget == 12 and back.objectives == ("accuracy", "energy")
    assert cfg.study_defining()["precision"] == "fp32"
    assert "seed" not in cfg.study_defining() and "budget" not in cfg.study_defining()


def test_target_recall_defaults_per_filter_and_is_stored_resolved():
    from nasenergy.search.command.config import DEFAULT_TARGET_RECALL

    assert SearchConfig(filter="dominance").target_recall == DEFAULT_TARGET_RECALL["dominance"] == 0.95
    assert SearchConfig(filter="threshold").target_recall == DEFAULT_TARGET_RECALL["threshold"] == 0.95
    assert SearchConfig(filter="dominance", target_recall=0.5).target_recall == 0.5
    assert SearchConfig().to_dict()["target_recall"] == 0.95
    assert SearchConfig().study_defining()["target_recall"] == 0.95


def test_the_size_space_filter_defaults_to_target_recall_065():
    """The dominance filter's default recall is the space's (0.65 in the size space, chosen on
    the tuning seeds); other filters, the topology space and a given value are untouched."""
    sss = SearchConfig(space="sss")
    assert sss.target_recall == 0.65 and "-dominance0.65-" in sss.default_study_name
    assert SearchConfig(space="sss", filter="threshold").target_recall == 0.95
    assert SearchConfig(space="sss", target_recall=0.95).target_recall == 0.95
    assert SearchConfig(space="tss").target_recall == 0.95
    assert SearchConfig.from_dict(sss.to_dict()).target_recall == 0.65


def test_the_search_metric_reaches_the_oracle_and_defines_the_study_only_when_changed():
    from nasenergy.search.command.components import search_metrics

    metrics = search_metrics(SearchConfig(search_metric="test/200"))
    assert (metrics.search.split, metrics.search.schedule, metrics.search.trial) == ("test", "200", "random")
    assert search_metrics(SearchConfig()).search.schedule == "12"
    assert "search_metric" not in SearchConfig().study_defining()  # studies made before the flag resume
    assert SearchConfig(search_metric="test/200").study_defining()["search_metric"] == "test/200"


def test_a_run_folder_of_another_study_is_refused_in_one_line(tmp_path):
    from nasenergy.search.command.config import check_run_folder

    stored = SearchConfig(out=str(tmp_path / "run"), filter="dominance")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.json").write_text(json.dumps(stored.to_dict()))
    check_run_folder(stored)  # the same study resumes
    with pytest.raises(UsageError, match="filter: stored 'dominance', given 'none'") as info:
        check_run_folder(SearchConfig(out=str(tmp_path / "run"), filter="none"))
    assert "\n" not in str(info.value) and "use another --out" in str(info.value)


def test_the_default_search_metric_is_the_benchmarks_own_protocol(monkeypatch):
    import nasenergy.search.command.components as components

    class Loaded(Exception):
        pass

    seen = {}

    def load(*args, **kw):
        seen.update(kw)
        raise Loaded

    monkeypatch.setattr(components, "load_oracle", load)
    with pytest.raises(Loaded):
        components.build_components(SearchConfig(space="sss", hardware="cpu", objectives=("accuracy", "throughput"),
                                                 precision="fp32", batch_size=256, quiet=True))
    assert seen["metrics"] is None  # the embedded SSS tables choose 90-epoch x-valid themselves
    with pytest.raises(Loaded):
        components.build_components(SearchConfig(search_metric="test/200", hardware="cpu", quiet=True,
                                                 objectives=("accuracy", "throughput"), precision="fp32", batch_size=256))
    assert seen["metrics"].search.schedule == "200"


def test_budget_keeping_settings_name_the_study_only_when_changed():
    base = SearchConfig()
    assert base.budget_keeping_changed() == {}
    assert not {"redirect_after", "filter_yield_after", "filter_yield_top"} & set(base.study_defining())
    names = {base.resolved_study_name}
    for kw in ({"redirect_after": 0}, {"redirect_after": 3}, {"filter_yield_after": 0},
               {"filter_yield_after": 20}, {"filter_yield_top": 0.1}):
        cfg = SearchConfig(**kw).validate()
        names.add(cfg.resolved_study_name)
        (name, value), = kw.items()
        assert cfg.study_defining()[name] == value  # a joining worker or resumed run must agree
        assert SearchConfig.from_dict(json.loads(json.dumps(cfg.public_dict()))).resolved_study_name \
            == cfg.resolved_study_name
    assert len(names) == 6
    both = SearchConfig(redirect_after=0, filter_yield_after=0)
    assert both.resolved_study_name == base.resolved_study_name.replace("-seed0", "-yield0-redirect0-seed0")


@pytest.mark.parametrize("kw, flag", [({"redirect_after": -1}, "--redirect-after"),
                                      ({"filter_yield_after": 1.5}, "--filter-yield-after"),
                                      ({"filter_yield_top": 0.0}, "--filter-yield-top"),
                                      ({"filter_yield_top": 2.0}, "--filter-yield-top")])
def test_budget_keeping_settings_are_checked(kw, flag):
    with pytest.raises(UsageError, match=flag):
        SearchConfig(**kw).validate()
