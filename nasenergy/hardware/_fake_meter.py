"""`FakeMeter`: a deterministic `Meter` with synthetic figures (public via ``nasenergy.testing``).

Its figures are computed, never measured: ``device_name="fake"`` and ``source="modelled"``. For a
network with ``F`` FLOPs per image (counted for real, by `count_model`, or taken from
``space.count_deployed`` in `FakeMeter.measure_arch`, which answers for the deployed network as a
real meter would) at batch size ``b`` and precision ``p``:

* efficiency ``eff = F / (F + half_efficiency_flops)`` (bigger networks use the device better);
* seconds per batch ``t = overhead_s_per_batch + b * F / (peak[p] * eff)``;
* throughput ``b / t``, times ``exp(noise)`` with ``noise ~ Normal(0, noise_cv)`` drawn from a
  generator seeded by ``(seed, F, params, b, p)`` (so a network always gets the same figures);
* utilization ``F * throughput / peak[p]``;
* board power ``idle_power_w + (max_power_w - idle_power_w) * sqrt(utilization)``;
* energy per image ``power / throughput`` (basis ``total``).

As one of several boards of a model (`FakeMeter.board`), the throughput is then multiplied by
``throughput_factor`` and the power by ``power_factor`` (utilization follows the throughput), so
this board's throughput is ``throughput_factor`` times its twin's and its energy per image
``power_factor / throughput_factor`` times, exactly; its measurements carry its ``gpu_uuid``,
``driver_version`` and ``power_limit_w``.

``overrides`` maps a key (an architecture string in `measure_arch`; ``key(model)`` in `measure`)
to field values that replace the computed ones; utilization, latency and power are then
recomputed from the overridden throughput and energy unless they are overridden too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Sequence

from nasenergy.hardware.deployed import with_official_counts
from nasenergy.hardware.flops import ModelCount, count_model
from nasenergy.hardware.meter import check_request
from nasenergy.hardware.recorded import measurement_to_row, write_profile
from nasenergy.measurement import Measurement
from search_spaces import Arch, SearchSpace, get_space

if TYPE_CHECKING:
    import torch

#: Default synthetic peaks: the H200 SXM datasheet dense figures, FLOP/s.
_DEFAULT_PEAKS = {"fp32": 67.0e12, "tf32": 494.7e12, "fp16": 989.4e12, "bf16": 989.4e12}


@dataclass
class FakeMeter:
    """A deterministic synthetic meter; see the module docstring for the formula.

    Attributes:
        peak_flops_per_s: peak per precision, FLOP/s.
        idle_power_w: idle board power, watts.
        max_power_w: board power at utilization 1, watts.
        overhead_s_per_batch: fixed seconds per forward pass.
        half_efficiency_flops: FLOPs per image at which efficiency is one half.
        noise_cv: relative spread of the synthetic throughput noise (0: none).
        seed: seeds the noise.
        sm_clock_mhz: the SM clock reported.
        overrides: key -> {Measurement field: value}.
        key: maps a model to its `overrides` key in `measure` (default: no overrides).
        cost_s: reported ``measure_cost_s``; ``None`` reports the real (tiny) wall time.
        n_calls: how many measurements were made (for tests of caching and budgets).
        device_name: the device name reported.
        gpu_uuid: the board's UUID reported (``None``: no board named).
        driver_version: the driver version reported.
        power_limit_w: the power limit reported, watts.
        throughput_factor: this board's throughput against an identical board's (1.0: equal).
        power_factor: this board's power against an identical board's (1.0: equal).
    """

    peak_flops_per_s: Mapping[str, float] = field(default_factory=lambda: dict(_DEFAULT_PEAKS))
    idle_power_w: float = 84.0
    max_power_w: float = 700.0
    overhead_s_per_batch: float = 20e-6
    half_efficiency_flops: float = 50e6
    noise_cv: float = 0.0
    seed: int = 0
    sm_clock_mhz: float = 1980.0
    overrides: Mapping[Hashable, Mapping[str, Any]] = field(default_factory=dict)
    key: Callable[["torch.nn.Module"], Hashable] | None = None
    cost_s: float | None = None
    n_calls: int = 0
    device_name: str = "fake"
    gpu_uuid: str | None = None
    driver_version: str | None = None
    power_limit_w: float | None = None
    throughput_factor: float = 1.0
    power_factor: float = 1.0

    @classmethod
    def board(cls, index: int, *, throughput_factor: float = 1.0, power_factor: float = 1.0,
              **options: Any) -> "FakeMeter":
        """A fake meter acting as board `index` of one model (``GPU-fake-<index>``, as `FakeNvml`
        names its GPUs), drawing ``power_factor`` times the power of board 0 and running at
        ``throughput_factor`` times its speed; `options` are other `FakeMeter` fields."""
        options.setdefault("device_name", "NVIDIA H200 (fake)")
        options.setdefault("driver_version", "550.00-fake")
        options.setdefault("power_limit_w", 700.0)
        return cls(gpu_uuid=f"GPU-fake-{index:04d}", throughput_factor=throughput_factor,
                   power_factor=power_factor, **options)

    def measure(
        self,
        model: "torch.nn.Module",
        input_shape: Sequence[int],
        *,
        batch_size: int,
        precision: str,
        channels_last: bool | None = None,
    ) -> Measurement:
        """Synthetic measurement of `model` (its FLOPs are really counted); see module docstring."""
        t0 = time.perf_counter()
        shape = check_request(input_shape, batch_size, precision)
        count = count_model(model, shape)
        key = self.key(model) if self.key is not None else None
        return self._make(count, shape, batch_size, precision, key, t0)

    def measure_arch(self, arch: Arch, *, precision: str, batch_size: int, space: SearchSpace | None = None,
                     dataset: str = "cifar10") -> Measurement:
        """Synthetic measurement of a search-space architecture without building it.

        Args:
            arch: an architecture of `space` (or its string).
            precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
            batch_size: images per forward pass.
            space: the search space (default: ``search_spaces.get_space("tss")``).
            dataset: sets the input shape and class count.
        """
        t0 = time.perf_counter()
        if space is None:
            space = get_space("tss")
        if isinstance(arch, str):
            arch = space.parse(arch)
        shape = check_request(space.input_shape(dataset), batch_size, precision)
        cost = space.count_deployed(arch, dataset)
        count = ModelCount(flops_per_img=float(cost.flops), macs_per_img=float(cost.macs),
                           params=int(cost.params))
        m = self._make(count, shape, batch_size, precision, str(arch), t0)
        return with_official_counts(m, space, arch, dataset)

    def _noise(self, count: ModelCount, batch_size: int, precision: str) -> float:
        if self.noise_cv <= 0:
            return 1.0
        import numpy as np

        digest = hashlib.sha256(
            f"{self.seed}|{count.flops_per_img!r}|{count.params}|{batch_size}|{precision}".encode()
        ).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        return math.exp(rng.normal(0.0, self.noise_cv))

    def _make(self, count: ModelCount, shape: tuple[int, ...], batch_size: int, precision: str,
              key: Hashable, t0: float) -> Measurement:
        self.n_calls += 1
        peak = float(self.peak_flops_per_s[precision])
        flops = count.flops_per_img
        eff = flops / (flops + self.half_efficiency_flops) if flops > 0 else 1.0
        t_batch = self.overhead_s_per_batch + batch_size * flops / (peak * eff)
        throughput = batch_size / t_batch * self._noise(count, batch_size, precision)
        over = dict(self.overrides.get(key, {})) if key is not None else {}
        throughput = float(over.get("throughput_img_per_s", throughput))
        util = float(over.get("utilization", Measurement.utilization_of(flops, throughput, peak)))
        power = self.idle_power_w + (self.max_power_w - self.idle_power_w) * math.sqrt(
            max(0.0, min(1.0, util)))
        if self.throughput_factor != 1.0 or self.power_factor != 1.0:  # another board of the model
            throughput *= self.throughput_factor
            power *= self.power_factor
            util = float(over.get("utilization", Measurement.utilization_of(flops, throughput, peak)))
        energy = over.get("energy_j_per_img", power / throughput)
        if "energy_j_per_img" in over and "avg_power_w" not in over and energy is not None:
            power = float(energy) * throughput
        fields: dict[str, Any] = dict(
            device_name=self.device_name,
            precision=precision,
            batch_size=batch_size,
            input_shape=shape,
            throughput_img_per_s=throughput,
            latency_ms_per_batch=1000.0 * batch_size / throughput,
            macs_per_img=count.macs_per_img,
            flops_per_img=flops,
            params=count.params,
            peak_flops_per_s=peak,
            peak_source="datasheet",
            utilization=util,
            energy_j_per_img=energy,
            energy_basis="total" if energy is not None else "unavailable",
            avg_power_w=power if energy is not None else None,
            idle_power_w=self.idle_power_w,
            sm_clock_mhz=self.sm_clock_mhz,
            n_repeats=5,
            throughput_cv=self.noise_cv,
            energy_cv=self.noise_cv if energy is not None else None,
            measure_cost_s=self.cost_s if self.cost_s is not None else time.perf_counter() - t0,
            source="modelled",
            gpu_uuid=self.gpu_uuid,
            driver_version=self.driver_version,
            power_limit_w=self.power_limit_w,
        )
        unknown = set(over) - {f.name for f in dataclasses.fields(Measurement)}
        if unknown:
            raise ValueError(f"FakeMeter overrides name unknown Measurement fields: {sorted(unknown)}")
        fields.update({k: v for k, v in over.items() if k not in ("throughput_img_per_s",)})
        return Measurement(**fields)


def write_fake_profile(path: Any, archs: Sequence[Any], *, space: SearchSpace | None = None,
                       precisions: Sequence[str] = ("fp16",), batch_size: int = 1024,
                       dataset: str = "cifar10", meter: FakeMeter | None = None) -> Any:
    """Write a recorded-profile CSV of synthetic `FakeMeter` figures for the classes of `archs`.

    For testing code that uses `RecordedMeter` without the real profile. Rows keep
    ``device_name="fake"`` and ``source="modelled"`` (a `RecordedMeter` replays them as
    ``recorded``).

    Args:
        path: the CSV to write (``.csv`` or ``.csv.gz``).
        archs: TSS architectures (or strings); each is stored under its deployed class (its member
            of smallest index), as the real deployed-network profile is.
        space: the TSS space (default ``search_spaces.get_space("tss")``).
        precisions: one row per class and precision.
        batch_size: the recorded batch size.
        dataset: sets the input shape.
        meter: the fake meter producing the figures (default ``FakeMeter()``).

    Returns:
        `path` as a `pathlib.Path`.
    """

    if space is None:
        space = get_space("tss")
    meter = meter if meter is not None else FakeMeter()
    rows = []
    for arch in archs:
        canon = space.deployed_representative(space.parse(arch) if isinstance(arch, str) else arch)
        for precision in precisions:
            m = meter.measure_arch(canon, precision=precision, batch_size=batch_size, space=space,
                                   dataset=dataset)
            rows.append(measurement_to_row(m, canonical_arch=str(canon),
                                           arch_index=space.index(canon), driver_version="fake",
                                           torch_version="fake", measured_at="1970-01-01T00:00:00Z"))
    write_profile(rows, path)
    return Path(path)
