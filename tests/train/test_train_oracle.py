"""Real training answers the oracle protocol: measured accuracy, cost and figures."""

from __future__ import annotations

import pytest

from nasenergy.errors import CandidateError
from nasenergy.oracles.evaluation import AccuracyOracle
from nasenergy.train import TrainOptions, TrainRecipe
from nasenergy.train.data_random import random_image_data
from nasenergy.train.datasets import data_dataset_name, register_data
from nasenergy.train.oracle import TrainingOracle
from search_spaces import dataset_info, get_space

ARCH = "|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|skip_connect~0|none~1|avg_pool_3x3~2|"


def test_the_training_oracle_answers_a_measured_evaluation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    space = get_space("tss")
    data = random_image_data(64, (1, 8, 8), 3, seed=0, val_images=16)
    name = register_data(data)
    assert name == data_dataset_name(data) and dataset_info(name).input_shape == (1, 8, 8)
    oracle = TrainingOracle(space, data, recipe=TrainRecipe(epochs=1, batch_size=32), options=TrainOptions(),
                            checkpoint_dir=tmp_path)
    assert isinstance(oracle, AccuracyOracle)
    ev = oracle.evaluate(space.parse(ARCH), name, seed=4)
    assert ev.source == "measured" and ev.cost_source == "measured" and ev.cost_s > 0
    assert ev.schedule == "1" and ev.trial == "seed:4" and 0 <= ev.accuracy_pct <= 100
    row = ev.as_dict()
    assert row["train_epochs"] == 1 and row["train_energy_j"] is None and row["train_images_per_s"] > 0
    with pytest.raises(CandidateError, match="no test split"):
        oracle.report(space.parse(ARCH), name)
    with pytest.raises(CandidateError, match="not trained"):
        oracle.report(space.parse("|none~0|+|none~0|none~1|+|none~0|none~1|skip_connect~2|"), name)
    assert "real training" in oracle.describe()


def test_the_running_training_is_announced_for_the_progress_bar_and_withdrawn(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    space = get_space("tss")
    data = random_image_data(64, (1, 8, 8), 3, seed=0, val_images=16)
    seen: list[dict[str, int]] = []

    def on_epoch(arch: str, done: int, total: int) -> None:
        (path,) = tmp_path.glob("running-*.json")
        seen.append(json.loads(path.read_text()))

    oracle = TrainingOracle(space, data, recipe=TrainRecipe(epochs=2, batch_size=32), options=TrainOptions(),
                            checkpoint_dir=tmp_path, on_epoch=on_epoch)
    oracle.evaluate(space.parse(ARCH), register_data(data))
    assert [(s["epoch"], s["epochs"]) for s in seen] == [(1, 2), (2, 2)]
    assert not list(tmp_path.glob("running-*.json"))
