"""The network a training trains: the deployed network of a NATS-Bench cell (no dead or zero
operations, the function every cell of its class computes), its stem taking the data's channels
and its head giving the data's classes; the same network the hardware meter measures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nasenergy.train.options import TrainOptions
from nasenergy.train.recipe import NATS_RECIPE, TrainRecipe
from nasenergy.train.result import TrainingResult
from nasenergy.train.trainer import train_model
from search_spaces import Arch, SpaceProtocol

if TYPE_CHECKING:
    import torch

    from nasenergy.train.data import ImageData


def build_for_data(space: SpaceProtocol, arch: Arch | str, *, in_channels: int, num_classes: int,
                   seed: int = 0) -> "torch.nn.Module":
    """The deployed network of `arch` for images of `in_channels` channels and `num_classes`
    classes, its weights initialised from `seed` (as ``space.build_deployed`` does)."""
    from search_spaces._nets import build_deployed_network  # lazy: imports torch

    parsed = space.parse(arch) if isinstance(arch, str) else arch
    return build_deployed_network(space.network_spec(parsed), in_channels, num_classes, seed)  # type: ignore[attr-defined]


def train_arch(space: SpaceProtocol, arch: Arch | str, data: "ImageData", *, recipe: TrainRecipe | None = None,
               options: TrainOptions | None = None, seed: int = 0, **kwargs: object) -> TrainingResult:
    """Build the deployed network of `arch` for `data` (weights from `seed`) and train it with
    `nasenergy.train.train_model` (`seed` also seeds the batches); other keywords go to it."""
    model = build_for_data(space, arch, in_channels=data.input_shape[0], num_classes=data.num_classes, seed=seed)
    return train_model(model, data, recipe=recipe or NATS_RECIPE, options=options or TrainOptions(), seed=seed,
                       **kwargs)  # type: ignore[arg-type]
