"""The study's network key: a class member that deploys to another network is a network of its own."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from fake_parts import fake_components
from nasenergy.hardware.coverage import CLASS_UNIT, Coverage
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.network_key import PAIR_UNIT, measured_form, network_key_fn
from nasenergy.search.run_files import load_run
from nasenergy.testing import FakeMeter
from search_spaces import get_space

TSS = get_space("tss")
# One NAS-Bench-201 class, two deployed networks (101,306 and 129,306 deployed params).
A = TSS.parse("|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|")
B = TSS.parse("|nor_conv_1x1~0|+|avg_pool_3x3~0|skip_connect~1|+|avg_pool_3x3~0|skip_connect~1|skip_connect~2|")


def test_members_of_one_class_with_different_deployed_networks_get_different_keys():
    assert TSS.canonical(A) == TSS.canonical(B)
    assert TSS.count_deployed(A).params != TSS.count_deployed(B).params
    deployed, as_built = network_key_fn(TSS, "deployed"), network_key_fn(TSS, "as_built")
    assert deployed(A) != deployed(B) and deployed(A).startswith(str(TSS.canonical(A)) + " @ ")
    assert as_built(A) == as_built(B) == str(TSS.canonical(A))
    assert (deployed.unit, as_built.unit) == (PAIR_UNIT, CLASS_UNIT)


def test_the_key_counts_7837_tss_networks_and_every_sss_configuration_once():
    key = network_key_fn(TSS)
    assert len({key(a) for a in TSS.enumerate()}) == 7837
    sss = get_space("sss")
    arch = sss.arch_at(123)
    assert network_key_fn(sss)(arch) == str(sss.canonical(arch))  # no " @ " where nothing is added


def test_the_meter_decides_the_form():
    assert measured_form(FakeMeter()) == "deployed"

    class AsBuiltProfile:
        network_form = "as_built"

    assert measured_form(AsBuiltProfile()) == "as_built"


def test_coverage_of_older_runs_reads_without_a_unit():
    d = Coverage("p.csv.gz", "H200", "tss", "fp16", 1, 6466, 2, 15625).to_dict()
    d.pop("unit")
    old = Coverage.from_dict(d)
    assert old.unit == CLASS_UNIT and "of 6,466 canonical tss classes" in old.summary()
    pairs = dataclasses.replace(old, unit=PAIR_UNIT, total_classes=7837)
    assert "of 7,837 tss networks (canonical class and deployed structure)" in pairs.summary()


class _Scripted:
    """A space that proposes the given architectures in turn (everything else is the TSS space)."""

    def __init__(self, space: Any, archs: list[Any]) -> None:
        self._space, self._archs = space, list(archs)

    def suggest(self, trial: Any) -> Any:
        self._space.suggest(trial)
        return self._archs.pop(0) if self._archs else self._space.arch_at(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._space, name)


@pytest.mark.parametrize("keyed_by_pair", [True, False])
def test_a_search_evaluates_the_second_deployed_network_of_a_class(tmp_path, fake_env, keyed_by_pair):
    def parts(config: SearchConfig):
        built = fake_components(config)
        return dataclasses.replace(built, space=_Scripted(built.space, [A, B, A, B]),
                                   network_key=built.network_key if keyed_by_pair else None)

    config = SearchConfig(budget=2, dvfs="none", out=str(tmp_path / "run"), quiet=True, filter="none",
                          sampler="random", max_candidates=4, patience=0)
    run_search(config, components_factory=parts)
    rows = load_run(tmp_path / "run").rows
    outcomes = [r["outcome"] for r in rows]
    if keyed_by_pair:
        assert outcomes[:2] == ["evaluated", "evaluated"]
        first, second = rows[0], rows[1]
        assert first["canonical"] == second["canonical"] and first["network"] != second["network"]
        # each row carries its own network's figures
        assert {first["params_measured"], second["params_measured"]} == {101306, 129306}
        assert set(outcomes[2:]) <= {"duplicate"}
    else:  # keyed by class, the second member is answered with the first member's figures
        assert outcomes[:2] == ["evaluated", "duplicate"]
        assert rows[1]["params_measured"] == rows[0]["params_measured"]
