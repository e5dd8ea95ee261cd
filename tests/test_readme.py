"""Every ```python block of README.md runs as printed.

The blocks run in order in one namespace, as a reader pasting them into one session would (the
Optuna block uses the meter and filter of the block before it). The test supplies only the names
README marks as the reader's own code, as small stand-ins:

* ``my_candidates()``: a few small networks for 3x32x32 images (different depths and widths);
* ``build(depth, width)``: one such network (pooled image, then ``depth`` layers of ``width``);
* ``train_and_evaluate(model)``: a made-up accuracy growing with the parameter count (no training).

Everything else (imports, the meter, precisions, objectives) is what README prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
READER_NAMES = ("my_candidates", "build", "train_and_evaluate")


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
    """Four small networks."""
    for depth, width in ((1, 8), (2, 8), (1, 16), (3, 12)):
        yield build(depth, width)


def train_and_evaluate(model) -> float:
    """A made-up accuracy (percent) that grows with the parameter count; nothing is trained."""
    params = sum(p.numel() for p in model.parameters())
    return 50.0 + 40.0 * params / (params + 5_000.0)


def test_readme_has_the_blocks_it_documents():
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 2
    assert all(name in README.read_text() for name in READER_NAMES)


def test_every_python_block_runs_as_printed(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("optuna")
    monkeypatch.chdir(tmp_path)  # the blocks write filter.json
    namespace = {"__name__": "readme", "my_candidates": my_candidates, "build": build,
                 "train_and_evaluate": train_and_evaluate}
    for k, block in enumerate(python_blocks(README.read_text())):
        exec(compile(block, f"README.md python block {k + 1}", "exec"), namespace)
    assert (tmp_path / "filter.json").is_file()
    assert len(namespace["front"]) >= 1
    study = namespace["study"]
    assert sum(t.state.name == "COMPLETE" for t in study.trials) == 20


def test_toml_blocks_parse_and_name_plugin_groups():
    """The ```toml blocks (a plugin's pyproject.toml) are valid TOML whose entry-point groups are
    the ones nasenergy's registries load."""
    import tomllib

    from nasenergy.filter.feature_providers import FEATURE_PROVIDERS
    from nasenergy.filter.registry import FILTERS
    from nasenergy.hardware.registry import METERS
    from nasenergy.oracles.registry import ORACLE_SOURCES
    from nasenergy.proxies.registry import PROXIES
    from nasenergy.search.command.dvfs_modes import DVFS_MODES

    groups = {r.plugin_group for r in (METERS, FILTERS, DVFS_MODES, PROXIES, ORACLE_SOURCES, FEATURE_PROVIDERS)}
    text = README.read_text()
    blocks = [m.group(1) for m in re.finditer(r"^```toml\n(.*?)^```", text, re.M | re.S)]
    assert blocks
    for block in blocks:
        declared = tomllib.loads(block)["project"]["entry-points"]
        assert declared and set(declared) <= groups
    assert all(f"`{group}`" in text for group in groups)
