"""A tiny run of experiments/example_custom_nas_filter.py (real CPU measurement and training)."""

from __future__ import annotations

import pytest

from nasenergy.filter import DominanceFilter, UtilizationFilter


@pytest.fixture(scope="module")
def example(load_experiment):
    return load_experiment("example_custom_nas_filter")


def test_example_runs_and_saves_its_filter(example, tmp_path, capsys) -> None:
    path = tmp_path / "filter.json"
    code = example.main(["--budget", "4", "--max-trials", "6", "--min-fit", "3", "--epochs", "1",
                         "--threads", "1", "--save", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "4 trained" in out and "front" in out
    flt = UtilizationFilter.load(path)
    assert isinstance(flt, DominanceFilter) and flt.n_observed == 4
    assert flt.objectives == ("accuracy", "throughput")
    assert all(o.measurement.source == "measured" for o in flt.observations)


def test_each_network_is_trained_and_listed_once(example, capsys) -> None:
    """The sampler repeats networks of this small space; a repeat is neither measured, trained nor
    listed on the front a second time."""
    code = example.main(["--budget", "10", "--max-trials", "40", "--min-fit", "3", "--epochs", "1",
                         "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "10 trained" in out
    networks = [line[line.index("{"):line.index("}") + 1] for line in out.splitlines() if line.startswith("  trial ")]
    assert networks and len(networks) == len(set(networks))
    repeats = int(out.split(" repeats of a network")[0].rsplit(" ", 1)[1])
    assert repeats > 0  # the run met repeats, so the check above could fail


def test_example_rejects_bad_flags(example, capsys) -> None:
    assert example.main(["--budget", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert example.main(["--target-recall", "1"]) == 2


def test_example_that_cannot_reach_its_budget_says_so_and_exits_3(example, capsys) -> None:
    """Repeats of this small space use up the trial cap before ten networks are trained."""
    code = example.main(["--budget", "10", "--max-trials", "10", "--mode", "none", "--epochs", "1", "--threads", "1"])
    captured = capsys.readouterr()
    trained = int(captured.out.split(" trained")[0].rsplit(" ", 1)[1])
    assert trained < 10 and code == example.EXIT_BUDGET_NOT_REACHED == 3
    assert f"stopped: {trained} of --budget 10 networks trained" in captured.err
