"""Computing the registered proxies of one network: `compute_proxies` (any `nn.Module`) and
`compute_arch_proxies` (the deployed network of an architecture of a search space)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nasenergy.errors import UsageError
from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.data import DEFAULT_BATCH_SIZE, DEFAULT_DATA, make_batch
from nasenergy.proxies.registry import proxy_kind, proxy_names
from nasenergy.proxies.result import ProxyResult
from search_spaces import SearchSpace

if TYPE_CHECKING:
    from torch import nn

    from search_spaces import Arch

__all__ = ["ProxyReport", "compute_arch_proxies", "compute_proxies", "resolve_device"]


@dataclass(frozen=True)
class ProxyReport:
    """Every requested proxy of one network.

    Attributes:
        results: one `ProxyResult` per proxy, in the order asked.
        input_shape: one image's ``(C, H, W)``.
        num_classes: the network's logits.
        network: what was scored (the architecture string, or empty for a module).
        dataset: the dataset whose input and classes were used (empty when not given).
        init_seed: the seed of the network's weights, when this package built it (else -1).
    """

    results: tuple[ProxyResult, ...]
    input_shape: tuple[int, int, int]
    num_classes: int
    network: str = ""
    dataset: str = ""
    init_seed: int = -1

    def __iter__(self) -> Iterator[ProxyResult]:
        return iter(self.results)

    def __getitem__(self, name: str) -> ProxyResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def names(self) -> tuple[str, ...]:
        """The proxies held, in order."""
        return tuple(r.name for r in self.results)

    def scores(self) -> dict[str, float]:
        """``{proxy: score}``."""
        return {r.name: r.score for r in self.results}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the network, its shape, and every result's `ProxyResult.to_dict`."""
        return {"network": self.network, "dataset": self.dataset, "input_shape": list(self.input_shape),
                "num_classes": self.num_classes, "init_seed": self.init_seed,
                "proxies": {r.name: r.to_dict() for r in self.results}}


def resolve_device(device: str) -> str:
    """`device` checked: ``cpu``, or ``cuda``/``cuda:N`` when torch sees a GPU.

    Raises:
        UsageError: an unknown device, or CUDA without a GPU.
    """
    import torch  # lazy: torch

    if device == "cpu":
        return device
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise UsageError(f"device {device!r} asked for, but torch sees no CUDA GPU")
        return device
    raise UsageError(f"unknown device {device!r}; use cpu, cuda or cuda:N")


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch  # lazy: torch

        torch.cuda.synchronize(device)


def compute_proxies(model: nn.Module, input_shape: Sequence[int], num_classes: int, *,
                    names: Sequence[str] | None = None, seed: int = 0, device: str = "cpu",
                    batch_size: int = DEFAULT_BATCH_SIZE, data: str = DEFAULT_DATA, dataset: str | None = None,
                    network: str = "", init_seed: int = -1) -> ProxyReport:
    """The proxies `names` (default: every registered one) of `model`, each timed.

    `model` is never changed: each proxy works on its own copy (on `device`). The data-dependent
    proxies share one batch (`nasenergy.proxies.data.make_batch` of `seed`, `data`, `batch_size`).

    Args:
        model: any network mapping ``(batch, *input_shape)`` images to ``(batch, num_classes)``
            logits.
        input_shape: one image's ``(C, H, W)``.
        num_classes: the number of logits (the labels of the loss-based proxies).
        names: proxies to compute (names of `nasenergy.proxies.registry.PROXIES`).
        seed: seeds the batch and its labels.
        device: ``cpu``, ``cuda`` or ``cuda:N``.
        batch_size: images in the batch of the data-dependent proxies.
        data: the batch (`nasenergy.proxies.data.DATA_CHOICES`).
        dataset: the dataset whose channel statistics standardise the ``photos`` batch.
        network: a name for the report (e.g. the architecture string).
        init_seed: the seed of `model`'s weights, for the report (-1: unknown).

    Raises:
        UsageError: an unknown proxy, data choice or device.
    """
    device = resolve_device(device)
    shape = tuple(int(s) for s in input_shape)
    if len(shape) != 3:
        raise UsageError(f"input_shape must be (channels, height, width), got {tuple(input_shape)}")
    kinds = [proxy_kind(n) for n in (proxy_names() if names is None else names)]
    batch = None
    if any(k.needs_data for k in kinds):
        batch = make_batch(shape, num_classes, batch_size=batch_size, seed=seed, data=data, dataset=dataset).to(device)
    results = []
    for kind in kinds:
        ctx = ProxyContext(shape, int(num_classes), device, batch if kind.needs_data else None)
        _sync(device)
        start = time.perf_counter()
        value = kind.compute(model, ctx)
        _sync(device)
        cost_s = time.perf_counter() - start
        on = {"data": (batch.batch_size if batch is not None else 0, data), "ones": (1, "ones"),
              "none": (0, "none")}[kind.batch]
        results.append(ProxyResult(name=kind.name, score=value.score, unit=kind.unit, cost_s=cost_s,
                                   source="measured", seed=int(seed), batch_size=on[0], data=on[1],
                                   device=device, reason=value.reason))
    return ProxyReport(tuple(results), shape, int(num_classes), network=network, dataset=dataset or "",
                       init_seed=int(init_seed))


def compute_arch_proxies(space: SearchSpace, arch: Arch | str, dataset: str = "cifar10", *,
                         names: Sequence[str] | None = None, seed: int = 0, init_seed: int = 0,
                         device: str = "cpu", batch_size: int = DEFAULT_BATCH_SIZE,
                         data: str = DEFAULT_DATA) -> ProxyReport:
    """The proxies of the deployed network of `arch` (`SearchSpace.build_deployed`: the network the
    hardware meters measure), at `dataset`'s input shape and class count.

    Args:
        space: the search space (`search_spaces.get_space`).
        arch: an architecture of `space` or its string.
        dataset: sets the input shape and the number of classes.
        init_seed: seeds the network's weights (PyTorch's default initialisers of the builder).
        names: as `compute_proxies`.
        seed: as `compute_proxies`.
        device: as `compute_proxies`.
        batch_size: as `compute_proxies`.
        data: as `compute_proxies`.

    Raises:
        ArchError: `arch` is not an architecture of `space`.
        UsageError: an unknown dataset, proxy, data choice or device.
    """
    arch = space.parse(arch)
    model = space.build_deployed(arch, dataset, seed=init_seed)
    return compute_proxies(model, space.input_shape(dataset), space.num_classes(dataset), names=names, seed=seed,
                           device=device, batch_size=batch_size, data=data, dataset=dataset, network=str(arch),
                           init_seed=init_seed)
