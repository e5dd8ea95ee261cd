"""Measure every deployed TSS network (or a seeded sample of SSS ones) on the GPU, resumably, into a recorded profile.

Subcommands:

``measure``
    Measures the deployed network of every deployed class (`SearchSpace.deployed_key`: 6,040 TSS
    networks without dead or zero ops, each standing for every cell that deploys to it) at the
    CIFAR input shape, fp16 batch 1024 (add ``--fp32`` for fp32 batch 256 rows too), in the faster
    of the channels-last and contiguous memory formats, with the GPU counters of the energy window.
    Classes come in a fixed order: by first appearance in a seeded random permutation of all 15,625
    cells, so any prefix is a random sample; a class's row names its member of smallest official
    index. Classes already in ``--profile`` or in any chunk CSV in ``--chunk-dir`` are skipped.
    Rows are appended to a new chunk CSV as they are measured; the run stops cleanly before
    ``--time-limit-s``. The next network is built, and copied for each setting and memory format
    (`nasenergy.hardware.cuda_meter.host_copies`), on a CPU thread while the current one is measured.
    ``--reference N`` first re-measures the profile's N earliest classes on this board into a
    ``reference_*.csv`` beside the chunk (never merged), so boards of different calls can be compared
    network for network; ``--reference-again`` measures them once more at the end of the run, in the
    same process, into ``late_reference_*.csv`` (time is kept back for it).
    ``--space sss`` measures SSS configurations instead (each its own deployed network), in a seeded
    random order; ``--max-classes 4096`` takes the first 4,096 of it, a uniform random sample.

``merge``
    Merges chunk CSVs into the profile (default: the space's deployed profile in ``nasenergy/data``).
    Idempotent: rows already in the profile win; a class measured twice in the chunks keeps its
    earliest row; the output is sorted and byte-for-byte reproducible.

``compare``
    The agreement of two chunk or profile CSVs on the networks and settings both hold (e.g. a
    later call that measured networks again), written as ``remeasure`` writes it.

``remeasure``
    Re-measures N random classes of the profile and reports the relative differences of
    throughput and energy per image to ``--out`` (default ``results/profile_agreement``).

Usage (on a GPU machine)::

    PYTHONPATH=. python3 experiments/profile_tss_space.py measure --time-limit-s 540 --chunk-dir $OUT
    python experiments/profile_tss_space.py merge chunks/*.csv

On a machine of several GPUs, run one process per GPU, each on its own share of the classes::

    for i in $(seq 0 $((N - 1))); do
        CUDA_VISIBLE_DEVICES=$i PYTHONPATH=. python3 experiments/profile_tss_space.py measure \
            --shard $i/$N --chunk-dir $OUT &
    done; wait
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import multiprocessing
import pickle
import csv
import datetime as dt
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.hardware.counters import COUNTER_FIELDS
from nasenergy.hardware.cuda_meter import CudaMeter, host_copies
from nasenergy.hardware.deployed import with_official_counts
from nasenergy.hardware.energy_window import MIN_BUSY_FRAC
from nasenergy.hardware.flops import ModelCount, count_model, remember_count
from nasenergy.hardware.recorded import (
    DEPLOYED_PROFILE,
    SSS_PROFILE,
    WRITTEN_COLUMNS,
    measurement_from_row,
    measurement_to_row,
    read_profile,
    shape_to_str,
    write_profile,
)
from search_spaces import get_space
from lib.profile_rows import (agreement_row, class_seconds, complete_rows, fill_empty, merge_rows, parse_fill,
                              random_pick, steady_rows, stratified_pick, write_agreement)

SETTINGS_FP16 = ("fp16", 1024, None)  # None: the meter measures in the faster memory format
SETTINGS_FP32 = ("fp32", 256, None)


def class_order(space: Any, seed: int) -> list[Any]:
    """Deployed classes (their members of smallest index) by first appearance in a seeded
    permutation of all cells."""
    import numpy as np

    seen: set[str] = set()
    order = []
    for i in np.random.default_rng(seed).permutation(space.size):
        arch = space.arch_at(int(i))
        key = space.deployed_key(arch)
        if key not in seen:
            seen.add(key)
            order.append(space.deployed_representative(arch))
    return order


def _done_keys(paths: list[Path], space: Any, input_shape: str = "3x32x32") -> set[tuple[str, str, int]]:
    """(deployed class, precision, batch size) of the rows of `paths` measured at `input_shape`."""
    keys = set()
    for path in paths:
        for row in complete_rows(path):
            if row["input_shape"] == input_shape:
                keys.add((space.deployed_key(row["canonical_arch"]), row["precision"], int(row["batch_size"])))
    return keys


def missing_settings(key: str, settings: list[tuple[str, int, bool | None]],
                     done: set[tuple[str, str, int]]) -> list[tuple[str, int, bool | None]]:
    """The settings (precision, batch size, channels-last) not yet recorded for deployed class `key`."""
    return [s for s in settings if (key, s[0], s[1]) not in done]


def classes_to_measure(space: Any, seed: int, settings: list[tuple[str, int, bool | None]],
                       done: set[tuple[str, str, int]], *, max_classes: int | None = None,
                       shard: tuple[int, int] = (0, 1)) -> list[Any]:
    """The classes of this process (shard ``K/N``: every N-th from K) still missing a setting, in
    the seeded order; ``max_classes``: only the order's first N count (the sample), whatever is
    already done, so a resumed run completes the same sample."""
    order = class_order(space, seed)
    if max_classes is not None:
        order = order[:max_classes]
    todo = [a for a in order if missing_settings(space.deployed_key(a), settings, done)]
    k, n = shard
    return todo[k::n]


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``0 <= K < N``."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shard must look like K/N, e.g. 0/2; got {text!r}") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"shard {text!r}: need 0 <= K < N")
    return k, n


def _energy_options(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in (("energy_window_s", args.energy_window_s),
                              ("energy_repeats", args.energy_repeats),
                              ("energy_warmup_s", getattr(args, "energy_warmup_s", None)),
                              ("energy_source", getattr(args, "energy_source", None)),
                              ("n_repeats", getattr(args, "repeats", None)),
                              ("energy_max_window_s", getattr(args, "energy_max_window_s", None)),
                              ("energy_target_rel_se", getattr(args, "energy_target_rel_se", None)),
                              ("throughput_from_energy", getattr(args, "throughput_from_energy", None)),
                              ("release_every", getattr(args, "release_every", None)),
                              ("cudnn_benchmark", getattr(args, "cudnn_benchmark", None))) if v is not None}


def _utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _run_columns(meter: Any) -> dict[str, Any]:
    """The optional profile columns that describe this measuring run."""
    return {"gpu_uuid": meter.nvml_device.uuid if meter.nvml_device is not None else "",
            "energy_window_s": meter.energy_window_s, "energy_windows": meter.energy_repeats}


def _measure_rows(meter: Any, space: Any, arch: Any, prepared: "Prepared",
                  settings: list[tuple[str, int, bool | None]], torch_version: str,
                  dataset: str = "cifar10") -> Iterator[dict[str, str]]:
    """One profile row per setting: `arch`'s deployed network for `dataset` (its input shape and
    class count) measured, with its official counts."""
    for precision, batch_size, channels_last in settings:
        model = prepared.copies.get(precision, prepared.model)
        m = meter.measure(model, space.input_shape(dataset), batch_size=batch_size,
                          precision=precision, channels_last=channels_last)
        m = with_official_counts(m, space, arch, dataset)
        yield measurement_to_row(m, canonical_arch=str(arch), arch_index=space.index(arch),
                                 driver_version=meter.driver_version or "", torch_version=torch_version,
                                 measured_at=_utc_now(), **_run_columns(meter))


@dataclass
class Prepared:
    """A deployed network made ready on the CPU: the model, its FLOPs count and its host copies per precision."""

    model: Any
    copies: dict[str, Any]
    count: ModelCount | None = None
    input_shape: tuple[int, ...] = ()

    def remember(self) -> "Prepared":
        """Seed the FLOPs cache with the count (made in another process, the cache did not travel)."""
        if self.count is not None:
            remember_count(self.model, self.input_shape, self.count)
        return self


def prepare(space: Any, arch: Any, settings: list[tuple[str, int, bool | None]] = (),
            dataset: str = "cifar10") -> Prepared:
    """The deployed network of `arch` for `dataset` with its FLOPs counted and, for each setting,
    the meter's host copies (`nasenergy.hardware.cuda_meter.host_copies`): all CPU work, done on a
    thread or in a process while the GPU measures the previous network."""
    model = space.build_deployed(arch, dataset)
    shape = tuple(space.input_shape(dataset))
    count = count_model(model, shape)  # cached per model: the meter reuses it
    return Prepared(model, {p: host_copies(model, p, cl) for p, _, cl in settings}, count, shape)


def prepare_named(space_name: str, arch_text: str, settings: list[tuple[str, int, bool | None]],
                  packed: bool = False, dataset: str = "cifar10") -> Prepared | bytes:
    """`prepare` by the space's name and the architecture's text (what a builder process is sent);
    ``packed``: as one pickled byte string, which crosses to the measuring process in one piece
    (handing over the modules themselves moves every tensor through shared memory one by one)."""
    space = get_space(space_name)
    prepared = prepare(space, space.parse(arch_text), settings, dataset)
    return pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL) if packed else prepared


def unpack(result: Prepared | bytes) -> Prepared:
    """A builder's result as a `Prepared` with its FLOPs count in the cache."""
    prepared = pickle.loads(result) if isinstance(result, bytes) else result
    return prepared.remember()


def _builder_init() -> None:
    import torch  # lazy: only builder processes run this

    torch.set_num_threads(1)  # many small ops: threads would only compete with the measuring process


def builder_pool(kind: str, workers: int = 1) -> concurrent.futures.Executor:
    """The executor that builds networks ahead: a thread, or `workers` processes started fresh
    (``spawn``: they never touch CUDA, and a fork of a process with CUDA up is unsafe)."""
    if kind == "process":
        return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                                      initializer=_builder_init)
    return concurrent.futures.ThreadPoolExecutor(1)


def with_formats(settings: list[tuple[str, int, bool | None]], fp32_format: str) -> list[tuple[str, int, bool | None]]:
    """`settings` with fp32's memory format fixed (``contiguous``/``channels_last``) or left to the
    meter's probe (``faster``)."""
    fixed = {"faster": None, "contiguous": False, "channels_last": True}[fp32_format]
    return [(p, b, fixed if p == "fp32" else cl) for p, b, cl in settings]


def reference_classes(space: Any, profile: Path, seed: int, n: int) -> list[Any]:
    """The first `n` classes of the measuring order that `profile` holds: the same set in every call
    (the profile's earliest classes), re-measured on each board to estimate its offset."""
    held = {space.deployed_key(r["canonical_arch"]) for r in complete_rows(profile)} if profile.is_file() else set()
    return [a for a in class_order(space, seed) if space.deployed_key(a) in held][:n]


def measure_reference(meter: Any, space: Any, settings: list[tuple[str, int, bool | None]],
                      args: argparse.Namespace, path: Path) -> int:
    """Re-measure the reference classes on this board into `path` (not a chunk: never merged)."""
    import torch

    n = 0
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=WRITTEN_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for arch in reference_classes(space, args.profile, args.seed, args.reference):
            for row in _measure_rows(meter, space, arch, prepare(space, arch, settings, args.dataset), settings,
                                     torch.__version__, args.dataset):
                writer.writerow(row)
                n += 1
    return n


def cmd_measure(args: argparse.Namespace) -> int:
    # a bad flag is reported as such, on any machine, before torch is loaded and the GPU looked for
    if args.builders < 1 or any(v is not None and v < 1 for v in (args.repeats, args.release_every)):
        raise UsageError("--builders, --repeats and --release-every must be at least 1")
    if args.reference_again and not args.reference:
        raise UsageError("--reference-again needs --reference N")
    import torch

    t_start = time.perf_counter()
    if not torch.cuda.is_available():
        print("error: measuring needs a CUDA GPU", file=sys.stderr)
        return 2
    space = get_space(args.space)
    settings = with_formats([SETTINGS_FP16] + ([SETTINGS_FP32] if args.fp32 else []), args.fp32_format)
    args.chunk_dir.mkdir(parents=True, exist_ok=True)
    done_files = [p for p in [args.profile] if p.is_file()] + sorted(args.chunk_dir.glob("chunk_*.csv"))
    done = _done_keys(done_files, space, shape_to_str(space.input_shape(args.dataset)))
    shard, n_shards = args.shard
    todo = classes_to_measure(space, args.seed, settings, done, max_classes=args.max_classes, shard=args.shard)
    print(f"{len(todo)} classes to measure in shard {shard}/{n_shards} ({len(done)} rows already done)",
          flush=True)
    if not todo:
        return 0
    pool = builder_pool(args.builder, args.builders)  # before the meter brings CUDA up
    depth = args.builders if args.builder == "process" else 1
    meter = CudaMeter(**_energy_options(args))
    meter.idle_power_w()
    # the next network is built on a CPU thread meanwhile: hand the interpreter back to the
    # measuring thread within 0.5 ms, so its energy-counter polls keep their timing
    sys.setswitchinterval(0.0005)
    suffix = f"_shard{shard}of{n_shards}" if n_shards > 1 else ""
    stamp = f"{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S}{suffix}"
    reserve_s = 0.0  # kept back at the end for --reference-again
    if args.reference:
        t_ref = time.perf_counter()
        n_ref = measure_reference(meter, space, settings, args, args.chunk_dir / f"reference_{stamp}.csv")
        print(f"re-measured {n_ref} reference rows on this board", flush=True)
        reserve_s = 1.2 * (time.perf_counter() - t_ref) if args.reference_again else 0.0
    chunk = args.chunk_dir / f"chunk_{stamp}.csv"
    unpacker = concurrent.futures.ThreadPoolExecutor(1) if args.unpack_ahead else None
    per_class: list[float] = []
    n_rows = 0
    with open(chunk, "w", newline="") as f, pool:
        writer = csv.DictWriter(f, fieldnames=WRITTEN_COLUMNS, lineterminator="\n")
        writer.writeheader()
        f.flush()

        def ahead(arch: Any) -> Any:
            built = pool.submit(prepare_named, args.space, str(arch),
                                missing_settings(space.deployed_key(arch), settings, done), args.builder == "process",
                                args.dataset)
            if unpacker is None:
                return built
            return unpacker.submit(lambda: unpack(built.result()))  # unpacked while the GPU measures

        futures = collections.deque(ahead(a) for a in todo[:depth])
        for k, arch in enumerate(todo):
            elapsed = time.perf_counter() - t_start
            estimate = 1.5 * statistics.median(per_class[-50:]) if per_class else 10.0
            if elapsed + estimate + reserve_s > args.time_limit_s:
                print(f"stopping before the time limit ({elapsed:.0f} s used)", flush=True)
                break
            t0 = time.perf_counter()
            prepared = unpack(futures.popleft().result())  # (already unpacked: only the cache is seeded)
            if k + depth < len(todo):
                futures.append(ahead(todo[k + depth]))
            for row in _measure_rows(meter, space, arch, prepared,
                                     missing_settings(space.deployed_key(arch), settings, done),
                                     torch.__version__, args.dataset):
                writer.writerow(row)
                n_rows += 1
                if args.verbose:
                    phases = ", ".join(f"{phase} {s:.3f}" for phase, s in meter.last_phases_s.items())
                    print(f"  {row['precision']}: {phases} s", flush=True)
            f.flush()
            per_class.append(time.perf_counter() - t0)
            if args.verbose:
                print(f"{k} {arch} {per_class[-1]:.3f} s", flush=True)
    if args.reference_again:  # (validated above: --reference is set)
        n_ref = measure_reference(meter, space, settings, args, args.chunk_dir / f"late_reference_{stamp}.csv")
        print(f"re-measured the {n_ref} reference rows again, in the same process", flush=True)
    meter.close()
    if unpacker is not None:
        unpacker.shutdown(cancel_futures=True)
    rate = statistics.fmean(per_class) if per_class else float("nan")
    print(f"wrote {n_rows} rows for {len(per_class)} classes to {chunk}; "
          f"{rate:.3f} s per class (mean), {time.perf_counter() - t_start:.0f} s in all", flush=True)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:

    existing = read_profile(args.profile) if args.profile.is_file() else []
    new = [r for path in args.chunks for r in complete_rows(path)]
    rows, starved = steady_rows(fill_empty(merge_rows(existing, new), dict(args.fill)))
    n = write_profile(rows, args.profile)
    size_kb = args.profile.stat().st_size / 1024
    print(f"{args.profile}: {n} rows ({n - len(existing)} new), {size_kb:.0f} KiB")
    if starved:
        print(f"left out {len(starved)} rows whose energy window ran below {MIN_BUSY_FRAC:.0%} of the timed "
              "throughput (the device idled inside it); `measure` measures them again")
    return 0


def cmd_remeasure(args: argparse.Namespace) -> int:
    """Re-measure N classes of the profile at `--dataset`'s input, in the settings they were
    recorded in (precision, batch, the faster memory format chosen again), and report the agreement."""
    import torch

    if not torch.cuda.is_available():
        print("error: re-measuring needs a CUDA GPU", file=sys.stderr)
        return 2
    space = get_space(args.space)
    shape = shape_to_str(space.input_shape(args.dataset))
    recorded: dict[str, dict[str, dict[str, str]]] = collections.defaultdict(dict)
    for row in read_profile(args.profile):
        if row["input_shape"] == shape and row["precision"] in args.precisions:
            recorded[row["canonical_arch"]][row["precision"]] = row
    classes = sorted(a for a, by in recorded.items() if "fp16" in by or len(args.precisions) == 1)
    if not classes:
        print(f"error: {args.profile} has no {'/'.join(args.precisions)} rows at input {shape}", file=sys.stderr)
        return 2
    first = args.precisions[0]
    key = [float(recorded[a].get(first, next(iter(recorded[a].values())))["throughput_img_per_s"]) for a in classes]
    pick = stratified_pick(key, args.n, args.seed) if args.stratify else random_pick(len(classes), args.n, args.seed)
    settings = [s for s in (SETTINGS_FP16, SETTINGS_FP32) if s[0] in args.precisions]
    meter = CudaMeter(**_energy_options(args))
    out_rows, start = [], time.monotonic()
    for i in pick:
        if args.time_limit_s is not None and time.monotonic() - start > args.time_limit_s:
            print(f"time limit: stopping after {len(out_rows)} rows", flush=True)
            break
        arch = space.parse(classes[i])
        mine = [s for s in settings if s[0] in recorded[classes[i]]]
        for new in _measure_rows(meter, space, arch, prepare(space, arch, mine, args.dataset), mine,
                                 torch.__version__, args.dataset):
            old = recorded[classes[i]][new["precision"]]
            out_rows.append({"precision": new["precision"], **agreement_row(
                classes[i], float(old["throughput_img_per_s"]), float(new["throughput_img_per_s"]),
                float(old["energy_j_per_img"]) if old["energy_j_per_img"] else None,
                float(new["energy_j_per_img"]) if new["energy_j_per_img"] else None,
                (old["measured_at"], new["measured_at"]), (old.get("gpu_uuid", ""), new["gpu_uuid"]))})
    meter.close()
    how = "a throughput-stratified sample of" if args.stratify else "a random sample of"
    return write_agreement(
        args.out, out_rows,
        f"{len({r['canonical_arch'] for r in out_rows})} classes ({how} the {len(classes)} classes of "
        f"`{args.profile.name}` at input {shape}, seed {args.seed}) re-measured ({', '.join(args.precisions)}) on "
        f"{meter.device_name} (driver {meter.driver_version}, torch {torch.__version__}) at {_utc_now()}, "
        f"energy window {meter.energy_window_s} s x {meter.energy_repeats}")


def cmd_compare(args: argparse.Namespace) -> int:
    """Agreement of two measurements (chunk or profile CSVs) of the same networks, row for row
    on the networks and settings both hold."""
    def key(r: dict[str, str]) -> tuple[str, str, str, str]:
        # a profile holds each network at several inputs (3x32x32, ImageNet16-120's 3x16x16)
        return r["canonical_arch"], r["precision"], r["batch_size"], r["input_shape"]

    earlier = {key(r): r for r in complete_rows(args.earlier)}
    out_rows = []
    later_rows = [r for path in args.later for r in complete_rows(path)]
    for r in later_rows:
        e = earlier.get(key(r))
        if e is None:
            continue
        out_rows.append({"precision": r["precision"], "input_shape": r["input_shape"], **agreement_row(
            r["canonical_arch"], float(e["throughput_img_per_s"]), float(r["throughput_img_per_s"]),
            float(e["energy_j_per_img"]) if e["energy_j_per_img"] else None,
            float(r["energy_j_per_img"]) if r["energy_j_per_img"] else None,
            (e["measured_at"], r["measured_at"]), (e["gpu_uuid"], r["gpu_uuid"]),
            {name: (e.get(name, ""), r.get(name, "")) for name in COUNTER_FIELDS})})
    return write_agreement(args.out, out_rows,
                           f"{len(out_rows)} rows of `{args.earlier.name}` measured again in "
                           f"{', '.join(f'`{path.name}`' for path in args.later)}")


def cmd_repeat(args: argparse.Namespace) -> int:
    """Measure one class of the measuring order several times in this process (fresh copies each
    time), fp16 batch 1024 channels-last, printing each measurement's throughput, power and energy:
    how much of a class's spread between processes is already there within one."""
    import torch

    if not torch.cuda.is_available():
        print("error: measuring needs a CUDA GPU", file=sys.stderr)
        return 2
    space = get_space(args.space)
    arch = class_order(space, args.seed)[args.position]
    meter = CudaMeter(**_energy_options(args))
    print(f"class {args.position} of the measuring order: {arch}")
    for k in range(args.times):
        prepared = prepare(space, arch, [SETTINGS_FP16])
        m = meter.measure(prepared.copies["fp16"], space.input_shape("cifar10"), batch_size=1024,
                          precision="fp16", channels_last=True)
        print(f"{k} {m.throughput_img_per_s:.0f} img/s {m.avg_power_w:.1f} W "
              f"{m.energy_j_per_img * 1e6:.2f} uJ/img sm_util {m.sm_util_pct}", flush=True)
    meter.close()
    return 0


def cmd_class_seconds(args: argparse.Namespace) -> int:
    for log in args.logs:
        stats = class_seconds(log.read_text().splitlines())
        print(f"{log}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                     for k, v in stats.items() if v is not None))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure", help="measure the next classes into a chunk CSV")
    m.add_argument("--chunk-dir", type=Path, default=Path("profile_chunks"))
    m.add_argument("--profile", type=Path, help="classes in it are skipped (default: the space's deployed profile)")
    m.add_argument("--time-limit-s", type=float, default=540.0)
    m.add_argument("--max-classes", type=int,
                   help="measure only the first N classes of the seeded order (a uniform random sample; "
                        "resuming keeps to the same N)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--shard", type=parse_shard, default=(0, 1), metavar="K/N",
                   help="measure only every N-th class starting at K (one process per GPU)")
    m.add_argument("--fp32", action="store_true", help="also fp32 at batch size 256")
    m.add_argument("--dataset", choices=("cifar10", "cifar100", "ImageNet16-120"), default="cifar10",
                   help="whose input shape and class count the networks are built for (default: cifar10, 3x32x32; "
                        "ImageNet16-120: 3x16x16, 120 classes); rows of other input shapes in the profile are kept")
    m.add_argument("--energy-window-s", type=float, help="default: the meter's")
    m.add_argument("--energy-repeats", type=int, help="default: the meter's")
    m.add_argument("--energy-warmup-s", type=float, help="default: the meter's")
    m.add_argument("--energy-source", choices=("counter", "samples"),
                   help="what energy windows read (default: the meter's, the energy counter)")
    m.add_argument("--energy-max-window-s", type=float, metavar="S",
                   help="with --energy-source samples: a window whose power swings runs on up to S seconds "
                        "until its mean is known within --energy-target-rel-se")
    m.add_argument("--fp32-format", choices=("faster", "contiguous", "channels_last"), default="faster",
                   help="fp32's memory format: the faster of the two (probed per network, the default) or fixed")
    m.add_argument("--builder", choices=("thread", "process"), default="thread",
                   help="where the next networks are built while the GPU measures")
    m.add_argument("--builders", type=int, default=2, metavar="N",
                   help="with --builder process: N processes, N networks built ahead (default 2)")
    m.add_argument("--repeats", type=int, help="timed throughput repeats (default: the meter's)")
    m.add_argument("--energy-target-rel-se", type=float, metavar="F",
                   help="with --energy-max-window-s: the relative standard error a window stops at (default 0.005)")
    m.add_argument("--throughput-from-energy", action="store_true", default=None,
                   help="take the throughput from the energy windows' own passes (no timed phase)")
    m.add_argument("--release-every", type=int, metavar="N",
                   help="empty the GPU allocator's cache after every N measurements (default: each)")
    m.add_argument("--unpack-ahead", action="store_true",
                   help="with --builder process: unpack the next network on a thread while the GPU measures")
    m.add_argument("--no-cudnn-benchmark", dest="cudnn_benchmark", action="store_false", default=None,
                   help="use cuDNN's heuristic algorithm choice instead of autotuning")
    m.add_argument("--verbose", action="store_true", help="print each class's seconds")
    m.add_argument("--reference", type=int, default=0, metavar="N",
                   help="first re-measure the profile's N earliest classes on this board into reference_*.csv "
                        "(never merged; they tie each call's board to the others)")
    m.add_argument("--reference-again", action="store_true",
                   help="with --reference: measure the reference classes once more at the end, in the same "
                        "process, into late_reference_*.csv (separates a process's warm-up from the board's state)")
    g = sub.add_parser("merge", help="merge chunk CSVs into the profile")
    g.add_argument("chunks", type=Path, nargs="*",
                   help="chunk CSVs (none: only re-check the profile's rows)")
    g.add_argument("--profile", type=Path, help="default: the space's deployed profile")
    g.add_argument("--fill", type=parse_fill, action="append", default=[], metavar="COLUMN=VALUE",
                   help="set an optional column where it is empty (repeatable)")
    r = sub.add_parser("remeasure", help="re-measure N profiled classes; agreement report")
    r.add_argument("n", type=int)
    r.add_argument("--profile", type=Path, help="default: the space's deployed profile")
    r.add_argument("--out", type=Path, default=Path("results/profile_agreement"))
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--energy-window-s", type=float, help="default: the meter's")
    r.add_argument("--energy-repeats", type=int, help="default: the meter's")
    r.add_argument("--energy-warmup-s", type=float, help="default: the meter's")
    r.add_argument("--dataset", choices=("cifar10", "cifar100", "ImageNet16-120"), default="cifar10",
                   help="the rows at this dataset's input shape, measured with its class count")
    r.add_argument("--precisions", type=lambda t: tuple(t.split(",")), default=("fp16",),
                   help="comma list of the precisions to re-measure (fp16, fp32; default fp16)")
    r.add_argument("--stratify", action="store_true",
                   help="one class from each of N equal strata of the recorded throughput, not N at random")
    r.add_argument("--time-limit-s", type=float, help="stop measuring after this many seconds")
    c = sub.add_parser("compare", help="agreement of chunk or profile CSVs with an earlier one on the networks both hold")
    c.add_argument("earlier", type=Path)
    c.add_argument("later", type=Path, nargs="+", help="one or more CSVs of later measurements")
    c.add_argument("--out", type=Path, default=Path("results/profile_agreement"))
    q = sub.add_parser("repeat", help="measure one class several times in one process (fp16)")
    q.add_argument("position", type=int, help="the class's position in the measuring order")
    q.add_argument("--times", type=int, default=6)
    q.add_argument("--seed", type=int, default=0)
    for name in ("--energy-window-s", "--energy-repeats", "--energy-warmup-s"):
        q.add_argument(name, type=float if name != "--energy-repeats" else int, help="default: the meter's")
    q.add_argument("--energy-source", choices=("counter", "samples"))
    q.add_argument("--repeats", type=int)
    t = sub.add_parser("class-seconds", help="seconds per class (and per meter phase) of measure --verbose logs")
    t.add_argument("logs", type=Path, nargs="+")
    for sub_parser in (m, g, r, c, q):
        sub_parser.add_argument("--space", choices=("tss", "sss"), default="tss",
                                help="tss (all deployed classes) or sss (use --max-classes for a seeded sample)")
    args = p.parse_args(argv)
    if getattr(args, "profile", "given") is None:
        args.profile = SSS_PROFILE if args.space == "sss" else DEPLOYED_PROFILE

    return run_main(lambda: {"measure": cmd_measure, "merge": cmd_merge, "remeasure": cmd_remeasure,
                                "compare": cmd_compare, "repeat": cmd_repeat, "class-seconds": cmd_class_seconds}[args.command](args))


if __name__ == "__main__":
    sys.exit(main())
