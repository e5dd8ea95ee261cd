"""The main job from the repository alone: ``python -m nasenergy.search --budget 200`` with no
installed benchmark, no shared reference data and no caches, on the recorded H200 profile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nasenergy.run.files import load_run

ROOT = Path(__file__).resolve().parents[2]
RUN = "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0"


@pytest.mark.slow
def test_the_main_job_runs_on_the_embedded_benchmark(tmp_path: Path) -> None:
    home, shared, work = tmp_path / "home", tmp_path / "empty-shared-data", tmp_path / "work"
    for folder in (home, shared, work):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("NASENERGY_HOME", "TORCH_HOME", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), NASENERGY_SHARED_DATA=str(shared),
               CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(ROOT))  # this checkout; no GPU: the recorded profile
    proc = subprocess.run([sys.executable, "-m", "nasenergy.search", "--budget", "200"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "recorded H200 profile" in proc.stderr
    run = load_run(work / "runs" / RUN)
    assert len(run.evaluated) == 200
    assert all(r["accuracy_source"] == "recorded" for r in run.evaluated)
    parts = [w["parts"] for w in json.loads((run.run_dir / "env.json").read_text())["workers"].values()]
    assert parts and all(p["oracle"].startswith("embedded tss benchmark") for p in parts)
    assert "oracle embedded tss benchmark" in (run.run_dir / "report.md").read_text()
    assert not list(home.rglob("benchmark-*.npz"))  # nothing was installed on the way


def test_the_readme_starts_with_this_job() -> None:
    first_command = (ROOT / "README.md").read_text().split("```bash\n", 1)[1].split("\n", 1)[0]
    assert first_command == "pip install torch==2.13.0 && pip install -e . && python -m nasenergy.search --budget 200"
