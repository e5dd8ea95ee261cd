"""Train one network on image data with NATS-Bench's recipe, fast: `train_model`.

Per step on a GPU (`TrainOptions` ``auto``): the batch is gathered, cropped, flipped and
normalised on the device from data held there, then one captured CUDA graph replays the forward
pass (bf16 autocast, channels_last), the backward pass and the optimiser update; the only host
work per step is a handful of kernel launches, so the small NATS networks stop waiting on
Python. On the CPU the same step runs eagerly in fp32 and, for a seed, gives the same result
every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nasenergy.train.augment import augment_batch, normalise
from nasenergy.train.checkpoint import Progress, load_checkpoint, save_checkpoint
from nasenergy.train.energy import EnergyCounter, EnergyLog, board_counter
from nasenergy.train.options import DATA_ON_DEVICE_SHARE, TrainOptions
from nasenergy.train.pool_layout import nhwc_avg_pool_backward_ok, pool_in_nchw
from nasenergy.train.recipe import NATS_RECIPE, TrainRecipe
from nasenergy.train.result import TrainingResult
from nasenergy.train.sgd import NesterovSgd

if TYPE_CHECKING:
    import torch

    from nasenergy.train.data import ImageData

EpochCallback = Callable[[int, int], None]
"""``(epochs done, epochs in all)``, called after each epoch."""
GRAPH_WARMUP_STEPS = 3
"""Eager steps (real training steps) before the step graph is captured."""


def _sync(device: "torch.device") -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def data_on_device(options: TrainOptions, data: "ImageData", device: "torch.device") -> bool:
    """Whether the splits are copied to the device once: ``device``/``host`` as asked; ``auto``
    on a GPU when they take at most `DATA_ON_DEVICE_SHARE` of its free memory."""
    import torch

    if device.type != "cuda" or options.data == "device":
        return True
    if options.data == "host":
        return False
    total_bytes = sum(a.nbytes for a in (data.x_train, data.x_val, data.x_test) if a is not None)
    free_bytes, _ = torch.cuda.mem_get_info(device)
    return total_bytes <= DATA_ON_DEVICE_SHARE * free_bytes


def fingerprint(model: "torch.nn.Module", data: "ImageData", recipe: TrainRecipe, seed: int) -> str:
    """What a checkpoint must match to be resumed: the network's parameter shapes, the data's
    sizes and the recipe and seed."""
    shapes = [(n, list(p.shape)) for n, p in model.state_dict().items()]
    text = json.dumps([shapes, data.name, list(data.x_train.shape), list(data.x_val.shape),
                       recipe.as_dict(), seed], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Batches:
    """Shuffled, augmented, normalised training batches on the device."""

    def __init__(self, x: "torch.Tensor", y: "torch.Tensor", *, device: "torch.device", batch_size: int,
                 padding_px: int, hflip: bool, mean: "torch.Tensor", std: "torch.Tensor",
                 channels_last: bool, generator: "torch.Generator") -> None:
        self.x, self.y, self.device = x, y, device
        self.n = int(x.shape[0])
        self.batch_size = min(batch_size, self.n)
        self.steps_per_epoch = self.n // self.batch_size
        self.padding_px, self.hflip = padding_px, hflip
        self.mean, self.std, self.channels_last, self.generator = mean, std, channels_last, generator

    def epoch(self) -> "list[torch.Tensor]":
        """A fresh permutation cut into the epoch's batches of indices (the last partial one dropped)."""
        import torch

        order = torch.randperm(self.n, device=self.device, generator=self.generator)
        if self.x.device != self.device:
            order = order.cpu()
        return [order[i * self.batch_size:(i + 1) * self.batch_size] for i in range(self.steps_per_epoch)]

    def batch(self, index: "torch.Tensor") -> "tuple[torch.Tensor, torch.Tensor]":
        """The augmented, normalised images and labels of `index`, on the device."""
        import torch

        xb = self.x[index].to(self.device, non_blocking=True)
        yb = self.y[index].to(self.device, non_blocking=True)
        xb = normalise(augment_batch(xb, padding_px=self.padding_px, hflip=self.hflip, generator=self.generator),
                       self.mean, self.std)
        if self.channels_last:
            xb = xb.contiguous(memory_format=torch.channels_last)
        return xb, yb


def evaluate_accuracy(model: "torch.nn.Module", x: "torch.Tensor", y: "torch.Tensor", *, mean: "torch.Tensor",
                      std: "torch.Tensor", device: "torch.device", batch_size: int, autocast: Any,
                      channels_last: bool) -> float:
    """Top-1 accuracy of `model` (eval mode) on ``(x, y)``, % (one host sync at the end)."""
    import torch

    model.eval()
    correct = torch.zeros((), dtype=torch.int64, device=device)
    with torch.no_grad(), autocast():
        for i in range(0, int(x.shape[0]), batch_size):
            xb = normalise(x[i:i + batch_size].to(device, non_blocking=True), mean, std)
            if channels_last:
                xb = xb.contiguous(memory_format=torch.channels_last)
            pred = model(xb).argmax(dim=1)
            correct += (pred == y[i:i + batch_size].to(device, non_blocking=True)).sum()
    model.train()
    return 100.0 * int(correct.item()) / max(1, int(x.shape[0]))


def train_model(model: "torch.nn.Module", data: "ImageData", *, recipe: TrainRecipe = NATS_RECIPE,
                options: TrainOptions = TrainOptions(), seed: int = 0, checkpoint: Path | None = None,
                energy: EnergyCounter | None | str = "auto", on_epoch: EpochCallback | None = None) -> TrainingResult:
    """Train `model` on `data` with `recipe`, then measure its accuracy.

    Args:
        model: the network (its stem must take ``data.input_shape[0]`` channels and its head
            give ``data.num_classes`` logits); trained in place.
        data: the splits (`nasenergy.train.data.load_data`); normalised with their training mean
            and standard deviation.
        recipe: what the training computes (NATS-Bench's 12-epoch recipe by default).
        options: how fast it runs (`TrainOptions`; ``auto`` picks per device).
        seed: the seed of the shuffling and augmentation stream (the network's initial weights
            are the caller's: build it with a seed).
        checkpoint: an ``.npz`` path written after every epoch; a training given a path holding
            a checkpoint of the same network, data, recipe and seed continues after its last
            epoch. The file is removed when the training ends.
        energy: the board's energy counter (``"auto"``: NVML's for a CUDA device, none on the CPU;
            ``None``: do not read energy).
        on_epoch: called after each epoch with ``(epochs done, epochs in all)``.

    Returns:
        The `TrainingResult`; every figure in it was measured during this call (and, after a
        resume, the calls before it).
    """
    import torch

    opts = options.resolved()
    device = torch.device(opts.device)
    counter = board_counter(opts.device) if energy == "auto" else energy
    log = EnergyLog(counter) if counter is not None and not isinstance(counter, str) else None
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    _sync(device)
    t0 = time.perf_counter()
    e0 = log.mark() if log is not None else None

    on_dev = data_on_device(opts, data, device)
    place = device if on_dev else torch.device("cpu")

    def tensor(a: Any, dtype: "torch.dtype") -> "torch.Tensor":
        t = torch.from_numpy(a).to(dtype)
        if place.type == "cpu" and device.type == "cuda":
            t = t.pin_memory()
        return t.to(place)

    x_train, y_train = tensor(data.x_train, torch.float32), tensor(data.y_train, torch.int64)
    x_val, y_val = tensor(data.x_val, torch.float32), tensor(data.y_val, torch.int64)
    mean = torch.tensor(data.mean, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    std = torch.tensor(data.std, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    generator = torch.Generator(device=device)
    generator.manual_seed(int(seed))

    model.to(device)
    if opts.channels_last:
        model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    model.train()
    opt = NesterovSgd(model.parameters(), lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay)
    batches = _Batches(x_train, y_train, device=device, batch_size=recipe.batch_size,
                       padding_px=recipe.padding_px(data.input_shape[1]), hflip=recipe.hflip, mean=mean, std=std,
                       channels_last=bool(opts.channels_last), generator=generator)
    total_steps = recipe.epochs * batches.steps_per_epoch
    bf16 = opts.precision == "bf16"

    def autocast() -> Any:
        if not bf16:
            return contextlib.nullcontext()
        # a captured graph must not keep autocast's cast copies of the weights between replays
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16, cache_enabled=opts.step != "cuda_graph")

    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=recipe.label_smoothing)
    net: Callable[[torch.Tensor], torch.Tensor] = model
    if opts.step == "compile":
        net = torch.compile(model)  # type: ignore[assignment]

    key = fingerprint(model, data, recipe, seed)
    done = load_checkpoint(checkpoint, model=model, buffers=opt.buffers, generator=generator,
                           fingerprint=key) if checkpoint is not None else None
    start_epoch = done.epoch if done is not None else 0
    step = done.step if done is not None else 0
    earlier_s = done.train_s if done is not None else 0.0
    earlier_j = done.energy_j if done is not None else None

    loss_sum = torch.zeros((), dtype=torch.float32, device=device)

    def eager_step(xb: "torch.Tensor", yb: "torch.Tensor") -> None:
        opt.zero_grad()
        with autocast():
            out = net(xb)
        loss = loss_fn(out.float(), yb)
        loss.backward()
        opt.step()
        loss_sum.add_(loss.detach())

    guard = contextlib.ExitStack()
    if device.type == "cpu" and opts.cpu_threads is not None:
        guard.enter_context(_cpu_threads(opts.cpu_threads))
    nchw_pools = 0
    if device.type == "cuda" and opts.channels_last and not nhwc_avg_pool_backward_ok(device):
        nchw_pools = guard.enter_context(pool_in_nchw(model))  # pytorch/pytorch#188344: see pool_layout
    with guard:
        graph: "torch.cuda.CUDAGraph | None" = None
        static_x = static_y = None
        epoch_s: list[float] = []
        _sync(device)
        setup_s = time.perf_counter() - t0
        for epoch in range(start_epoch, recipe.epochs):
            te = time.perf_counter()
            loss_sum.zero_()
            for index in batches.epoch():
                xb, yb = batches.batch(index)
                opt.set_lr(recipe.lr_at(step, total_steps))
                if opts.step != "cuda_graph":
                    eager_step(xb, yb)
                elif graph is not None:
                    assert static_x is not None and static_y is not None
                    static_x.copy_(xb)
                    static_y.copy_(yb)
                    graph.replay()
                elif step - start_epoch * batches.steps_per_epoch < GRAPH_WARMUP_STEPS:
                    side = torch.cuda.Stream(device)
                    side.wait_stream(torch.cuda.current_stream(device))
                    with torch.cuda.stream(side):
                        eager_step(xb, yb)
                    torch.cuda.current_stream(device).wait_stream(side)
                else:
                    static_x, static_y = xb.clone(), yb.clone()
                    opt.zero_grad()
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        eager_step(static_x, static_y)
                    graph.replay()  # capture records the step without running it
                step += 1
            _sync(device)
            epoch_s.append(time.perf_counter() - te)
            if checkpoint is not None and epoch + 1 < recipe.epochs:
                so_far = earlier_s + time.perf_counter() - t0
                e_now = log.energy_j(e0, log.mark()) if log is not None and e0 is not None else None
                save_checkpoint(checkpoint, model=model, buffers=opt.buffers, generator=generator,
                                progress=Progress(epoch + 1, step, so_far,
                                                  None if e_now is None else (earlier_j or 0.0) + e_now, key))
            if on_epoch is not None:
                on_epoch(epoch + 1, recipe.epochs)
        final_loss = float(loss_sum.item()) / max(1, batches.steps_per_epoch)

        te = time.perf_counter()
        def accuracy(x: "torch.Tensor", y: "torch.Tensor") -> float:
            return evaluate_accuracy(model, x, y, mean=mean, std=std, device=device, batch_size=opts.eval_batch_size,
                                     autocast=autocast, channels_last=bool(opts.channels_last))

        val_pct = accuracy(x_val, y_val)
        test_pct = None
        if data.x_test is not None and data.y_test is not None:
            test_pct = accuracy(tensor(data.x_test, torch.float32), tensor(data.y_test, torch.int64))
        _sync(device)
        t_end = time.perf_counter()
        e_end = log.mark() if log is not None else None
        energy_j = None
        if log is not None and e0 is not None and e_end is not None:
            energy_j = log.energy_j(e0, e_end) + (earlier_j or 0.0)
    trained_s = sum(epoch_s)
    images = batches.batch_size * batches.steps_per_epoch * len(epoch_s)
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    return TrainingResult(
        val_accuracy_pct=val_pct, test_accuracy_pct=test_pct, final_train_loss=final_loss,
        train_s=earlier_s + (t_end - t0), setup_s=setup_s, eval_s=t_end - te, epoch_s=tuple(epoch_s),
        images_per_s=images / trained_s if trained_s > 0 else 0.0, peak_memory_mib=peak,
        energy_j=energy_j, energy_source=None if energy_j is None else "measured",
        epochs=recipe.epochs, resumed_from_epoch=start_epoch, steps=step,
        settings={"options": {**opts.as_dict(), "data": "device" if on_dev else "host"}, "nchw_pools": nchw_pools,
                  "recipe": recipe.as_dict(), "seed": int(seed), "device_name": device_name(device),
                  "data": data.name},
    )


@contextlib.contextmanager
def _cpu_threads(n: int) -> Any:
    """``torch.set_num_threads(n)`` while open, then the count before."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def device_name(device: "torch.device | str") -> str:
    """The name of the device a training runs on: the GPU's, or ``CPU (<processor>)``."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    return f"CPU ({platform.processor() or platform.machine()})"
