"""The image data a network is trained on: `load_data` reads, checks and splits a data set.

A data set is named by ``spec``: ``digits`` (scikit-learn's 8x8 digits), a CIFAR-10 or CIFAR-100
folder in the python format, a folder with one subfolder of images per class (optionally
``train/``, ``val/``, ``test/``), or an ``.npz`` archive (`nasenergy.train.data_formats` reads
each). Everything is checked before any training: a problem raises `DataError` with one line.

Where the source has no validation split, a stratified share of the training set is held out,
drawn with a seeded ``numpy`` Generator (never the global random state); `ImageData.val_source`
says which. Images stay on their raw scale; `ImageData.mean` and `ImageData.std` (per channel,
from the training images only) are what a trainer normalises with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nasenergy.train.data_formats import (
    DataError,
    RawData,
    find_cifar,
    read_cifar,
    read_digits,
    read_image_folder,
    read_npz,
)

__all__ = ["DataError", "ImageData", "load_data", "stratified_split", "stratified_subset"]


@dataclass(frozen=True, eq=False)
class ImageData:
    """A checked, split image classification data set.

    Attributes:
        name: ``digits``, or the folder or file name.
        x_train: float32, (N, C, H, W), raw scale (e.g. 8-bit pixels divided by 255), not normalised.
        y_train: int64, (N,), labels in [0, num_classes).
        x_val: float32, (M, C, H, W). y_val: int64, (M,).
        x_test: float32, (T, C, H, W), or None where the source has no test split.
        y_test: int64, (T,), or None.
        num_classes: the number of classes (>= 2; every class has a training image).
        input_shape: (C, H, W).
        mean: per channel, of ``x_train`` only (raw scale).
        std: per channel, of ``x_train`` only (population standard deviation; 1.0 for a channel
            with no spread, so that normalising leaves it unchanged).
        source: one line: what was read (format and path), and the cap on the training set if any.
        val_source: where the validation split comes from (a seeded split, or the source's own).
        class_names: one name per class where the source names them (folders, CIFAR), else empty.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray | None
    y_test: np.ndarray | None
    num_classes: int
    input_shape: tuple[int, int, int]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    source: str
    val_source: str
    class_names: tuple[str, ...] = ()

    def describe(self) -> dict[str, object]:
        """A JSON-ready summary: name, source, shapes, image counts (in all and per class),
        classes, mean and std."""
        splits = {"train": self.y_train, "val": self.y_val, "test": self.y_test}
        return {
            "name": self.name,
            "source": self.source,
            "val_source": self.val_source,
            "input_shape": list(self.input_shape),
            "num_classes": self.num_classes,
            "class_names": list(self.class_names),
            "images": {k: (None if y is None else int(len(y))) for k, y in splits.items()},
            "images_per_class": {
                k: (None if y is None else [int(c) for c in np.bincount(y, minlength=self.num_classes)])
                for k, y in splits.items()},
            "mean": [float(m) for m in self.mean],
            "std": [float(s) for s in self.std],
        }


def _apportion(quota: np.ndarray, total: int, low: np.ndarray, high: np.ndarray,
               tiebreak: np.ndarray) -> np.ndarray:
    """Whole numbers near ``quota`` within [``low``, ``high``] that sum to ``total`` (largest
    remainder method; equal remainders are ordered by ``tiebreak``).

    Args:
        quota: the ideal share of each class, (K,).
        total: the sum wanted, between ``low.sum()`` and ``high.sum()``.
        low, high: the bounds of each class's share, (K,).
        tiebreak: a random key per class, (K,).
    """
    alloc = np.clip(np.floor(quota).astype(np.int64), low, high)
    while (gap := total - int(alloc.sum())) != 0:
        step = 1 if gap > 0 else -1
        movable = alloc < high if step > 0 else alloc > low
        order = np.lexsort((tiebreak, -(quota - alloc) * step))
        alloc[next(c for c in order if movable[c])] += step
    return alloc


def _per_class(y: np.ndarray, seed: int | list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Per class (in label order) its indices in a seeded random order, and a random tie-break key
    per class, both from one ``numpy`` Generator."""
    rng = np.random.default_rng(seed)
    classes = int(y.max()) + 1
    return [rng.permutation(np.flatnonzero(y == c)) for c in range(classes)], rng.random(classes)


def stratified_split(y: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Hold out ``fraction`` of the images, the same share of each class, drawn with ``numpy``
    Generator ``seed``.

    ``round(fraction * N)`` images are held out (halves round up), shared among the classes in
    proportion to their sizes (largest remainder, ties in a seeded order); every class keeps at
    least one training image, so a class of one image is never held out.

    Args:
        y: int64 labels, (N,), every class in [0, max] present.
        fraction: the share held out, in (0, 1).
        seed: the Generator's seed: one seed gives one split.

    Returns:
        ``(kept, held_out)``: sorted index arrays into ``y``.

    Raises:
        DataError: ``fraction`` of a class rounds to all of it (the class would have no training
            image), or nothing would be held out.
    """
    per_class, tiebreak = _per_class(y, seed)
    counts = np.array([len(idx) for idx in per_class], dtype=np.int64)
    quota = fraction * counts
    whole = np.floor(quota + 0.5).astype(np.int64)
    if (whole >= counts).any():
        label = int(np.flatnonzero(whole >= counts)[0])
        n = int(counts[label])
        raise DataError(f"a {fraction:.4g} validation split would leave class {label} "
                        f"({n} image{'s' if n != 1 else ''}) with no training image: use more images "
                        "or a smaller fraction")
    total = min(int(np.floor(fraction * len(y) + 0.5)), int((counts - 1).sum()))
    if total < 1:
        raise DataError(f"a {fraction:.4g} validation split of {len(y)} images holds no image: use more images "
                        "or a larger fraction")
    held = _apportion(quota, total, np.zeros_like(counts), counts - 1, tiebreak)
    return (np.sort(np.concatenate([idx[h:] for idx, h in zip(per_class, held)])),
            np.sort(np.concatenate([idx[:h] for idx, h in zip(per_class, held)])))


def stratified_subset(y: np.ndarray, size: int, seed: int) -> np.ndarray:
    """``size`` indices into ``y``: the classes in proportion to their sizes (largest remainder),
    each with at least one image, the images drawn with a ``numpy`` Generator seeded by ``seed``.

    Args:
        y: int64 labels, (N,), every class in [0, max] present.
        size: how many to keep, between the number of classes and N.
        seed: the seed (its stream differs from `stratified_split`'s for the same seed).

    Returns:
        Sorted indices, (size,).
    """
    per_class, tiebreak = _per_class(y, [seed, 1])
    counts = np.array([len(idx) for idx in per_class], dtype=np.int64)
    take = _apportion(counts * size / len(y), size, np.ones_like(counts), counts, tiebreak)
    return np.sort(np.concatenate([idx[:t] for idx, t in zip(per_class, take)]))


def _labels(y: np.ndarray, split: str) -> np.ndarray:
    """``y`` as int64, (N,): whole numbers only."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"the {split} labels have shape {y.shape}, not (N,)")
    if y.dtype.kind in "iu":
        if y.dtype.kind == "u" and len(y) and int(y.max()) > np.iinfo(np.int64).max:
            raise DataError(f"the {split} labels hold {int(y.max())}, out of range")
        return y.astype(np.int64)
    if y.dtype.kind == "f":
        if not np.isfinite(y).all() or not (y == np.round(y)).all():
            bad = y[~np.isfinite(y) | (y != np.round(y))][0]
            raise DataError(f"the {split} labels hold {bad!r}: labels must be whole numbers")
        return y.astype(np.int64)
    raise DataError(f"the {split} labels are of dtype {y.dtype}: labels must be whole numbers")


def _check_split(x: np.ndarray, y: np.ndarray, split: str, num_classes: int,
                 shape: tuple[int, ...]) -> None:
    if len(x) != len(y):
        raise DataError(f"the {split} split has {len(x)} images but {len(y)} labels")
    if x.shape[1:] != shape:
        raise DataError(f"the {split} images have shape {x.shape[1:]}, the training images {shape}")
    if len(y) and int(y.min()) < 0:
        raise DataError(f"the {split} labels hold {int(y.min())}: labels must be >= 0")
    if len(y) and int(y.max()) >= num_classes:
        raise DataError(f"the {split} labels hold {int(y.max())}, out of range for {num_classes} classes "
                        f"(0-{num_classes - 1})")
    finite = np.isfinite(x)
    if not finite.all():
        raise DataError(f"the {split} images hold {int(x.size - finite.sum())} NaN or infinite values")


def _read(spec: str | Path) -> RawData:
    if str(spec) == "digits":
        return read_digits()
    path = Path(spec).expanduser()
    if not path.exists():
        raise DataError(f"{spec}: no such file or folder (give 'digits', a CIFAR folder, an image folder or an .npz)")
    if path.is_file():
        if path.suffix.lower() != ".npz":
            raise DataError(f"{path}: a data file must be an .npz archive (or give a folder)")
        return read_npz(path)
    cifar = find_cifar(path)
    return read_cifar(*cifar) if cifar else read_image_folder(path)


def load_data(spec: str | Path, *, val_fraction: float = 0.2, split_seed: int = 0,
              max_images: int | None = None) -> ImageData:
    """Read, check and split the data set ``spec``.

    Args:
        spec: ``digits``; a CIFAR-10 / CIFAR-100 folder in the python format; a folder of class
            folders (or of ``train/``, ``val/``, ``test/`` holding class folders); an ``.npz``
            with ``x`` and ``y`` (optionally ``x_val``, ``y_val``, ``x_test``, ``y_test``).
        val_fraction: the share of each class held out for validation, in (0, 1), when the source
            has no validation split of its own.
        split_seed: seeds the validation split and the cap (one seed, one split).
        max_images: keep at most this many training images (stratified, seeded by
            ``split_seed``), after the validation split; None keeps all.

    Returns:
        The checked data set; ``source`` and ``val_source`` say what was read and how it was split.

    Raises:
        DataError: one line, for a missing or malformed input, labels that are not whole numbers
            in range, fewer than 2 classes, a class with no training image, NaN or infinite
            values, or a bad ``val_fraction`` / ``max_images``.
    """
    if not 0.0 < val_fraction < 1.0:
        raise DataError(f"val_fraction must be between 0 and 1 (exclusive), not {val_fraction}")
    if max_images is not None and max_images < 1:
        raise DataError(f"max_images must be at least 1, not {max_images}")
    raw = _read(spec)
    x, y = raw.x_train, _labels(raw.y_train, "training")
    shape = tuple(int(d) for d in x.shape[1:])
    if not len(y):
        raise DataError(f"{raw.source}: no training image")
    num_classes = raw.num_classes if raw.num_classes is not None else max(int(y.max()) + 1, 0)
    _check_split(x, y, "training", num_classes, shape)
    counts = np.bincount(y, minlength=num_classes)
    if np.count_nonzero(counts) < 2:
        raise DataError(f"{raw.source}: the training set has {np.count_nonzero(counts)} class; at least 2 are needed")
    if not counts.all():
        missing = int(np.flatnonzero(counts == 0)[0])
        name = f" ({raw.class_names[missing]})" if raw.class_names else ""
        raise DataError(f"{raw.source}: class {missing}{name} has no training image (labels must be 0 to "
                        f"{num_classes - 1}, each used)")
    test = None
    if raw.x_test is not None and raw.y_test is not None:
        test = (raw.x_test, _labels(raw.y_test, "test"))
        _check_split(*test, "test", num_classes, shape)
    if raw.x_val is not None and raw.y_val is not None:
        x_val, y_val = raw.x_val, _labels(raw.y_val, "validation")
        _check_split(x_val, y_val, "validation", num_classes, shape)
        val_source = "the source's own validation split"
    else:
        kept, held = stratified_split(y, val_fraction, split_seed)
        x, y, x_val, y_val = x[kept], y[kept], x[held], y[held]
        val_source = f"seeded split: {val_fraction * 100:.4g} % of the training set, stratified, seed {split_seed}"
    source = raw.source
    if max_images is not None and max_images < len(y):
        if max_images < num_classes:
            raise DataError(f"max_images {max_images} is below the number of classes ({num_classes})")
        keep = stratified_subset(y, max_images, split_seed)
        x, y = x[keep], y[keep]
        source += f"; training set capped at {max_images} images (stratified, seed {split_seed})"
    x = np.ascontiguousarray(x, dtype=np.float32)
    mean = x.mean(axis=(0, 2, 3), dtype=np.float64)
    std = x.std(axis=(0, 2, 3), dtype=np.float64)
    return ImageData(
        name=raw.name, x_train=x, y_train=y,
        x_val=np.ascontiguousarray(x_val, dtype=np.float32), y_val=y_val,
        x_test=None if test is None else np.ascontiguousarray(test[0], dtype=np.float32),
        y_test=None if test is None else test[1],
        num_classes=num_classes, input_shape=(shape[0], shape[1], shape[2]),
        mean=tuple(float(m) for m in mean), std=tuple(float(s) if s > 0 else 1.0 for s in std),
        source=source, val_source=val_source, class_names=raw.class_names,
    )
