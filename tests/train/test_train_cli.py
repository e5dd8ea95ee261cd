"""``python -m nasenergy.train``: a training as JSON; bad input one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARCH = "|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|skip_connect~0|none~1|avg_pool_3x3~2|"


def train(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nasenergy.train", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_training_prints_its_measured_figures(tmp_path: Path) -> None:
    done = train(tmp_path, "--arch", ARCH, "--data", "digits", "--epochs", "1", "--no-flip", "--device", "cpu")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["source"] == "measured" and out["epochs"] == 1 and out["data"]["name"] == "digits"
    assert 0 <= out["val_accuracy_pct"] <= 100 and out["train_s"] > 0


@pytest.mark.parametrize("args", [
    ["--arch", "x", "--data", "digits"],
    ["--arch", ARCH, "--data", "nowhere"],
    ["--arch", ARCH, "--data", "digits", "--epochs", "0"],
    ["--arch", ARCH, "--data", "digits", "--device", "tpu"],
    ["--arch", ARCH, "--data", "digits", "--val-fraction", "2"],
    ["--bogus"],
])
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, args: list[str]) -> None:
    done = train(tmp_path, *args)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "error" in lines[0] and "Traceback" not in done.stderr


def test_help_imports_no_heavy_dependency(tmp_path: Path) -> None:
    code = ("import runpy, sys\nsys.argv = ['x', '--help']\ntry:\n    runpy.run_module('nasenergy.train', run_name='__main__')\n"
            "except SystemExit:\n    pass\nassert not [m for m in ('torch', 'optuna', 'sklearn') if m in sys.modules]\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr


def test_an_unwritable_checkpoint_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    done = train(tmp_path, "--arch", ARCH, "--data", "digits", "--epochs", "2", "--device", "cpu",
                 "--checkpoint", str(blocker / "ckpt.npz"))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: cannot write"), done.stderr
