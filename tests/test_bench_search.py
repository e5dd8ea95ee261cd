"""experiments/bench_search.py: its README says "partial profile" only when the profile is partial."""

from __future__ import annotations

import argparse

import pytest

from nasenergy.search.coverage import Coverage


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
