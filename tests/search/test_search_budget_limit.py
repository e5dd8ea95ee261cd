"""Honest limits: a budget larger than the networks a run can evaluate (deployed networks that can
learn, within a partial profile's coverage) is refused at the start with one line and exit 2,
naming the number, before any storage or run folder is touched."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.run.network_key import network_key_fn
from nasenergy.search import SearchConfig
from nasenergy.search.command.cli import main
from nasenergy.search.command.coverage import check_budget_reachable, learnable_networks
from search_spaces import get_space


def test_tss_counts_the_deployed_networks_that_can_learn():
    space = get_space("tss")
    key_of = network_key_fn(space, "deployed")
    keys = {key_of(a) for a in space.enumerate()}
    dead = {key_of(a) for a in space.enumerate() if not space.output_depends_on_input(a)}
    assert learnable_networks(space, key_of) == len(keys) - len(dead) < len(keys)
    # a partial profile: only the cells it covers count
    first = {key_of(space.arch_at(i)) for i in range(100) if space.output_depends_on_input(space.arch_at(i))}
    assert learnable_networks(space, key_of, covers=lambda a: space.index(a) < 100) == len(first)


def test_the_check_names_the_number():
    check_budget_reachable(SearchConfig(budget=6016), None, 6016)
    with pytest.raises(UsageError, match=r"--budget 6017 .* 6,016 networks that can learn.*at most 6016$"):
        check_budget_reachable(SearchConfig(budget=6017), None, 6016)


@pytest.mark.parametrize("space, budget, limit", [("tss", 7000, "6016"), ("sss", 5000, "4096")])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_budget_above_the_networks_is_refused_before_any_work(tmp_path, capsys, space, budget, limit, workers):
    out = tmp_path / "run"
    code = main(["--space", space, "--budget", str(budget), "--hardware", "recorded", "--workers", str(workers),
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and f"--budget {budget} needs" in err[0] and f"at most {limit}" in err[0]
    assert not out.exists()
