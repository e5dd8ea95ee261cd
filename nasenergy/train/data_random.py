"""Random image data of a given shape: what speed and energy benchmarks train on (the arithmetic
of a training does not depend on the pixels' values; its accuracy is meaningless)."""

from __future__ import annotations

import numpy as np

from nasenergy.train.data import ImageData


def random_image_data(n_images: int, input_shape: tuple[int, int, int], num_classes: int, seed: int = 0,
                      val_images: int = 1024) -> ImageData:
    """`n_images` training and `val_images` validation images, uniform in [0, 1), with uniform
    random labels, from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    c, h, w = input_shape
    x = rng.random((n_images + val_images, c, h, w), dtype=np.float32)
    y = rng.integers(0, num_classes, n_images + val_images).astype(np.int64)
    return ImageData(
        name=f"random-{n_images}x{c}x{h}x{w}", x_train=x[:n_images], y_train=y[:n_images], x_val=x[n_images:],
        y_val=y[n_images:], x_test=None, y_test=None, num_classes=num_classes, input_shape=(c, h, w),
        mean=tuple(float(v) for v in x[:n_images].mean(axis=(0, 2, 3))),
        std=tuple(float(v) for v in x[:n_images].std(axis=(0, 2, 3))),
        source=f"random uniform images, seed {seed}", val_source=f"{val_images} more random images",
    )
