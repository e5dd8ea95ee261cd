"""experiments/bench_search.py: its README says "partial profile" only when the profile is partial."""

from __future__ import annotations

import argparse

import pytest

from nasenergy.search.command.coverage import Coverage


@pytest.fixture(scope="module")
def bench(load_experiment):
    return load_experiment("bench_search")


@pytest.mark.parametrize(("covered", "partial"), [(6466, False), (5016, True)])
def test_readme_names_a_partial_profile_only_when_it_is(bench, tmp_path, covered, partial):
    coverage = Coverage("p.csv.gz", "NVIDIA H200", "tss", "fp16, batch 1024, input 3x32x32",
                        covered, 6466, 15625 if covered == 6466 else 14103, 15625)
    bench.write_readme(tmp_path, [], argparse.Namespace(budget=200, hardware="recorded"), coverage)
    text = (tmp_path / "README.md").read_text()
    assert ("**Partial profile:**" in text) is partial
    assert f"covers {covered:,} of 6,466" in text


def _row(filter_mode: str, wall_s: float) -> dict:
    return {"filter": filter_mode, "wall_s": f"{wall_s:.2f}"}


def test_the_median_run_is_reported_with_every_wall_time(bench):
    row = bench.median_row([_row("none", 9.0), _row("none", 3.0), _row("none", 5.0)])
    assert row["wall_s"] == "5.00" and row["repeats"] == 3 and row["wall_s_all"] == "9.00 3.00 5.00"


@pytest.mark.parametrize(("filtered_s", "meets"), [(8.9, True), (9.3, False), (61.0, False)])
def test_a_filtered_run_must_stay_within_three_times_the_unfiltered_one(bench, filtered_s, meets):
    base = 3.0 if filtered_s < 60 else 30.0
    rows = [_row("dominance", filtered_s), _row("none", base)]
    bench.add_ratio_to_unfiltered(rows)
    assert rows[0]["ratio_to_unfiltered"] == f"{filtered_s / base:.2f}"
    assert rows[0]["meets_target"] is meets
    assert rows[1]["ratio_to_unfiltered"] == "" and rows[1]["meets_target"] is True


def test_notes_go_into_the_readme(bench, tmp_path):
    args = argparse.Namespace(budget=200, hardware="recorded", note=["before: 17.0 s"])
    bench.write_readme(tmp_path, [], args, None)
    assert "* before: 17.0 s" in (tmp_path / "README.md").read_text()
