"""Every spelling of a dataset resolves to the same name everywhere a dataset is named: the one
resolver (`search_spaces.canonical_dataset`), the networks' shapes, the oracles, the proxies'
input statistics, `SearchConfig` and the command lines of the search, the profiler, the proxies and
the benchmark tool."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from search_spaces import DATASET_ALIASES, DATASETS, canonical_dataset, dataset_info, get_space

SPELLINGS: list[tuple[str, str]] = sorted(
    {(name, name) for name in DATASETS}
    | {(name.upper(), name) for name in DATASETS}
    | {(alias, name) for alias, name in DATASET_ALIASES.items()}
    | {(alias.upper(), name) for alias, name in DATASET_ALIASES.items()}
    | {(f" {alias} ", name) for alias, name in DATASET_ALIASES.items()}
)
"""(spelling, the dataset it means): every name and alias, in lower and upper case and padded."""


def test_the_spellings_cover_the_reported_disagreement():
    assert ("cifar-10", "cifar10") in SPELLINGS and ("imagenet16", "ImageNet16-120") in SPELLINGS


@pytest.mark.parametrize(("spelling", "name"), SPELLINGS)
def test_library_readers_agree(spelling, name):
    from nasenergy.oracles import canonical_dataset as oracle_canonical
    from nasenergy.oracles import resolve
    from nasenergy.proxies.data import CHANNEL_STATS, make_batch
    from nasenergy.search import SearchConfig

    assert canonical_dataset(spelling) == name
    assert oracle_canonical(spelling) == name
    assert dataset_info(spelling) == dataset_info(name)
    for space in ("tss", "sss"):
        assert get_space(space).input_shape(spelling) == get_space(space).input_shape(name)
    assert resolve(spelling, "ori-test") == resolve(name, "ori-test")
    assert resolve(spelling, "x-valid") == resolve(name, "x-valid")
    config = SearchConfig(dataset=spelling).validate()
    assert config.dataset == name
    assert config.default_study_name == SearchConfig(dataset=name).default_study_name
    assert name in CHANNEL_STATS
    pytest.importorskip("sklearn")
    pytest.importorskip("torch")
    shape = dataset_info(name).input_shape
    try:
        got = make_batch(shape, 10, batch_size=2, data="photos", dataset=spelling, seed=3)
    except UsageError as exc:  # no Pillow: the photos batch cannot be made at all
        pytest.skip(str(exc))
    want = make_batch(shape, 10, batch_size=2, data="photos", dataset=name, seed=3)
    assert bool((got.images == want.images).all())


@pytest.mark.parametrize(("spelling", "name"), SPELLINGS)
def test_command_lines_agree(spelling, name):
    from nasenergy import profile
    from nasenergy.proxies import cli as proxies_cli
    from nasenergy.search.command import cli as search_cli

    arch = str(get_space("tss").arch_at(0))
    search_args = search_cli.build_parser().parse_args(["--dataset", spelling])
    assert search_args.dataset == name
    assert search_cli.config_from_args(search_args).dataset == name
    assert profile.build_parser().parse_args(["--arch", arch, "--dataset", spelling]).dataset == name
    assert proxies_cli.build_parser().parse_args(["--arch", arch, "--dataset", spelling]).dataset == name


@pytest.mark.parametrize(("spelling", "name"), [(s, n) for s, n in SPELLINGS if s.strip() == s])
def test_benchmark_queries_agree(spelling, name, tmp_path, monkeypatch):
    import io

    from nasenergy.benchmark import main

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))

    def query(dataset: str) -> str:
        out, err = io.StringIO(), io.StringIO()
        assert main(["query", "0", "--dataset", dataset, "--cache-dir", str(tmp_path)], out=out, err=err) == 0
        return out.getvalue()

    assert query(spelling) == query(name) and f"on {name} " in query(name)


@pytest.mark.parametrize("bad", ["mnist", "cifar-1000", "", "cifar10-valid"])
def test_an_unknown_spelling_is_one_line_everywhere(bad, capsys):
    from nasenergy import profile
    from nasenergy.oracles import canonical_dataset as oracle_canonical
    from nasenergy.search import SearchConfig
    from nasenergy.search.command import cli as search_cli

    for resolver in (canonical_dataset, oracle_canonical):
        with pytest.raises(UsageError) as info:
            resolver(bad)
        assert "\n" not in str(info.value)
    if bad == "cifar10-valid":  # a NATS training set: its networks and inputs are CIFAR-10's
        assert dataset_info(bad) == dataset_info("cifar10")
    else:
        with pytest.raises(UsageError, match="unknown dataset"):
            get_space("tss").input_shape(bad)
    with pytest.raises(UsageError, match="--dataset"):
        SearchConfig(dataset=bad).validate()
    for parser in (search_cli.build_parser(), profile.build_parser()):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(["--arch", "x", "--dataset", bad] if parser.prog.endswith("profile")
                              else ["--dataset", bad])
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error: argument --dataset:") and err.count("\n") == 1
