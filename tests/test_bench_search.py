"""experiments/bench_search.py: its README says "partial profile" only when the profile is partial."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

from nasenergy.search.coverage import Coverage

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "bench_search.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_search_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


@pytest.mark.parametrize(("covered", "partial"), [(6466, False), (5016, True)])
def test_readme_names_a_partial_profile_only_when_it_is(bench, tmp_path, covered, partial):
    coverage = Coverage("p.csv.gz", "NVIDIA H200", "tss", "fp16, batch 1024, input 3x32x32",
                        covered, 6466, 15625 if covered == 6466 else 14103, 15625)
    bench.write_readme(tmp_path, [], argparse.Namespace(budget=200, hardware="recorded"), coverage)
    text = (tmp_path / "README.md").read_text()
    assert ("**Partial profile:**" in text) is partial
    assert f"covers {covered:,} of 6,466" in text
