"""The input batch of the data-dependent proxies (jacov, NASWOT, snip, grad_norm).

CIFAR and ImageNet16 images are not available to the package, so the batch is one of:

* ``gaussian`` (the default): ``N(0, 1)`` pixels, i.e. noise with the first two moments of the
  images a NATS-Bench network sees (NATS-Bench standardises every channel with the training
  set's mean and standard deviation, so standardised images have mean 0 and variance 1 per
  channel). Seeded; no data needed.
* ``photos``: random crops (of the dataset's side) from the two photographs scikit-learn ships
  (`sklearn.datasets.load_sample_images`, needs Pillow), scaled to [0, 1] and standardised with the
  dataset's channel statistics: real natural-image patches, not the dataset's images.
* ``digits``: scikit-learn's 8x8 handwritten digits (`sklearn.datasets.load_digits`), upsampled to
  the dataset's side, repeated over the three channels and standardised per batch.

Labels (for snip and grad_norm's cross-entropy) are uniform random classes drawn from the same
seed. The batch is built on the CPU from a private `numpy` generator, then moved to the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nasenergy.errors import UsageError
from search_spaces import dataset_info

if TYPE_CHECKING:
    import torch

DATA_CHOICES: tuple[str, ...] = ("gaussian", "photos", "digits")
"""The input batches a proxy can be computed on (see the module docstring)."""

DEFAULT_DATA = "gaussian"
DEFAULT_BATCH_SIZE = 64
"""Images per batch of the data-dependent proxies (Abdelfattah et al. 2021 use 64 for snip,
grad_norm and jacov; Mellor et al. 2021 use 128 for NASWOT: 64 is used for all here)."""

CHANNEL_STATS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
    "ImageNet16-120": ((122.68 / 255, 116.66 / 255, 104.01 / 255), (63.22 / 255, 61.26 / 255, 65.09 / 255)),
}
"""Per-channel (mean, std) of each dataset's training images in [0, 1], as NATS-Bench normalises
them (used by ``photos``)."""

__all__ = ["CHANNEL_STATS", "DATA_CHOICES", "DEFAULT_BATCH_SIZE", "DEFAULT_DATA", "ProxyBatch", "make_batch"]


@dataclass(frozen=True)
class ProxyBatch:
    """Images and labels for the data-dependent proxies.

    Attributes:
        images: float32 ``(batch, C, H, W)``.
        labels: int64 ``(batch,)`` class indices in ``[0, num_classes)``.
        data: which choice of `DATA_CHOICES` made it.
        seed: the seed it was drawn from.
    """

    images: torch.Tensor
    labels: torch.Tensor
    data: str
    seed: int

    @property
    def batch_size(self) -> int:
        """Images in the batch."""
        return int(self.images.shape[0])

    def to(self, device: str) -> ProxyBatch:
        """The same batch on `device`."""
        return ProxyBatch(self.images.to(device), self.labels.to(device), self.data, self.seed)


def _gaussian(rng: np.random.Generator, n: int, shape: tuple[int, int, int]) -> np.ndarray:
    return rng.standard_normal((n, *shape))


def _photos(rng: np.random.Generator, n: int, shape: tuple[int, int, int], dataset: str | None) -> np.ndarray:
    from sklearn.datasets import load_sample_images  # lazy: scikit-learn and Pillow are optional here

    photos = [np.asarray(img, dtype=np.float64) / 255.0 for img in load_sample_images().images]
    c, h, w = shape
    if c != 3:
        raise UsageError(f"the photos batch has 3 channels, the input has {c}")
    mean, std = CHANNEL_STATS[dataset_info(dataset or "cifar10").name]  # any spelling of the dataset
    out = np.empty((n, c, h, w))
    for i in range(n):
        img = photos[int(rng.integers(len(photos)))]
        top, left = int(rng.integers(img.shape[0] - h + 1)), int(rng.integers(img.shape[1] - w + 1))
        crop = img[top:top + h, left:left + w, :]
        out[i] = ((crop - np.asarray(mean)) / np.asarray(std)).transpose(2, 0, 1)
    return out


def _digits(rng: np.random.Generator, n: int, shape: tuple[int, int, int]) -> np.ndarray:
    from sklearn.datasets import load_digits  # lazy: scikit-learn is optional here

    images = load_digits().images  # (1797, 8, 8), values 0..16
    c, h, w = shape
    picked = images[rng.choice(len(images), size=n, replace=False)]
    rows = (np.arange(h) * 8) // h
    cols = (np.arange(w) * 8) // w
    up = picked[:, rows][:, :, cols]  # nearest-neighbour upsampling
    up = (up - up.mean()) / up.std()
    return np.repeat(up[:, None], c, axis=1)


def make_batch(input_shape: tuple[int, int, int], num_classes: int, *, batch_size: int = DEFAULT_BATCH_SIZE,
               seed: int = 0, data: str = DEFAULT_DATA, dataset: str | None = None) -> ProxyBatch:
    """A seeded batch of `batch_size` inputs of `input_shape` and labels below `num_classes`.

    Args:
        input_shape: one image's ``(channels, height, width)``.
        num_classes: number of classes of the labels.
        batch_size: images (at least 2: the jacov and NASWOT scores compare images).
        seed: seeds a private generator (the global random states are left alone).
        data: one of `DATA_CHOICES`.
        dataset: the dataset whose channel statistics standardise ``photos`` (default CIFAR-10's).

    Raises:
        UsageError: unknown `data`, batch size below 2, or no classes.
    """
    import torch  # lazy: torch is needed only to compute proxies

    if data not in DATA_CHOICES:
        raise UsageError(f"unknown proxy data {data!r}; choose from {', '.join(DATA_CHOICES)}")
    if int(batch_size) < 2:
        raise UsageError(f"the proxies' batch size must be at least 2, got {batch_size}")
    if int(num_classes) < 1:
        raise UsageError(f"num_classes must be at least 1, got {num_classes}")
    rng = np.random.default_rng(int(seed))
    if len(input_shape) != 3:
        raise UsageError(f"input_shape must be (channels, height, width), got {tuple(input_shape)}")
    shape = (int(input_shape[0]), int(input_shape[1]), int(input_shape[2]))
    if data == "gaussian":
        x = _gaussian(rng, int(batch_size), shape)
    elif data == "photos":
        x = _photos(rng, int(batch_size), shape, dataset)
    else:
        x = _digits(rng, int(batch_size), shape)
    labels = rng.integers(int(num_classes), size=int(batch_size))
    return ProxyBatch(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)),
                      torch.from_numpy(labels.astype(np.int64)), data, int(seed))
