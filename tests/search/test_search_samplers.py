"""nasenergy.search.sampling.samplers: --sampler names a registered sampler, built-in or the user's own."""

from __future__ import annotations

import pytest

optuna = pytest.importorskip("optuna")

from nasenergy.errors import UsageError  # noqa: E402
from nasenergy.search.command import cli  # noqa: E402
from nasenergy.search.sampling.samplers import SAMPLER_KINDS, SamplerKind, register_sampler  # noqa: E402
from nasenergy.search.sampling.study import make_sampler  # noqa: E402


def test_the_built_in_samplers_are_registered_and_seeded():
    assert SAMPLER_KINDS.names()[:3] == ("tpe", "nsga2", "random")
    assert isinstance(make_sampler("nsga2", seed=1, budget=400), optuna.samplers.NSGAIISampler)
    assert make_sampler("nsga2", seed=1, budget=400)._population_size == 50
    assert make_sampler("nsga2", seed=1, budget=8)._population_size == 8
    assert isinstance(make_sampler("random", seed=1, budget=10), optuna.samplers.RandomSampler)


def test_an_unknown_sampler_is_one_line_naming_the_choices():
    with pytest.raises(UsageError) as err:
        make_sampler("annealing", seed=0, budget=10)
    assert str(err.value) == "--sampler: 'annealing' is not one of tpe, nsga2, random"


def test_a_registered_sampler_is_named_on_the_command_line_and_drives_the_search(tmp_path, capsys):
    built: list[tuple[int, int]] = []

    class CountingRandom(optuna.samplers.RandomSampler):
        calls = 0

        def sample_independent(self, *args, **kwargs):
            CountingRandom.calls += 1
            return super().sample_independent(*args, **kwargs)

    def counting(*, seed: int, budget: int):
        built.append((seed, budget))
        return CountingRandom(seed=seed)

    register_sampler(SamplerKind("counting-random", counting))
    try:
        assert "counting-random" in " ".join(cli.build_parser().format_help().split())
        code = cli.main(["--sampler", "counting-random", "--budget", "3", "--seed", "5",
                         "--out", str(tmp_path / "run"), "--quiet"])
        assert code == 0, capsys.readouterr().err
        assert built and built[0] == (5, 3)
        assert CountingRandom.calls > 0
        assert "counting-random" in (tmp_path / "run" / "config.json").read_text()
    finally:
        SAMPLER_KINDS.unregister("counting-random")
    with pytest.raises(SystemExit) as exit_:  # argparse refuses it, in one line
        cli.main(["--sampler", "counting-random", "--budget", "3", "--out", str(tmp_path / "other")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "counting-random" in err[0]
