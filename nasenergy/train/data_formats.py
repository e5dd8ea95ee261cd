"""Readers of the image data formats a user can train on, each returning `RawData`.

Every reader turns its format into float32 arrays of shape (N, C, H, W) on the raw scale of the
format (8-bit pixels divided by 255, scikit-learn's digits by 16) and the labels as stored;
`nasenergy.train.data` checks the labels, splits off a validation set and computes the
normalisation. A problem with the input raises `DataError` with one line naming the file.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nasenergy.errors import UsageError, first_line
from nasenergy.train.safe_pickle import load_pickle

__all__ = [
    "DataError",
    "RawData",
    "find_cifar",
    "read_cifar",
    "read_digits",
    "read_image_folder",
    "read_npz",
]

SPLIT_FOLDERS = ("train", "val", "test")
"""The subfolders of an image folder that holds its own splits (``train/`` is required)."""
_SKIPPED_FILES = frozenset({"Thumbs.db", "desktop.ini"})
"""File names inside class folders that are not images and are skipped (as are hidden files)."""
_GRAY_MODES = frozenset({"1", "L", "LA", "La", "I", "F"})
"""Pillow modes of single-channel images (16-bit modes ``I;16*`` count as well)."""


class DataError(UsageError):
    """A training data set that cannot be used as given: a missing or malformed file, bad labels,
    too few classes or images (exit status 2; the message is one line)."""


@dataclass(frozen=True, eq=False)
class RawData:
    """What a reader found, before checks, splitting and normalisation.

    Attributes:
        name: the data set's name (``digits``, or the folder or file name).
        source: one line saying what was read (format and path).
        x_train: float32, (N, C, H, W), raw scale.
        y_train: the training labels as stored, (N,) (any dtype; checked later).
        x_val, y_val: the source's own validation split, or None.
        x_test, y_test: the source's own test split, or None.
        num_classes: the number of classes the format fixes (CIFAR, class folders), or None to
            take the largest training label + 1.
        class_names: one name per class where the source names them, else empty.
    """

    name: str
    source: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    x_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    num_classes: int | None = None
    class_names: tuple[str, ...] = ()


def read_digits() -> RawData:
    """scikit-learn's ``load_digits``: 1,797 grayscale 8x8 images of 10 digits, values 0-16
    scaled by 1/16 to [0, 1]; no test split."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.asarray(bunch.images, dtype=np.float64)
    return RawData(
        name="digits",
        source="scikit-learn load_digits: 1,797 grayscale 8x8 images of 10 digits, values 0-16 divided by 16",
        x_train=(images / 16.0).astype(np.float32)[:, None, :, :],
        y_train=np.asarray(bunch.target),
        num_classes=10,
        class_names=tuple(str(t) for t in bunch.target_names),
    )


# --- CIFAR, python format ------------------------------------------------------------------------

def find_cifar(folder: Path) -> tuple[str, Path] | None:
    """``("cifar10" | "cifar100", folder of the batch files)`` when ``folder`` is (or directly
    holds) a CIFAR folder in the python format (``cifar-10-batches-py``, ``cifar-100-python``)."""
    for candidate in (folder, folder / "cifar-10-batches-py", folder / "cifar-100-python"):
        if (candidate / "data_batch_1").is_file() or (candidate / "batches.meta").is_file():
            return "cifar10", candidate
        if (candidate / "train").is_file():
            return "cifar100", candidate
    return None


def _entry(payload: dict[object, object], key: str, path: Path) -> object:
    """``payload[b"key"]`` (as the distributed files have it) or ``payload["key"]``."""
    for k in (key.encode(), key):
        if k in payload:
            return payload[k]
    keys = ", ".join(sorted(k.decode("latin-1") if isinstance(k, bytes) else str(k) for k in payload))
    raise DataError(f"{path}: not a CIFAR file: it has no {key!r} entry (it has: {keys})")


def _cifar_dict(path: Path) -> dict[object, object]:
    if not path.is_file():
        raise DataError(f"{path}: missing (a CIFAR folder in the python format holds it)")
    payload = load_pickle(path, error=DataError)
    if not isinstance(payload, dict):
        raise DataError(f"{path}: not a CIFAR file: it holds a {type(payload).__name__}, not a dict")
    return payload


def _cifar_batch(path: Path, label_key: str) -> tuple[np.ndarray, np.ndarray]:
    """The images, float32 (N, 3, 32, 32) in [0, 1], and the labels as stored, of one batch file."""
    payload = _cifar_dict(path)
    data = np.asarray(_entry(payload, "data", path))
    labels = np.asarray(_entry(payload, label_key, path))
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise DataError(f"{path}: 'data' is {data.dtype} of shape {data.shape}, not uint8 of shape (N, 3072)")
    if labels.ndim != 1 or len(labels) != len(data):
        raise DataError(f"{path}: {len(data)} images but {labels.size} labels")
    return data.reshape(-1, 3, 32, 32).astype(np.float32) / np.float32(255.0), labels


def _cifar_names(path: Path, key: str, count: int) -> tuple[str, ...]:
    """The class names of the meta file, or none where it is absent."""
    if not path.exists():
        return ()
    names = _entry(_cifar_dict(path), key, path)
    if not isinstance(names, list) or len(names) != count:
        raise DataError(f"{path}: {key!r} is not a list of {count} class names")
    return tuple(n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n) for n in names)


def read_cifar(kind: str, folder: Path) -> RawData:
    """A CIFAR-10 (``data_batch_1`` .. ``data_batch_5``, ``test_batch``, ``batches.meta``) or
    CIFAR-100 (``train``, ``test``, ``meta``; the 100 fine labels) folder in the python format.

    The files are pickles, read with `load_pickle` (plain data only). Images: uint8 rows of 3,072
    values (channel, row, column) divided by 255. The meta file is optional (class names only).
    """
    if kind == "cifar10":
        parts = [_cifar_batch(folder / f"data_batch_{i}", "labels") for i in range(1, 6)]
        x_test, y_test = _cifar_batch(folder / "test_batch", "labels")
        names = _cifar_names(folder / "batches.meta", "label_names", 10)
        classes, label = 10, "labels"
    else:
        parts = [_cifar_batch(folder / "train", "fine_labels")]
        x_test, y_test = _cifar_batch(folder / "test", "fine_labels")
        names = _cifar_names(folder / "meta", "fine_label_names", 100)
        classes, label = 100, "fine labels"
    title = "CIFAR-10" if kind == "cifar10" else "CIFAR-100"
    return RawData(
        name=folder.name, source=f"{title}, python format ({label}): {folder}",
        x_train=np.concatenate([p[0] for p in parts]), y_train=np.concatenate([p[1] for p in parts]),
        x_test=x_test, y_test=y_test, num_classes=classes, class_names=names,
    )


# --- folder of images ----------------------------------------------------------------------------

def _visible(path: Path) -> bool:
    return not path.name.startswith(".") and path.name not in _SKIPPED_FILES


def _class_folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and _visible(p))


def _read_image(path: Path) -> np.ndarray:
    """One image as float32 (H, W) (grayscale) or (H, W, 3) (colour, alpha dropped) in [0, 1]:
    8-bit values divided by 255, 16-bit ones by 65,535, floating-point ones as stored."""
    from PIL import Image

    try:
        with Image.open(path) as img:
            img.load()
            mode = img.mode
            if mode.startswith("I") or mode == "F":
                scale = 65535.0 if mode.startswith("I") else 1.0
                return np.asarray(img, dtype=np.float32) / np.float32(scale)
            if mode in _GRAY_MODES:
                return np.asarray(img.convert("L"), dtype=np.float32) / np.float32(255.0)
            return np.asarray(img.convert("RGB"), dtype=np.float32) / np.float32(255.0)
    except Exception as exc:  # Pillow raises many types for a file that is not a readable image
        raise DataError(f"{path}: not a readable image ({type(exc).__name__}: {first_line(exc)})") from None


def _read_split(folder: Path, classes: list[str], what: str) -> tuple[list[np.ndarray], list[int], list[Path]]:
    """The images, labels and files of the class folders of ``folder`` (classes by ``classes``)."""
    images: list[np.ndarray] = []
    labels: list[int] = []
    files: list[Path] = []
    for class_folder in _class_folders(folder):
        if class_folder.name not in classes:
            raise DataError(f"{class_folder}: class {class_folder.name!r} of {what} has no folder in train/")
        paths = sorted(p for p in class_folder.rglob("*") if p.is_file() and _visible(p))
        if not paths and what == "the training set":
            raise DataError(f"{class_folder}: class folder holds no image")
        for path in paths:
            images.append(_read_image(path))
            labels.append(classes.index(class_folder.name))
            files.append(path)
    if not images:
        raise DataError(f"{folder}: {what} holds no image")
    return images, labels, files


def read_image_folder(root: Path) -> RawData:
    """A folder with one subfolder of images per class, read with Pillow (a dependency of
    matplotlib).

    Either the class folders sit in ``root`` (no own validation split), or ``root`` holds
    ``train/`` and optionally ``val/`` and ``test/``, each with class folders named as in
    ``train/``. Class indices follow the sorted class folder names. Hidden files are skipped. All
    images are converted to one mode (L when every image is grayscale, else RGB) and must share
    one size: images are never resized.
    """
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise DataError(f"{root}: reading a folder of images needs Pillow (pip install pillow)") from None
    folders = _class_folders(root)
    if not folders:
        has_files = any(_visible(p) for p in root.iterdir())
        raise DataError(f"{root}: {'no class subfolders (one subfolder per class)' if has_files else 'empty folder'}")
    names = {f.name for f in folders}
    split_layout = "train" in names
    if split_layout and not names <= set(SPLIT_FOLDERS):
        others = ", ".join(sorted(names - set(SPLIT_FOLDERS)))
        raise DataError(f"{root}: holds train/ beside other folders ({others}): give either class folders "
                        "or train/, val/, test/ holding class folders")
    train_dir = root / "train" if split_layout else root
    classes = [f.name for f in _class_folders(train_dir)]
    if not classes:
        raise DataError(f"{train_dir}: no class subfolders (one subfolder per class)")
    splits = {"train": _read_split(train_dir, classes, "the training set")}
    for split in ("val", "test"):
        if split_layout and (root / split).is_dir():
            splits[split] = _read_split(root / split, classes, f"{split}/")
    all_images = [(img, path) for images, _, files in splits.values() for img, path in zip(images, files)]
    first, first_path = all_images[0]
    for img, path in all_images:
        if img.shape[:2] != first.shape[:2]:
            raise DataError(f"{path}: {img.shape[1]}x{img.shape[0]} pixels, but {first_path} is "
                            f"{first.shape[1]}x{first.shape[0]}: all images must share one size (resize them first)")
    gray = all(img.ndim == 2 for img, _ in all_images)

    def stack(images: list[np.ndarray]) -> np.ndarray:
        if gray:
            return np.stack(images)[:, None, :, :]
        rgb = [img if img.ndim == 3 else np.repeat(img[:, :, None], 3, axis=2) for img in images]
        return np.ascontiguousarray(np.stack(rgb).transpose(0, 3, 1, 2))

    arrays = {split: (stack(images), np.asarray(labels, dtype=np.int64))
              for split, (images, labels, _) in splits.items()}
    val, test = arrays.get("val"), arrays.get("test")
    layout = "train/" + "".join(f", {s}/" for s in ("val", "test") if s in arrays) if split_layout else "class folders"
    return RawData(
        name=root.name, source=f"image folder ({layout}; {len(classes)} classes, {'L' if gray else 'RGB'}, "
                               f"{first.shape[1]}x{first.shape[0]} pixels): {root}",
        x_train=arrays["train"][0], y_train=arrays["train"][1],
        x_val=val[0] if val else None, y_val=val[1] if val else None,
        x_test=test[0] if test else None, y_test=test[1] if test else None,
        num_classes=len(classes), class_names=tuple(classes),
    )


# --- .npz ----------------------------------------------------------------------------------------

def _layout(x: np.ndarray, path: Path) -> str:
    """``"NHW"``, ``"NCHW"`` or ``"NHWC"`` for the training images ``x``."""
    if x.ndim == 3:
        return "NHW"
    if x.ndim != 4:
        raise DataError(f"{path}: 'x' has shape {x.shape}; expected (N, H, W), (N, H, W, C) or (N, C, H, W)")
    first, last = x.shape[1] in (1, 3), x.shape[3] in (1, 3)
    if first == last:
        raise DataError(f"{path}: 'x' has shape {x.shape}: cannot tell the channel axis (exactly one of axes 1 "
                        "and 3 must have 1 or 3 channels)")
    return "NCHW" if first else "NHWC"


def _images(x: np.ndarray, layout: str, key: str, path: Path) -> np.ndarray:
    """``x`` as float32 (N, C, H, W); uint8 values divided by 255."""
    if x.dtype.kind not in "biuf":
        raise DataError(f"{path}: {key!r} is of dtype {x.dtype}, not numbers")
    if x.ndim != len(layout):
        raise DataError(f"{path}: {key!r} has shape {x.shape}, unlike 'x' ({layout})")
    out = x.astype(np.float32) / np.float32(255.0) if x.dtype == np.uint8 else x.astype(np.float32)
    if layout == "NHW":
        return out[:, None, :, :]
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2)) if layout == "NHWC" else out


def read_npz(path: Path) -> RawData:
    """An ``.npz`` archive with ``x`` (images) and ``y`` (labels), optionally ``x_val``/``y_val``
    and ``x_test``/``y_test``.

    ``x`` is (N, H, W), (N, H, W, C) or (N, C, H, W) with 1 or 3 channels: the channel axis is the
    one of axes 1 and 3 that has 1 or 3 entries. uint8 values are divided by 255; other numbers
    are kept as stored. Pickled objects are never loaded.
    """
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise DataError(f"{path}: not an .npz archive (a single .npy array)")
        with archive:
            arrays = {key: archive[key] for key in archive.files}
    except DataError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise DataError(f"{path}: not a readable .npz archive ({type(exc).__name__}: {first_line(exc)})") from None
    for key in ("x", "y"):
        if key not in arrays:
            raise DataError(f"{path}: no {key!r} array (it has: {', '.join(sorted(arrays)) or 'nothing'})")
    for split in ("val", "test"):
        if (f"x_{split}" in arrays) != (f"y_{split}" in arrays):
            raise DataError(f"{path}: 'x_{split}' and 'y_{split}' must come together")
    layout = _layout(arrays["x"], path)
    out: dict[str, np.ndarray] = {}
    for split in ("", "_val", "_test"):
        if f"x{split}" in arrays:
            out[f"x{split}"] = _images(arrays[f"x{split}"], layout, f"x{split}", path)
            y = arrays[f"y{split}"]
            out[f"y{split}"] = y.reshape(-1) if y.ndim == 2 and y.shape[1:] == (1,) else y
    how = {"NHW": "(N, H, W), one channel", "NCHW": "(N, C, H, W): channels on axis 1",
           "NHWC": "(N, H, W, C): channels on axis 3"}[layout]
    return RawData(
        name=path.name,
        source=f".npz archive, x {how}{', uint8 divided by 255' if arrays['x'].dtype == np.uint8 else ''}: {path}",
        x_train=out["x"], y_train=out["y"], x_val=out.get("x_val"), y_val=out.get("y_val"),
        x_test=out.get("x_test"), y_test=out.get("y_test"),
    )
