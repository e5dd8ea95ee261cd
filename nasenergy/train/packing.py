"""Several trainings sharing one GPU: how many (`choose_slots`, from the networks' measured
training utilization and peak memory) and running them (`train_packed`: one process per slot,
each taking the next job from a shared queue), with the board's energy apportioned.

Small NATS networks leave most of a GPU's arithmetic idle: one training of a 1 M-parameter cell
keeps the tensor cores busy a few per cent of the time. The project's own signal, utilization
(achieved FLOP/s over the board's peak), says how idle: a training at utilization ``u`` leaves
arithmetic room for about ``target / u`` of its kind. `choose_slots` takes the measured utilization
and peak memory of a probe training and bounds the count by memory and host cores.

Measured (``results/train_benchmark``, an H200): arithmetic room is not time room. Trainings
whose step is a replayed CUDA graph (`TrainOptions` ``auto``) keep the GPU busy with small kernels;
processes without MPS take turns on it, so 2-16 processes gained at most 1.09x in wall time over
one, and the count `choose_slots` picked for them (16) was the slowest. Packing pays where each
training leaves the GPU waiting between launches (eager steps); pass ``slots=1`` for graph steps
until a measurement says otherwise.

Energy while trainings share the board: the parent process reads the board's energy counter
every ``sample_s`` seconds; each interval's joules are split among the trainings running in it in
proportion to their achieved training FLOP/s (their share of the board's arithmetic), and a
training's energy is the sum of its shares (``energy_source = "apportioned"``; idle power is
shared the same way, so the shares add up to the board's energy over the run).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from nasenergy.errors import typed_first_line
from nasenergy.hardware.flops import count_model
from nasenergy.train.energy import EnergyCounter, board_counter
from nasenergy.train.network import build_for_data
from nasenergy.train.options import TrainOptions
from nasenergy.train.recipe import NATS_RECIPE, TrainRecipe
from nasenergy.train.result import TrainingResult
from nasenergy.train.trainer import train_model
from search_spaces import get_space

TRAIN_FLOPS_PER_FORWARD = 3.0
"""A training step's FLOPs per image as a multiple of the forward pass's (backward about twice)."""
DEFAULT_UTILIZATION_TARGET = 0.30
"""The summed training utilization `choose_slots` packs up to (the trainer benchmark in
``results/train_benchmark`` measures the packs this gives: none paid for graph-replayed steps)."""
MEMORY_SHARE = 0.8
"""The share of the board's memory the packed trainings' peaks may take together."""


def training_utilization(flops_per_img: float, images_per_s: float, peak_flops: float) -> float:
    """A training's utilization: ``3 * forward FLOPs per image * images/s / peak FLOP/s``."""
    if peak_flops <= 0:
        raise ValueError("peak FLOP/s must be positive")
    return TRAIN_FLOPS_PER_FORWARD * flops_per_img * images_per_s / peak_flops


def choose_slots(utilization: float, peak_memory_mib: float, *, board_memory_mib: float,
                 host_cores: int | None = None, target: float = DEFAULT_UTILIZATION_TARGET,
                 max_slots: int = 16) -> int:
    """How many trainings of this kind to run side by side on one board.

    Args:
        utilization: one training's measured utilization alone on the board (0-1).
        peak_memory_mib: its peak GPU memory, MiB (the CUDA context is not in it).
        board_memory_mib: the board's memory, MiB.
        host_cores: CPU cores available (each training process drives its GPU work from one);
            ``None``: ``os.cpu_count()``.
        target: the summed utilization to pack up to.
        max_slots: a hard upper bound.

    Returns:
        ``min(ceil(target / utilization), memory bound, host cores, max_slots)``, at least 1.
    """
    cores = host_cores if host_cores is not None else (os.cpu_count() or 1)
    by_util = max_slots if utilization <= 0 else math.ceil(target / utilization)
    context_mib = 600.0  # a CUDA context per process
    by_memory = int(MEMORY_SHARE * board_memory_mib // max(1.0, peak_memory_mib + context_mib))
    return max(1, min(by_util, by_memory, max(1, cores), max_slots))


@dataclass(frozen=True)
class TrainJob:
    """One training to run: `arch` of `space_name`, weights and batches from `seed`."""

    key: str
    space_name: str
    arch: str
    seed: int = 0


@dataclass(frozen=True)
class PackedTraining:
    """A job's result and when it ran (``time.monotonic`` seconds, shared by the host's processes)."""

    job: TrainJob
    result: TrainingResult
    start_s: float
    end_s: float
    train_flops_per_s: float
    slot: int


def _worker(slot: int, device: str, jobs: Any, results: Any, data_factory: Callable[[], Any],
            recipe: TrainRecipe, options: TrainOptions) -> None:
    """One slot's process: train jobs from the queue until it yields ``None``."""
    data = data_factory()
    while True:
        job = jobs.get()
        if job is None:
            return
        try:
            space = get_space(job.space_name)
            model = build_for_data(space, job.arch, in_channels=data.input_shape[0], num_classes=data.num_classes,
                                   seed=job.seed)
            flops = count_model(model, data.input_shape).flops_per_img
            start = time.monotonic()
            result = train_model(model, data, recipe=recipe, options=replace(options, device=device), seed=job.seed,
                                 energy=None)
            end = time.monotonic()
            rate = TRAIN_FLOPS_PER_FORWARD * flops * result.images_per_s
            results.put(("ok", PackedTraining(job, result, start, end, rate, slot)))
        except Exception as exc:  # one failed network is reported, the slot goes on
            results.put(("failed", job, typed_first_line(exc)))


def apportion(trainings: Sequence[PackedTraining], readings: Sequence[tuple[float, int]]) -> list[float]:
    """Each training's joules: every interval between two counter readings split among the
    trainings overlapping it, in proportion to ``overlap seconds * training FLOP/s``; intervals
    with no training leave their energy unassigned (idle before the first or after the last)."""
    shares = [0.0] * len(trainings)
    for (t0, e0), (t1, e1) in zip(readings, readings[1:]):
        joules = (e1 - e0) / 1000.0
        weights = [max(0.0, min(t1, tr.end_s) - max(t0, tr.start_s)) * max(tr.train_flops_per_s, 1.0)
                   for tr in trainings]
        total = sum(weights)
        if total <= 0:
            continue
        for i, w in enumerate(weights):
            shares[i] += joules * w / total
    return shares


@dataclass(frozen=True)
class PackReport:
    """What `train_packed` did: the trainings, the failures, the board's energy and the wall time."""

    trainings: tuple[PackedTraining, ...]
    failures: tuple[tuple[TrainJob, str], ...]
    wall_s: float
    board_energy_j: float | None
    slots: int


def train_packed(jobs: Sequence[TrainJob], data_factory: Callable[[], Any], *, slots: int,
                 recipe: TrainRecipe = NATS_RECIPE, options: TrainOptions | None = None,
                 device: str = "cuda:0", counter: EnergyCounter | None | str = "auto",
                 sample_s: float = 0.1) -> PackReport:
    """Train `jobs` with `slots` processes sharing `device`.

    Args:
        jobs: the trainings.
        data_factory: a picklable zero-argument callable (a module-level function or a
            ``functools.partial`` of one) each process calls once to get its `ImageData`.
        slots: processes side by side (`choose_slots`).
        recipe: what each training computes (as `nasenergy.train.train_model`).
        options: how fast (``options.device`` is replaced by `device`).
        device: the board the trainings share (``cuda:<n>``, or ``cpu`` for tests).
        counter: the board's energy counter (``"auto"``: NVML's for `device`; ``None``: no energy).
        sample_s: seconds between counter readings.
    """
    opts = options or TrainOptions(device=device)
    ctx = mp.get_context("spawn")
    job_q: Any = ctx.Queue()
    res_q: Any = ctx.Queue()
    for job in jobs:
        job_q.put(job)
    for _ in range(slots):
        job_q.put(None)
    energy = board_counter(device) if counter == "auto" else counter
    readings: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        assert energy is not None and not isinstance(energy, str)
        while True:
            readings.append((time.monotonic(), int(energy.total_energy_mj())))
            if stop.wait(sample_s):
                readings.append((time.monotonic(), int(energy.total_energy_mj())))
                return

    sampler = threading.Thread(target=sample, daemon=True) if energy is not None else None
    t0 = time.monotonic()
    if sampler is not None:
        sampler.start()
    procs = [ctx.Process(target=_worker, args=(k, device, job_q, res_q, data_factory, recipe, opts), daemon=True)
             for k in range(slots)]
    for p in procs:
        p.start()
    done: list[PackedTraining] = []
    failures: list[tuple[TrainJob, str]] = []
    try:
        while len(done) + len(failures) < len(jobs):
            if not any(p.is_alive() for p in procs) and res_q.empty():
                break
            try:
                item = res_q.get(timeout=1.0)
            except Exception:
                continue
            if item[0] == "ok":
                done.append(item[1])
            else:
                failures.append((item[1], item[2]))
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
        stop.set()
        if sampler is not None:
            sampler.join()
    wall = time.monotonic() - t0
    board_j = (readings[-1][1] - readings[0][1]) / 1000.0 if len(readings) >= 2 else None
    if len(readings) >= 2:
        shares = apportion(done, readings)
        done = [replace(tr, result=replace(tr.result, energy_j=j, energy_source="apportioned"))
                for tr, j in zip(done, shares)]
    return PackReport(tuple(done), tuple(failures), wall, board_j, slots)
