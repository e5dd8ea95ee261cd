"""A budget is spent: the default search (recorded profile, tss, cifar10) at ``--budget 400`` ends
with exactly 400 full evaluations and exit 0, the sampler's repeats redirected to unseen networks
and the filter yielding where it would leave the budget unspent."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from nasenergy.run.files import load_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_default_search_spends_a_budget_of_400(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "nasenergy.search", "--budget", "400", "--hardware", "recorded",
                           "--out", str(out), "--quiet"], env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = load_run(out)
    outcomes = Counter(r["outcome"] for r in run.rows)
    assert outcomes["evaluated"] == len(run.evaluated) == 400
    assert len({r["network"] for r in run.evaluated}) == 400
