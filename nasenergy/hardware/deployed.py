"""Measuring NATS architectures as a user would deploy them.

A meter measures whatever module it is given. For a NATS-Bench architecture, nasenergy gives it the
*deployed* network (`search_spaces.SearchSpace.build_deployed`: the same function, no dead or zero
ops), so that the hardware figures belong to the network a user would run, and are equal for every
architecture with the same `deployed_key`. The result carries both parameter and FLOP counts:
``params`` / ``flops_per_img`` of the deployed network that was measured, and ``params_official``
/ ``flops_per_img_official`` of the NATS-Bench network as built (its recorded figures).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from nasenergy.hardware.flops import ModelCount, remember_count
from nasenergy.hardware.meter import Meter
from nasenergy.measurement import Measurement
from search_spaces import Arch, SearchSpace, dataset_info


def deployed_count(space: SearchSpace, arch: Arch, dataset: str) -> ModelCount | None:
    """FLOPs, MACs per image and parameters of `arch`'s deployed network as
    `nasenergy.hardware.flops.count_model` counts them, from the space's analytic count
    (``space.count_deployed``; ``None`` for a space without one). PyTorch's counter leaves out the
    classifier's bias, which the analytic count holds as one multiply-accumulate per class."""
    count_deployed = getattr(space, "count_deployed", None)
    if count_deployed is None:
        return None
    cost = count_deployed(arch, dataset)
    classes = dataset_info(dataset).num_classes
    return ModelCount(flops_per_img=float(cost.flops - 2 * classes), macs_per_img=float(cost.macs - classes),
                      params=int(cost.params))


def with_official_counts(m: Measurement, space: SearchSpace, arch: Arch, dataset: str, *,
                         network_form: str = "deployed") -> Measurement:
    """`m` marked as measured on `network_form` (by default the deployed network of `arch`), with
    `arch`'s own official params and FLOPs."""
    official = space.count(arch, dataset)
    return dataclasses.replace(m, network_form=network_form, params_official=official.params,
                               flops_per_img_official=float(official.flops))


def measure_deployed(meter: Meter, space: SearchSpace, arch: Arch, dataset: str, *, batch_size: int,
                     precision: str, channels_last: bool | None = None, seed: int = 0,
                     analytic_counts: bool = False) -> Measurement:
    """Measure the deployed network of `arch` on `dataset`'s input shape with `meter`.

    Args:
        meter: any meter with ``measure(model, input_shape, *, batch_size, precision, channels_last)``.
        space: the search space of `arch`.
        arch: the architecture or its string.
        dataset: sets the input shape and number of classes.
        batch_size: images per forward pass.
        precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
        channels_last: the memory format; ``None`` lets the meter choose.
        seed: weight initialisation (figures do not depend on the weights' values).
        analytic_counts: give the meter the space's analytic FLOP and parameter count
            (`deployed_count`) instead of letting it count them.
    """
    arch = space.parse(arch)
    model = space.build_deployed(arch, dataset, seed=seed)
    count = deployed_count(space, arch, dataset) if analytic_counts else None
    if count is not None:
        remember_count(model, space.input_shape(dataset), count)
    m = meter.measure(model, space.input_shape(dataset), batch_size=batch_size, precision=precision,
                      channels_last=channels_last)
    return with_official_counts(m, space, arch, dataset)


def deployed_measurer(meter: Meter, space: SearchSpace, dataset: str, *, batch_size: int, precision: str,
                      analytic_counts: bool = False) -> Callable[[Arch], Measurement]:
    """What a search calls per candidate on a meter of built networks: `measure_deployed` of an
    architecture at this setting (the network built, measured, and given its official counts)."""

    def measure(arch: Arch) -> Measurement:
        return measure_deployed(meter, space, arch, dataset, batch_size=batch_size, precision=precision,
                                analytic_counts=analytic_counts)

    return measure
