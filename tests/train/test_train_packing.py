"""Packing trainings on one board: how many, and how the board's energy is apportioned."""

from __future__ import annotations

import functools
import itertools

import pytest

from nasenergy.train import TrainOptions, TrainRecipe
from nasenergy.train.data_random import random_image_data
from nasenergy.train.packing import (
    PackedTraining,
    TrainJob,
    apportion,
    choose_slots,
    train_packed,
    training_utilization,
)
from nasenergy.train.result import TrainingResult


def _result() -> TrainingResult:
    return TrainingResult(val_accuracy_pct=0.0, test_accuracy_pct=None, final_train_loss=0.0, train_s=1.0,
                          setup_s=0.0, eval_s=0.0, epoch_s=(1.0,), images_per_s=1.0, peak_memory_mib=None,
                          energy_j=None, energy_source=None, epochs=1, resumed_from_epoch=0, steps=1)


def _packed(start: float, end: float, rate: float) -> PackedTraining:
    return PackedTraining(TrainJob("k", "tss", "a"), _result(), start, end, rate, 0)


def test_utilization_counts_three_forward_passes_per_training_image() -> None:
    assert training_utilization(1e8, 1e4, 1e15) == pytest.approx(3e-3)
    with pytest.raises(ValueError):
        training_utilization(1.0, 1.0, 0.0)


def test_slots_follow_utilization_then_memory_then_cores() -> None:
    assert choose_slots(0.05, 1000, board_memory_mib=80_000, host_cores=16) == 6  # ceil(0.30 / 0.05)
    assert choose_slots(0.5, 1000, board_memory_mib=80_000, host_cores=16) == 1
    assert choose_slots(0.01, 30_000, board_memory_mib=80_000, host_cores=16) == 2  # memory: 0.8 * 80 GB / 30.6 GB
    assert choose_slots(0.01, 100, board_memory_mib=80_000, host_cores=4) == 4
    assert choose_slots(0.0, 100, board_memory_mib=80_000, host_cores=64) == 16  # max_slots
    assert choose_slots(0.01, 100_000, board_memory_mib=80_000, host_cores=16) == 1  # never 0


def test_apportioning_splits_each_interval_by_overlap_and_flop_rate() -> None:
    a, b = _packed(0.0, 2.0, 1.0), _packed(1.0, 2.0, 3.0)
    readings = [(0.0, 0), (1.0, 100_000), (2.0, 300_000), (3.0, 350_000)]
    shares = apportion([a, b], readings)
    assert shares == pytest.approx([100.0 + 50.0, 150.0])  # 2nd second: 200 J split 1:3; idle 3rd second unassigned
    assert sum(shares) == pytest.approx(300.0)


class _Counter:
    def __init__(self) -> None:
        self.ticks = itertools.count()

    def total_energy_mj(self) -> int:
        return 1000 * next(self.ticks)


def test_packed_trainings_run_side_by_side_and_share_the_boards_energy() -> None:
    factory = functools.partial(random_image_data, 64, (1, 8, 8), 3, 0, 16)
    archs = ["|nor_conv_3x3~0|+|skip_connect~0|nor_conv_1x1~1|+|skip_connect~0|none~1|avg_pool_3x3~2|",
             "|nor_conv_1x1~0|+|nor_conv_1x1~0|skip_connect~1|+|skip_connect~0|skip_connect~1|nor_conv_3x3~2|",
             "|avg_pool_3x3~0|+|nor_conv_3x3~0|none~1|+|skip_connect~0|none~1|nor_conv_3x3~2|"]
    jobs = [TrainJob(str(i), "tss", a) for i, a in enumerate(archs)] + [TrainJob("bad", "tss", "not an arch")]
    report = train_packed(jobs, factory, slots=2, recipe=TrainRecipe(epochs=1, batch_size=32),
                          options=TrainOptions(), device="cpu", counter=_Counter(), sample_s=0.05)
    assert sorted(t.job.key for t in report.trainings) == ["0", "1", "2"]
    assert [j.key for j, _ in report.failures] == ["bad"]
    assert {t.slot for t in report.trainings} <= {0, 1}
    assert all(t.result.energy_source == "apportioned" and t.result.energy_j > 0 for t in report.trainings)
    assert sum(t.result.energy_j for t in report.trainings) <= report.board_energy_j + 1e-9
