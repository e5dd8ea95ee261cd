"""A recorded profile that holds only some networks: the others are `not_recorded`, cost no budget,
and the run says how much of the space it covered."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
from fake_parts import fake_components

from nasenergy.errors import UsageError
from nasenergy.hardware.recorded import NotRecordedError
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.coverage import Coverage, candidate_cap, check_budget_reachable

COVERAGE = Coverage("p.csv.gz", "NVIDIA H200", "tss", "fp16, batch 1024, input 3x32x32", 1527, 6466, 9410, 15625)


def _config(tmp_path, **kw) -> SearchConfig:
    base = dict(budget=12, dvfs="modelled", out=str(tmp_path / "run"), quiet=True, filter="none")
    return SearchConfig(**{**base, **kw})


def partial_profile(config: SearchConfig):
    """The fake parts, as if a recorded profile lacked every class whose index is a multiple of 3."""
    parts = fake_components(config)
    measure, space = parts.measure, parts.space

    def missing(arch) -> bool:
        return space.index(space.canonical(arch)) % 3 == 0

    def measure_recorded(arch):
        if missing(arch):
            raise NotRecordedError(f"no record of {space.canonical(arch)}")
        return measure(arch)

    classes = space.canonical_classes()
    parts.measure = measure_recorded
    parts.coverage = Coverage(
        "fake.csv", "fake H200", "tss", "fp16", sum(not missing(c) for c in classes), len(classes),
        sum(not missing(a) for a in space.enumerate()), space.size,
    )
    return parts


def test_unrecorded_networks_are_listed_cost_no_budget_and_are_counted(tmp_path, fake_env):
    summary = run_search(_config(tmp_path), components_factory=partial_profile)
    run = load_run(tmp_path / "run")
    outcomes = Counter(r["outcome"] for r in run.rows)
    assert summary.complete and summary.stop_reason == "budget"
    assert outcomes["evaluated"] == 12 and outcomes["not_recorded"] > 0 and outcomes["failed"] == 0
    assert summary.outcomes["not_recorded"] == outcomes["not_recorded"]
    first_seen: dict[str, int] = {}
    for r in run.rows:
        if r["outcome"] != "not_recorded":
            continue
        # Told to the sampler as pruned, never measured, no figures at all.
        assert r["state"] == "PRUNED" and "no record of" in r["error"]
        assert r["measure_source"] is None and r["accuracy_pct"] is None and r["utilization"] is None
        if r["duplicate_of"] is None:
            assert r["canonical"] not in first_seen
            first_seen[r["canonical"]] = r["trial_number"]
        else:  # a repeat points at the first candidate of its class
            assert first_seen[r["canonical"]] == r["duplicate_of"]
    report = (run.run_dir / "report.md").read_text()
    assert f"not recorded {outcomes['not_recorded']}" in report
    assert "the search effectively ran over those" in report
    # The default cap grows with the share of cells the profile cannot answer.
    worker = next(iter(run.env["workers"].values()))
    coverage = Coverage.from_dict(worker["coverage"])
    assert worker["candidate_cap"] == math.ceil(50 * 12 / coverage.cell_fraction) > 50 * 12


def test_the_cap_and_the_budget_check():
    config = SearchConfig(budget=200)
    assert candidate_cap(config, None) == 10_000
    assert candidate_cap(config, COVERAGE) == math.ceil(10_000 * 15625 / 9410)
    assert candidate_cap(SearchConfig(budget=200, max_candidates=300), COVERAGE) == 300  # as given
    check_budget_reachable(SearchConfig(budget=1527), COVERAGE)
    with pytest.raises(UsageError, match=r"--budget 2000 needs 2000 distinct networks.*1,527 of 6,466.*at most 1527"):
        check_budget_reachable(SearchConfig(budget=2000), COVERAGE)


@pytest.mark.slow
def test_the_shipped_profile_with_the_dominance_filter(tmp_path, table_path):
    """The default parts on a machine without a GPU: the recorded H200 profile, the modelled DVFS
    step and the dominance filter with the model's energy bound, which skips candidates."""
    from nasenergy.search.command.components import build_components

    config = _config(tmp_path, budget=60, hardware="recorded", benchmark=str(table_path), filter="dominance",
                     target_recall=0.9)
    summary = run_search(config, components_factory=build_components)
    run = load_run(tmp_path / "run")
    outcomes = Counter(r["outcome"] for r in run.rows)
    from nasenergy.hardware.recorded import DEFAULT_PROFILE, read_profile
    from search_spaces import get_space

    # The study counts deployed networks; count them from the file.
    space = get_space("tss")
    recorded = {space.deployed_key(r["canonical_arch"]) for r in read_profile(DEFAULT_PROFILE) if r["precision"] == "fp16"}
    networks = {space.deployed_key(a) for a in space.enumerate()}
    covered = networks & recorded
    cells = sum(space.deployed_key(a) in recorded for a in space.enumerate())
    assert summary.evaluated == 60 and outcomes["filtered"] > 0
    assert {r["measure_source"] for r in run.rows if r["outcome"] in ("evaluated", "filtered")} == {"recorded"}
    report = (run.run_dir / "report.md").read_text()
    assert f"covers {len(covered):,} of {len(networks):,} tss deployed networks" in report
    assert f"({cells:,} of 15,625 cells)" in report
    assert "the DVFS model's lowest energy curve (h200 parameters, no margin)" in report
    assert "were taken at the default SM clock (1980 MHz) only" in report and "EXTRAPOLATED" in report


class EveryOtherFilter:
    """Skips every second network it is asked about (a filter that leaves the budget unreachable)."""

    def __init__(self) -> None:
        self.n = 0

    def admit(self, measurement, front, *, features=None):
        from nasenergy.filter import Decision

        self.n += 1
        return Decision(admit=self.n % 2 == 1, reason="test", mode="test", utilization=measurement.utilization)

    def observe(self, *args, **kwargs) -> None:
        pass


def _tiny_profile(config):  # the 4 largest deployed networks that can learn, half of them skipped by the filter
    parts = fake_components(config)
    measure, space = parts.measure, parts.space
    sizes = Counter(space.deployed_key(a) for a in space.enumerate() if space.output_depends_on_input(a))
    recorded = {c for c, _ in sizes.most_common(4)}

    def measure_recorded(arch):
        if space.deployed_key(arch) not in recorded:
            raise NotRecordedError(f"no record of {arch}")
        return measure(arch)

    parts.measure, parts.filter = measure_recorded, EveryOtherFilter()
    parts.covers = lambda arch: space.deployed_key(arch) in recorded
    parts.coverage = Coverage("tiny.csv", "fake H200", "tss", "fp16", 4, 6040, sum(sizes[c] for c in recorded), 15625)
    return parts


def test_a_profile_with_no_unseen_network_left_stops_with_a_clear_reason_without_the_rescue(tmp_path, fake_env,
                                                                                           capsys):
    from nasenergy.search.command.cli import main

    code = main(["--budget", "4", "--sampler", "random", "--quiet", "--budget-rescue", "off",
                 "--out", str(tmp_path / "run")], components_factory=_tiny_profile)
    assert code == 5  # EXIT_EXHAUSTED
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "every network the recorded profile holds has been seen" in err and "only 2 of 4" in err
    outcomes = Counter(r["outcome"] for r in load_run(tmp_path / "run").rows)
    assert (outcomes["evaluated"], outcomes["filtered"]) == (2, 2)


def test_the_rescue_spends_the_budget_on_the_rejected_networks_of_an_exhausted_profile(tmp_path, fake_env):
    from nasenergy.search.command.cli import main

    code = main(["--budget", "4", "--sampler", "random", "--quiet", "--out", str(tmp_path / "run")],
                components_factory=_tiny_profile)
    assert code == 0
    run = load_run(tmp_path / "run")
    assert sum(r["outcome"] == "evaluated" for r in run.rows) == 4  # the 2 rejected networks reopened
    assert "budget rescue" in (tmp_path / "run" / "report.md").read_text()


def test_a_partial_sss_profile_steers_tpe_to_its_configurations(tmp_path, monkeypatch):
    """300 of 32,768 SSS configurations recorded: TPE proposes recorded ones (not ~100 misses per
    hit), and the report counts configurations."""
    from nasenergy.hardware import recorded
    from nasenergy.testing import write_fake_profile
    from search_spaces import get_space

    sss = get_space("sss")
    monkeypatch.setattr(recorded, "SSS_PROFILE",
                        write_fake_profile(tmp_path / "sss.csv.gz", sss.sample(300, seed=0), space=sss))
    summary = run_search(SearchConfig(space="sss", budget=12, hardware="recorded", out=str(tmp_path / "run"),
                                      quiet=True))
    assert summary.evaluated == 12
    assert summary.outcomes["not_recorded"] <= 20  # a uniform proposal would miss ~99 % of the time
    report = (tmp_path / "run" / "report.md").read_text()
    assert "covers 300 of 32,768 sss configurations (each its own network)" in report


@pytest.mark.slow
def test_the_main_job_runs_on_the_shipped_sss_profile(tmp_path, capsys):
    """``python -m nasenergy.search --space sss --budget 50`` without a GPU replays the shipped SSS
    sample, spends its whole budget and states the coverage."""
    from nasenergy.hardware.recorded import default_profile
    from nasenergy.search.command import cli

    assert default_profile("sss").is_file()
    code = cli.main(["--space", "sss", "--budget", "50", "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 0
    rows = load_run(tmp_path / "run").rows
    assert sum(r["outcome"] == "evaluated" for r in rows) == 50
    assert {r["measure_source"] for r in rows if r["outcome"] == "evaluated"} == {"recorded"}
    report = (tmp_path / "run" / "report.md").read_text()
    assert re.search(r"covers [\d,]+ of 32,768 sss configurations \(each its own network\) at fp16", report)


@pytest.mark.parametrize("space, precision", [("tss", "fp16"), ("tss", "fp32"), ("sss", "fp16")])
def test_imagenet16_searches_without_a_gpu_on_the_shipped_16x16_rows(space, precision, tmp_path, capsys):
    """``--dataset ImageNet16-120 --budget 10`` replays the 16x16 rows (120-class networks) in both
    spaces; every evaluated candidate's figures are a 3x16x16 row."""
    from nasenergy.search.command import cli

    code = cli.main(["--space", space, "--dataset", "ImageNet16-120", "--precision", precision, "--budget", "10",
                     "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    rows = load_run(tmp_path / "run").rows
    evaluated = [r for r in rows if r["outcome"] == "evaluated"]
    assert len(evaluated) == 10
    assert {r["measure_source"] for r in evaluated} == {"recorded"}
    report = (tmp_path / "run" / "report.md").read_text()
    assert re.search(rf"covers [\d,]+ of [\d,]+ {space} .* at {precision}, batch \d+, input 3x16x16", report)
