"""Small data sets written in the real formats `nasenergy.train.load_data` reads (CIFAR-10 and
CIFAR-100 in their distributed python format, folders of PNG images, ``.npz``), to test code that
reads a user's data without downloading any. Every pixel is synthetic. Re-exported by
`nasenergy.testing`."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np


def cifar_rows(labels: list[int], seed: int) -> np.ndarray:
    """uint8 (N, 3072): row i holds distinct values (its first byte is i % 256)."""
    rows = np.random.default_rng(seed).integers(0, 256, size=(len(labels), 3072), dtype=np.uint8)
    rows[:, 0] = np.arange(len(labels)) % 256
    return rows


def write_cifar10(root: Path, per_class: int = 1, protocol: int = 2) -> Path:
    """cifar-10-batches-py as distributed: 5 batches of ``10 * per_class`` images, a test batch
    and batches.meta, dicts with bytes keys (pickled with ``protocol``)."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for i, name in enumerate([f"data_batch_{b}" for b in range(1, 6)] + ["test_batch"]):
        labels = [c for c in range(10) for _ in range(per_class)]
        batch = {b"batch_label": f"batch {i}".encode(), b"labels": labels,
                 b"data": cifar_rows(labels, seed=i), b"filenames": [b"img.png"] * len(labels)}
        with open(folder / name, "wb") as f:
            pickle.dump(batch, f, protocol=protocol)
    meta = {b"num_cases_per_batch": 10 * per_class, b"num_vis": 3072,
            b"label_names": [n.encode() for n in ("airplane", "automobile", "bird", "cat", "deer",
                                                   "dog", "frog", "horse", "ship", "truck")]}
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump(meta, f, protocol=protocol)
    return folder


def write_cifar100(root: Path) -> Path:
    """cifar-100-python as distributed: train (2 images per fine class), test (1 each), meta."""
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    for name, per_class in (("train", 2), ("test", 1)):
        fine = [c for c in range(100) for _ in range(per_class)]
        batch = {b"filenames": [b"img.png"] * len(fine), b"batch_label": name.encode(), b"fine_labels": fine,
                 b"coarse_labels": [c // 5 for c in fine], b"data": cifar_rows(fine, seed=len(fine))}
        with open(folder / name, "wb") as f:
            pickle.dump(batch, f)
    with open(folder / "meta", "wb") as f:
        pickle.dump({b"fine_label_names": [f"fine{c}".encode() for c in range(100)],
                     b"coarse_label_names": [f"coarse{c}".encode() for c in range(20)]}, f)
    return folder


def write_png(path: Path, mode: str, size: tuple[int, int], value: int) -> None:
    """A ``size`` = (width, height) PNG of ``mode`` with a gradient offset by ``value``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    w, h = size
    plane = ((np.arange(h * w).reshape(h, w) + value) % 256).astype(np.uint8)
    pixels = plane if mode == "L" else np.stack([plane, 255 - plane, np.full_like(plane, value)], axis=2)
    from PIL import Image  # lazy: Pillow is needed only to write images

    Image.fromarray(pixels, mode=mode).save(path)


def write_image_folder(root: Path, classes: dict[str, int], mode: str = "RGB", size: tuple[int, int] = (4, 5)) -> Path:
    """One class folder per entry of ``classes`` with that many PNGs."""
    for c, (name, count) in enumerate(sorted(classes.items())):
        for i in range(count):
            write_png(root / name / f"{i:03d}.png", mode, size, value=10 * c + i)
    return root


def write_npz(path: Path, **arrays: np.ndarray) -> Path:
    """``arrays`` saved as an ``.npz`` at `path`."""
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path
