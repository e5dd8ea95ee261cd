"""The trainer on the CPU: its optimiser is torch's SGD, its augmentation is seeded, a seed gives
one result, a checkpoint resumes to the uninterrupted result, and energy is read from a counter."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from nasenergy.errors import UsageError
from nasenergy.train import NATS_RECIPE, TrainOptions, TrainRecipe, build_for_data, train_model
from nasenergy.train.augment import augment_batch
from nasenergy.train.data_random import random_image_data
from nasenergy.train.sgd import NesterovSgd
from search_spaces import get_space

ARCH = "|nor_conv_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|skip_connect~0|nor_conv_3x3~1|avg_pool_3x3~2|"


def _model(seed: int = 0, classes: int = 3) -> torch.nn.Module:
    return build_for_data(get_space("tss"), ARCH, in_channels=1, num_classes=classes, seed=seed)


def _data():  # type: ignore[no-untyped-def]
    return random_image_data(96, (1, 8, 8), 3, seed=1, val_images=32)


def test_nesterov_sgd_computes_what_torch_sgd_computes() -> None:
    a, b = _model(), _model()
    ours = NesterovSgd(a.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    theirs = torch.optim.SGD(b.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    a.train(), b.train()
    x = torch.randn(8, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    for lr in (0.1, 0.05, 0.01):
        ours.set_lr(lr)
        for group in theirs.param_groups:
            group["lr"] = lr
        for net, opt in ((a, ours), (b, theirs)):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_sgd_refuses_a_step_without_gradients() -> None:
    opt = NesterovSgd(_model().parameters(), lr=0.1, momentum=0.9, weight_decay=0.0)
    with pytest.raises(RuntimeError, match="backward"):
        opt.step()


def test_augmentation_is_seeded_and_keeps_shapes() -> None:
    x = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).view(2, 3, 8, 8)
    one = augment_batch(x, padding_px=1, hflip=True, generator=torch.Generator().manual_seed(3))
    two = augment_batch(x, padding_px=1, hflip=True, generator=torch.Generator().manual_seed(3))
    other = augment_batch(x, padding_px=1, hflip=True, generator=torch.Generator().manual_seed(4))
    assert one.shape == x.shape and torch.equal(one, two) and not torch.equal(one, other)
    assert torch.equal(augment_batch(x, padding_px=0, hflip=False, generator=torch.Generator()), x)


def test_a_crop_is_a_shifted_window_with_zero_padding() -> None:
    x = torch.ones(64, 1, 4, 4)
    out = augment_batch(x, padding_px=1, hflip=False, generator=torch.Generator().manual_seed(0))
    sums = out.sum(dim=(1, 2, 3))
    assert set(sums.tolist()) <= {16.0, 12.0, 9.0}  # no shift, one edge of zeros, two edges
    assert (sums < 16).any()


def test_the_recipe_is_nats_benchs() -> None:
    r = NATS_RECIPE
    assert (r.epochs, r.batch_size, r.lr, r.momentum, r.weight_decay, r.lr_min) == (12, 256, 0.1, 0.9, 5e-4, 0.0)
    assert r.padding_px(32) == 4 and r.padding_px(16) == 2 and r.padding_px(8) == 1
    assert r.lr_at(0, 100) == pytest.approx(0.1) and r.lr_at(50, 100) == pytest.approx(0.05)
    assert r.lr_at(100, 100) == pytest.approx(0.0)


@pytest.mark.parametrize("bad", [{"epochs": 0}, {"batch_size": -1}, {"lr": float("nan")}, {"momentum": 1.0}])
def test_a_bad_recipe_is_a_usage_error(bad: dict[str, object]) -> None:
    with pytest.raises(UsageError):
        TrainRecipe(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [{"precision": "fp8"}, {"step": "fast"}, {"device": "tpu"}, {"data": "disk"},
                                 {"cpu_threads": 0}, {"cpu_threads": 1.5}])
def test_bad_options_are_usage_errors(bad: dict[str, str]) -> None:
    with pytest.raises(UsageError):
        TrainOptions(**bad)  # type: ignore[arg-type]


def test_cpu_options_resolve_to_the_plain_step() -> None:
    opts = TrainOptions().resolved()
    assert (opts.precision, opts.step, opts.channels_last) == ("fp32", "eager", False)
    with pytest.raises(UsageError, match="CUDA"):
        TrainOptions(step="cuda_graph").resolved()


RECIPE = TrainRecipe(epochs=3, batch_size=32)


def test_the_same_seed_gives_the_same_training_and_another_seed_another() -> None:
    data = _data()
    one = train_model(_model(), data, recipe=RECIPE, seed=5)
    two = train_model(_model(), data, recipe=RECIPE, seed=5)
    other = train_model(_model(), data, recipe=RECIPE, seed=6)
    assert (one.val_accuracy_pct, one.final_train_loss) == (two.val_accuracy_pct, two.final_train_loss)
    assert one.final_train_loss != other.final_train_loss
    assert one.source == "measured" and one.epochs == 3 and one.steps == 9 and len(one.epoch_s) == 3
    assert one.energy_j is None and one.energy_source is None and one.peak_memory_mib is None
    assert one.train_s >= sum(one.epoch_s) and one.images_per_s > 0
    assert one.settings["options"]["device"] == "cpu" and one.settings["recipe"]["epochs"] == 3


def test_a_checkpoint_continues_to_the_uninterrupted_result(tmp_path: Path) -> None:
    data = _data()
    whole = train_model(_model(), data, recipe=RECIPE, seed=2)
    ckpt = tmp_path / "net.npz"

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_model(_model(), data, recipe=RECIPE, seed=2, checkpoint=ckpt, on_epoch=stop_after_two)
    assert ckpt.is_file()
    resumed = train_model(_model(), data, recipe=RECIPE, seed=2, checkpoint=ckpt)
    assert resumed.resumed_from_epoch == 2 and len(resumed.epoch_s) == 1 and resumed.steps == whole.steps
    assert resumed.final_train_loss == pytest.approx(whole.final_train_loss, rel=1e-6)
    assert resumed.val_accuracy_pct == whole.val_accuracy_pct
    assert not ckpt.exists()  # removed when the training ended


def test_a_checkpoint_of_another_training_is_ignored(tmp_path: Path) -> None:
    data = _data()
    ckpt = tmp_path / "net.npz"

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_model(_model(), data, recipe=RECIPE, seed=2, checkpoint=ckpt, on_epoch=stop)
    other_seed = train_model(_model(), data, recipe=RECIPE, seed=3, checkpoint=ckpt)
    assert other_seed.resumed_from_epoch == 0
    ckpt.write_bytes(b"not an npz")
    assert train_model(_model(), data, recipe=RECIPE, seed=2, checkpoint=ckpt).resumed_from_epoch == 0


class _Counter:
    """An energy counter that gains 7 J per reading."""

    def __init__(self) -> None:
        self.ticks = itertools.count()

    def total_energy_mj(self) -> int:
        return 7000 * next(self.ticks)


def test_energy_is_the_counter_difference_over_the_training() -> None:
    result = train_model(_model(), _data(), recipe=TrainRecipe(epochs=1, batch_size=32), energy=_Counter())
    assert result.energy_j == pytest.approx(7.0) and result.energy_source == "measured"


def test_training_learns_digits() -> None:
    from nasenergy.train import load_data

    data = load_data("digits")
    model = build_for_data(get_space("tss"), ARCH, in_channels=1, num_classes=10, seed=0)
    result = train_model(model, data, recipe=TrainRecipe(epochs=8, hflip=False), seed=0)
    assert result.val_accuracy_pct > 60.0  # chance is 10 %
    assert np.isfinite(result.final_train_loss)


def test_a_cpu_training_runs_on_the_threads_it_is_given_and_puts_the_count_back() -> None:
    before = torch.get_num_threads()
    seen: list[int] = []
    result = train_model(_model(), _data(), recipe=TrainRecipe(epochs=2, batch_size=32),
                         options=TrainOptions(cpu_threads=1), on_epoch=lambda *_: seen.append(torch.get_num_threads()))
    assert seen == [1, 1] and torch.get_num_threads() == before
    assert result.settings["options"]["cpu_threads"] == 1
