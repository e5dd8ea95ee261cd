"""The trainer against a plain training loop, on one GPU (or the CPU), every rival in this script.

Stages (each appends rows to its CSV as they finish, and a rerun skips the rows already there, so
a run cut off by a time limit resumes):

* ``speed``: `--networks` deployed TSS networks spanning the space's FLOPs (the networks at evenly
  spaced FLOP quantiles of the learnable deployed networks), each trained `--epochs` epochs on
  random CIFAR-shaped data (`--images` 3x32x32 images, 10 classes, held on the device) by
  the plain loop (fp32 eager steps, ``torch.optim.SGD`` and a per-step cosine schedule) and by
  ``nasenergy.train.train_model`` (``auto``: bf16 autocast, channels_last, one CUDA graph per
  step). Every cost is counted: data copy, warm-up, graph capture or compilation, the epochs and
  the final evaluation. Energy from NVML's board counter (whole board, idle included).
* ``pack``: the same trainings by the trainer with 1, 2, 4 and 8 processes sharing the board
  (`nasenergy.train.packing.train_packed`), and with the count `choose_slots` picks.
* ``parity``: accuracy on scikit-learn's digits (held-out validation split, seed 0), both loops,
  declared seeds (`--parity-seeds`, default 100-104), `--parity-epochs` epochs, no flip.
* ``fidelity``: one epoch of each of `--fidelity-networks` deployed networks of cells 0-999 (a
  seeded sample, seed 2026) on 50,000 random CIFAR-shaped images; compared by
  ``experiments/train_fidelity.py`` with NATS-Bench's recorded time per epoch.

    python experiments/train_benchmark.py --out results/train_benchmark/h100 --stages speed,pack,parity
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import json
import math
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nasenergy.hardware.flops import count_model  # noqa: E402
from nasenergy.train.augment import augment_batch, normalise  # noqa: E402
from nasenergy.train.data import load_data  # noqa: E402
from nasenergy.train.data_random import random_image_data  # noqa: E402
from nasenergy.train.energy import board_counter  # noqa: E402
from nasenergy.train.network import build_for_data  # noqa: E402
from nasenergy.train.options import TrainOptions  # noqa: E402
from nasenergy.hardware.peaks import datasheet_peak_flops  # noqa: E402
from nasenergy.train.packing import TrainJob, choose_slots, train_packed, training_utilization  # noqa: E402
from nasenergy.train.recipe import NATS_RECIPE, TrainRecipe  # noqa: E402
from nasenergy.train.trainer import device_name, evaluate_accuracy, train_model  # noqa: E402
from search_spaces import get_space  # noqa: E402

STAGES = ("speed", "pack", "parity", "fidelity")
TRAINER_LOOPS: dict[str, dict[str, Any]] = {
    "trainer": {},  # auto: bf16 autocast, channels_last, one CUDA graph per step on a GPU
    "trainer_eager": {"step": "eager"},  # bf16 and channels_last, no graph
    "trainer_fp32": {"precision": "fp32", "channels_last": False},  # the graph alone
    "trainer_nchw": {"channels_last": False},  # bf16 and the graph, contiguous memory
    "trainer_compile": {"step": "compile"},
}
"""Ablations of the trainer's settings in the speed stage (``--loops``), each beside the plain loop."""


def spanning_networks(n: int) -> list[str]:
    """`n` deployed TSS networks at evenly spaced FLOP quantiles (smallest to largest)."""

    space = get_space("tss")
    reps = [a for a in space.deployed_classes() if space.output_depends_on_input(a)]
    flops = sorted((space.count_deployed(a, "cifar10").flops, str(a)) for a in reps)
    picks = [flops[round(q * (len(flops) - 1))][1] for q in np.linspace(0, 1, n)]
    return list(dict.fromkeys(picks))


def fidelity_networks(n: int, seed: int = 2026) -> list[tuple[int, str]]:
    """A seeded sample of `n` cells of 0-999 with distinct learnable deployed networks."""

    space = get_space("tss")
    rng = np.random.default_rng(seed)
    seen: set[str] = set()
    out: list[tuple[int, str]] = []
    for idx in rng.permutation(1000):
        arch = space.arch_at(int(idx))
        if not space.output_depends_on_input(arch):
            continue
        key = space.deployed_key(arch)
        if key in seen:
            continue
        seen.add(key)
        out.append((int(idx), str(arch)))
        if len(out) == n:
            break
    return out


def plain_loop(model: Any, data: Any, *, epochs: int, device: str, seed: int, hflip: bool = True) -> dict[str, Any]:
    """The plain loop: fp32 eager steps, ``torch.optim.SGD`` (Nesterov 0.9, wd 5e-4, lr 0.1),
    cosine annealing per step, batch 256, the same on-device augmentation as the trainer."""
    import torch


    dev = torch.device(device)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    x = torch.from_numpy(data.x_train).to(dev)
    y = torch.from_numpy(data.y_train).to(dev)
    mean = torch.tensor(data.mean, device=dev).view(1, -1, 1, 1)
    std = torch.tensor(data.std, device=dev).view(1, -1, 1, 1)
    model.to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    bs = min(256, x.shape[0])
    steps = x.shape[0] // bs
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / (epochs * steps))))
    loss_fn = torch.nn.CrossEntropyLoss()
    pad = NATS_RECIPE.padding_px(data.input_shape[1])
    for _ in range(epochs):
        order = torch.randperm(x.shape[0], device=dev, generator=gen)
        for i in range(steps):
            idx = order[i * bs:(i + 1) * bs]
            xb = normalise(augment_batch(x[idx], padding_px=pad, hflip=hflip, generator=gen), mean, std)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), y[idx])
            loss.backward()
            opt.step()
            sched.step()
    accuracy = evaluate_accuracy(model, torch.from_numpy(data.x_val), torch.from_numpy(data.y_val), mean=mean, std=std,
                                 device=dev, batch_size=1024, autocast=contextlib.nullcontext, channels_last=False)
    return {"val_accuracy_pct": accuracy}


class Rows:
    """A CSV that rows are appended to as they finish; `has` tells a rerun what is done."""

    def __init__(self, path: Path, fields: list[str]) -> None:
        self.path, self.fields = path, fields
        self.done: set[tuple[str, ...]] = set()
        if path.is_file():
            with open(path, newline="") as fh:
                for row in csv.DictReader(fh):
                    self.done.add(self._key(row))

    @staticmethod
    def _key(row: dict[str, Any]) -> tuple[str, ...]:
        return (str(row.get("loop")), str(row.get("arch")), str(row.get("seed")), str(row.get("slots", "")))

    def has(self, **row: Any) -> bool:
        return self._key({k: str(v) for k, v in row.items()}) in self.done

    def add(self, row: dict[str, Any]) -> None:
        new = not self.path.is_file()
        with open(self.path, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=self.fields)
            if new:
                writer.writeheader()
            writer.writerow({k: row.get(k) for k in self.fields})
        self.done.add(self._key({k: str(v) for k, v in row.items()}))
        print(json.dumps({k: row.get(k) for k in self.fields}), flush=True)


def _timed(fn: Any, counter: Any, device: str) -> tuple[Any, float, float | None, float | None]:
    """``fn()``, its wall seconds, the board's joules and the mean share of the time the board had a
    kernel running (NVML utilization.gpu, %), the last two ``None`` without a counter."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()
    busy: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            with contextlib.suppress(Exception):
                busy.append(float(counter.utilization_rates_pct()[0]))

    sampler = threading.Thread(target=sample, daemon=True) if hasattr(counter, "utilization_rates_pct") else None
    if sampler is not None:
        sampler.start()
    e0 = counter.total_energy_mj() if counter is not None else None
    t0 = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    e1 = counter.total_energy_mj() if counter is not None else None
    stop.set()
    if sampler is not None:
        sampler.join()
    joules = None if e0 is None or e1 is None else (e1 - e0) / 1000.0
    return out, wall, joules, float(np.mean(busy)) if busy else None


SPEED_FIELDS = ["loop", "arch", "seed", "slots", "epochs", "images", "flops_per_img", "wall_s", "energy_j",
                "val_accuracy_pct", "setup_s", "images_per_s", "peak_memory_mib", "device_name", "settings",
                "gpu_busy_pct"]


def stage_speed(args: argparse.Namespace, out: Path, counter: Any) -> None:

    space = get_space("tss")
    data = random_image_data(args.images, (3, 32, 32), 10, seed=0)
    rows = Rows(out / "speed.csv", SPEED_FIELDS)
    loops = args.loops.split(",")
    for arch in spanning_networks(args.networks):
        for loop in loops:
            if rows.has(loop=loop, arch=arch, seed=0, slots=1):
                continue
            model = build_for_data(space, arch, in_channels=3, num_classes=10, seed=0)
            flops = count_model(model, (3, 32, 32)).flops_per_img
            if loop == "plain":
                res, wall, joules, busy_pct = _timed(lambda: plain_loop(model, data, epochs=args.epochs, device=args.device, seed=0),
                                           counter, args.device)
                extra: dict[str, Any] = {"val_accuracy_pct": res["val_accuracy_pct"], "settings": "fp32 eager, torch.optim.SGD"}
            else:
                opts = replace(TrainOptions(device=args.device), **TRAINER_LOOPS[loop])
                res, wall, joules, busy_pct = _timed(lambda: train_model(model, data, recipe=TrainRecipe(epochs=args.epochs),
                                                               options=opts, seed=0, energy=None), counter, args.device)
                extra = {"val_accuracy_pct": res.val_accuracy_pct, "setup_s": res.setup_s,
                         "images_per_s": res.images_per_s, "peak_memory_mib": res.peak_memory_mib,
                         "settings": json.dumps({**res.settings["options"], "nchw_pools": res.settings.get("nchw_pools")})}
            rows.add({"loop": loop, "arch": arch, "seed": 0, "slots": 1, "epochs": args.epochs, "images": args.images,
                      "flops_per_img": flops, "wall_s": wall, "energy_j": joules, "device_name": device_name(args.device),
                      "gpu_busy_pct": busy_pct,
                      **extra})


def stage_pack(args: argparse.Namespace, out: Path, counter: Any) -> None:

    rows = Rows(out / "pack.csv", ["loop", "arch", "seed", "slots", "networks", "epochs", "images", "wall_s",
                                   "board_energy_j", "failures", "device_name"])
    arch_rows = Rows(out / "pack_networks.csv", ["loop", "arch", "seed", "slots", "train_s", "energy_j",
                                                 "energy_source", "images_per_s", "peak_memory_mib", "start_s", "end_s"])
    archs = spanning_networks(args.networks)
    factory = functools.partial(random_image_data, args.images, (3, 32, 32), 10, 0)
    chosen = chosen_slots(out / "speed.csv", args.device)
    slot_list = [int(s) for s in args.slots.split(",")]
    if chosen is not None and chosen not in slot_list:
        slot_list.append(chosen)
    for slots in slot_list:
        if rows.has(loop="packed", arch="all", seed=0, slots=slots):
            continue
        jobs = [TrainJob(a, "tss", a, 0) for a in archs]
        rep = train_packed(jobs, factory, slots=slots, recipe=TrainRecipe(epochs=args.epochs),
                           options=TrainOptions(device=args.device), device=args.device, counter=counter)
        first = min((tr.start_s for tr in rep.trainings), default=0.0)
        for tr in rep.trainings:  # start_s, end_s: from the first training's start (the union is the packed span)
            arch_rows.add({"loop": "packed", "arch": tr.job.arch, "seed": 0, "slots": slots, "train_s": tr.result.train_s,
                           "energy_j": tr.result.energy_j, "energy_source": tr.result.energy_source,
                           "images_per_s": tr.result.images_per_s, "peak_memory_mib": tr.result.peak_memory_mib,
                           "start_s": tr.start_s - first, "end_s": tr.end_s - first})
        rows.add({"loop": "packed", "arch": "all", "seed": 0, "slots": slots, "networks": len(rep.trainings),
                  "epochs": args.epochs, "images": args.images, "wall_s": rep.wall_s,
                  "board_energy_j": rep.board_energy_j, "failures": len(rep.failures),
                  "device_name": device_name(args.device)})


def chosen_slots(speed_csv: Path, device: str) -> int | None:
    """What `choose_slots` picks for these networks: from the trainer's solo rows of the speed
    stage, their mean training utilization (bf16 datasheet peak) and largest peak memory."""
    import torch

    if not speed_csv.is_file() or not device.startswith("cuda"):
        return None
    with open(speed_csv, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["loop"] == "trainer" and r["images_per_s"]]
    if not rows:
        return None
    peak = datasheet_peak_flops(rows[0]["device_name"], "bf16")
    utils = [training_utilization(float(r["flops_per_img"]), float(r["images_per_s"]), peak) for r in rows]
    memory = max(float(r["peak_memory_mib"] or 0.0) for r in rows)
    board_mib = torch.cuda.get_device_properties(0).total_memory / 2**20
    slots = choose_slots(float(np.mean(utils)), memory, board_memory_mib=board_mib)
    print(f"choose_slots: mean training utilization {np.mean(utils):.4f}, peak memory {memory:.0f} MiB -> {slots}",
          flush=True)
    return slots


def stage_parity(args: argparse.Namespace, out: Path, counter: Any) -> None:

    space = get_space("tss")
    data = load_data("digits", split_seed=0)
    rows = Rows(out / "parity.csv", ["loop", "arch", "seed", "slots", "epochs", "val_accuracy_pct", "wall_s", "device_name",
                                     "nchw_pools"])
    for arch in spanning_networks(args.networks):
        for seed in [int(s) for s in args.parity_seeds.split(",")]:
            for loop in ("plain", "trainer"):
                if rows.has(loop=loop, arch=arch, seed=seed, slots=1):
                    continue
                model = build_for_data(space, arch, in_channels=1, num_classes=10, seed=seed)
                if loop == "plain":
                    res, wall, _, _ = _timed(lambda: plain_loop(model, data, epochs=args.parity_epochs, device=args.device,
                                                             seed=seed, hflip=False), None, args.device)
                    acc, pools = res["val_accuracy_pct"], None
                else:
                    res, wall, _, _ = _timed(lambda: train_model(model, data, recipe=TrainRecipe(epochs=args.parity_epochs, hflip=False),
                                                              options=TrainOptions(device=args.device), seed=seed, energy=None),
                                          None, args.device)
                    acc, pools = res.val_accuracy_pct, res.settings.get("nchw_pools")
                rows.add({"loop": loop, "arch": arch, "seed": seed, "slots": 1, "epochs": args.parity_epochs,
                          "val_accuracy_pct": acc, "wall_s": wall, "device_name": device_name(args.device),
                          "nchw_pools": pools})


def stage_fidelity(args: argparse.Namespace, out: Path, counter: Any) -> None:

    space = get_space("tss")
    data = random_image_data(args.fidelity_images, (3, 32, 32), 10, seed=0)
    rows = Rows(out / "fidelity.csv", ["loop", "arch", "seed", "slots", "arch_index", "epoch_s", "setup_s", "wall_s",
                                       "device_name"])
    for idx, arch in fidelity_networks(args.fidelity_networks):
        for loop in args.fidelity_loops.split(","):
            if rows.has(loop=loop, arch=arch, seed=0, slots=1):
                continue
            model = build_for_data(space, arch, in_channels=3, num_classes=10, seed=0)
            step = "auto" if loop == "trainer" else "eager"
            precision = "auto" if loop == "trainer" else "fp32"
            opts = TrainOptions(device=args.device, step=step, precision=precision,
                                channels_last=None if loop == "trainer" else False)
            res, wall, _, _ = _timed(lambda: train_model(model, data, recipe=TrainRecipe(epochs=1), options=opts, seed=0,
                                                      energy=None), None, args.device)
            rows.add({"loop": loop, "arch": arch, "seed": 0, "slots": 1, "arch_index": idx, "epoch_s": res.epoch_s[0],
                      "setup_s": res.setup_s, "wall_s": wall, "device_name": device_name(args.device)})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for the CSV files (rows are appended)")
    parser.add_argument("--stages", default="speed,pack,parity", help=f"comma-separated, of {', '.join(STAGES)}")
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--networks", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--images", type=int, default=25_000)
    parser.add_argument("--loops", default="plain,trainer", help=f"of plain, {', '.join(TRAINER_LOOPS)}")
    parser.add_argument("--slots", default="1,2,4,8")
    parser.add_argument("--parity-seeds", default="100,101,102,103,104")
    parser.add_argument("--parity-epochs", type=int, default=30)
    parser.add_argument("--fidelity-networks", type=int, default=100)
    parser.add_argument("--fidelity-images", type=int, default=50_000, help="CIFAR-10's training set size")
    parser.add_argument("--fidelity-loops", default="trainer,plain")
    args = parser.parse_args(argv)
    stages = [s for s in args.stages.split(",") if s]
    bad = [s for s in stages if s not in STAGES]
    if bad:
        parser.error(f"unknown stage {bad[0]!r}; choose from {', '.join(STAGES)}")
    bad = [loop for loop in args.loops.split(",") if loop != "plain" and loop not in TRAINER_LOOPS]
    if bad:
        parser.error(f"unknown loop {bad[0]!r}; choose from plain, {', '.join(TRAINER_LOOPS)}")
    args.out.mkdir(parents=True, exist_ok=True)

    counter = board_counter(args.device)
    for stage in stages:
        t0 = time.perf_counter()
        globals()[f"stage_{stage}"](args, args.out, counter)
        print(f"stage {stage}: {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
