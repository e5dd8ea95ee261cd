"""README.md: short, its set-up commands as they are, and every ```python block runs as printed.

The blocks run in order in one namespace, as a reader pasting them into one session would. The
test supplies only the names README marks as the reader's own code, as small stand-ins (the docs'
blocks, `tests/test_docs.py`, use the same ones):

* ``my_candidates()``: sixteen small networks for 3x32x32 images (depths 1-4, widths 8-64);
* ``build(depth, width)``: one such network (pooled image, then ``depth`` layers of ``width``);
* ``train_and_evaluate(model)``: a made-up accuracy that grows with the width and falls for depths
  other than 2, as a deep narrow network would (no training).

Everything else (imports, the meter, the filter) is what README prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
READER_NAMES = ("my_candidates", "build", "train_and_evaluate")
MAIN_JOB = "pip install torch==2.13.0 && pip install -e . && python -m nasenergy.search --budget 200"
TESTS = 'pip install -e ".[test]" && python -m pytest'


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a Markdown text, in order."""
    return [m.group(1) for m in BLOCK.finditer(text)]


def build(depth: int, width: int):
    """A small network for 3x32x32 images, 10 classes: the image pooled to 2x2, then ``depth``
    hidden layers of ``width`` units (cheap to measure on any CPU)."""
    import torch.nn as nn

    layers: list[nn.Module] = [nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def my_candidates():
    """Sixteen small networks, narrow to wide, each width shallow to deep."""
    for width in (8, 16, 32, 64):
        for depth in (1, 2, 3, 4):
            yield build(depth, width)


def train_and_evaluate(model) -> float:
    """A made-up accuracy (percent): grows with the width, falls for depths other than 2;
    nothing is trained."""
    import torch.nn as nn

    linear = [m for m in model if isinstance(m, nn.Linear)]
    depth, width = len(linear) - 1, linear[0].out_features
    return 50.0 + 40.0 * width / (width + 24.0) - 3.0 * (depth - 2) ** 2


def reader_namespace() -> dict:
    """A fresh namespace holding the reader's own names."""
    return {"__name__": "readme", "my_candidates": my_candidates, "build": build,
            "train_and_evaluate": train_and_evaluate}


def test_readme_is_short_and_has_what_a_newcomer_needs():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert all(name in text for name in READER_NAMES)
    bash = re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)
    assert bash[0].strip() == MAIN_JOB and bash[1].strip() == TESTS
    assert re.search(r"^!\[[^\]]+\]\(results/[\w/]+\.png\)$", text, re.M)
    section = text.split("### 3. Search on your own data\n", 1)[1].split("\n## ", 1)[0].strip()
    assert "--oracle train --data" in section and "(docs/training.md)" in section


def test_readme_links_point_at_files_that_exist():
    text = README.read_text()
    targets = [t for t in re.findall(r"\]\(([^)#]+)", text) if "://" not in t]
    assert any(t.startswith("results/") for t in targets) and any(t.startswith("docs/") for t in targets)
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing


def test_every_python_block_runs_as_printed(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    namespace = reader_namespace()
    blocks = python_blocks(README.read_text())
    assert blocks
    for k, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {k + 1}", "exec"), namespace)
    assert len(namespace["front"]) >= 1
    assert namespace["flt"].n_observed + namespace["skipped"] == 16
    assert namespace["result"].source == "measured" and namespace["result"].epochs == 2
    assert re.search(r"trained \d+, skipped \d+", capsys.readouterr().out)


def test_every_other_bash_block_runs_as_printed(tmp_path):
    """The bash blocks after the two set-up commands (the search on your own data) run as printed,
    in an empty folder, and exit 0."""
    import os
    import subprocess

    blocks = re.findall(r"^```bash\n(.*?)^```", README.read_text(), re.M | re.S)[2:]
    assert blocks
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for block in blocks:
        done = subprocess.run(["bash", "-ec", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, (block, done.stderr[-2000:])
