"""The fake NVML's activity counters: GPM metrics, utilization rates and clock-event reasons.

One job: answer the calls `nasenergy.hardware.counters` reads for `FakeNvml`, from each
`FakeGpu`'s fixed ``gpm_pct``, ``utilization_rates_pct`` and ``clocks_event_reasons`` (a GPU with
an empty ``gpm_pct`` has no GPM, as before Hopper).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

from nasenergy.hardware._fake_gpu import FakeNVMLError, NvmlConstants
from nasenergy.hardware._fake_nvml_power import GpuSim

__all__ = ["ActivityCounters"]


class ActivityCounters(NvmlConstants):
    """`FakeNvml`'s part that reports GPM metrics, utilization rates and clock-event reasons."""

    _gpus: list[GpuSim]

    if TYPE_CHECKING:
        def elapsed_s(self) -> float: ...
        def _enter(self, name: str, *args: Any, needs_init: bool = True) -> None: ...
        def _gpu(self, handle: object) -> int: ...

    NVML_GPM_METRICS_GET_VERSION = 1

    class c_nvmlGpmMetricsGet_t:  # noqa: N801 - pynvml's name
        """pynvml's request structure for `nvmlGpmMetricsGet`, as plain attributes."""

        def __init__(self) -> None:
            self.version = 0
            self.numMetrics = 0
            self.sample1: Any = None
            self.sample2: Any = None
            self.metrics = [types.SimpleNamespace(metricId=0, value=0.0) for _ in range(210)]

    def nvmlDeviceGetUtilizationRates(self, handle: object) -> Any:
        self._enter("nvmlDeviceGetUtilizationRates", handle)
        gpu, memory = self._gpus[self._gpu(handle)].spec.utilization_rates_pct
        return types.SimpleNamespace(gpu=gpu, memory=memory)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: object) -> int:
        self._enter("nvmlDeviceGetCurrentClocksEventReasons", handle)
        return int(self._gpus[self._gpu(handle)].spec.clocks_event_reasons)

    def nvmlGpmQueryDeviceSupport(self, handle: object) -> Any:
        self._enter("nvmlGpmQueryDeviceSupport", handle)
        return types.SimpleNamespace(isSupportedDevice=int(bool(self._gpus[self._gpu(handle)].spec.gpm_pct)))

    def nvmlGpmSampleAlloc(self) -> Any:
        self._enter("nvmlGpmSampleAlloc")
        return types.SimpleNamespace(gpu=None, t_s=None)

    def nvmlGpmSampleGet(self, handle: object, sample: Any) -> Any:
        self._enter("nvmlGpmSampleGet", handle)
        i = self._gpu(handle)
        if not self._gpus[i].spec.gpm_pct:
            raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        sample.gpu, sample.t_s = i, self.elapsed_s()
        return sample

    def nvmlGpmSampleFree(self, sample: Any) -> None:
        self._enter("nvmlGpmSampleFree")

    def nvmlGpmMetricsGet(self, request: Any) -> Any:
        self._enter("nvmlGpmMetricsGet")
        first, second = request.sample1, request.sample2
        if first.gpu is None or second.gpu != first.gpu or not second.t_s > first.t_s:
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        values = self._gpus[first.gpu].spec.gpm_pct
        for metric in request.metrics[: request.numMetrics]:
            metric.value = float(values.get(metric.metricId, 0.0))
        return request
