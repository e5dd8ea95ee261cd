"""`nasenergy.train.data`: every input format, the seeded stratified split, the normalisation
statistics, the one-line `DataError` for each kind of bad input, and the refusal of pickles that
hold anything but data. The data sets are written to ``tmp_path`` in their real formats."""

from __future__ import annotations

import json
import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nasenergy.errors import UsageError
from nasenergy.train.data import DataError, ImageData, load_data, stratified_split, stratified_subset
from nasenergy.testing import cifar_rows, write_cifar10, write_cifar100, write_image_folder, write_npz, write_png
from nasenergy.train.safe_pickle import load_pickle


def fails(spec: object, match: str, **kwargs: object) -> str:
    """Assert that ``load_data(spec)`` raises a one-line `DataError` matching ``match``."""
    with pytest.raises(DataError, match=match) as info:
        load_data(str(spec), **kwargs)  # type: ignore[arg-type]
    message = str(info.value)
    assert "\n" not in message and message
    return message


# --- writers of the real formats -----------------------------------------------------------------

def labelled(n_per_class: int, classes: int) -> np.ndarray:
    return np.repeat(np.arange(classes), n_per_class)


# --- formats -------------------------------------------------------------------------------------

def test_digits() -> None:
    data = load_data("digits")
    assert data.input_shape == (1, 8, 8) and data.num_classes == 10
    assert len(data.y_train) + len(data.y_val) == 1797 and data.x_test is None and data.y_test is None
    assert data.x_train.dtype == np.float32 and data.y_train.dtype == np.int64
    assert 0.0 <= data.x_train.min() and data.x_train.max() <= 1.0 and data.x_train.max() == 1.0
    assert data.val_source == "seeded split: 20 % of the training set, stratified, seed 0"
    json.dumps(data.describe())


@pytest.mark.parametrize("protocol", [2, pickle.DEFAULT_PROTOCOL])
def test_cifar10_python_format(tmp_path: Path, protocol: int) -> None:
    folder = write_cifar10(tmp_path, per_class=1, protocol=protocol)
    data = load_data(str(folder))
    assert data.name == "cifar-10-batches-py" and data.num_classes == 10 and data.input_shape == (3, 32, 32)
    assert len(data.y_train) == 40 and len(data.y_val) == 10  # 5 per class: 1 held out each
    assert np.bincount(data.y_val).tolist() == [1] * 10
    assert data.class_names[:2] == ("airplane", "automobile")
    assert "CIFAR-10" in data.source and str(folder) in data.source
    # Rows are channel-major: the test batch's image 3 is row 3 reshaped to (3, 32, 32), / 255.
    rows = cifar_rows([c for c in range(10)], seed=5)
    assert data.x_test is not None and data.y_test is not None
    np.testing.assert_array_equal(data.x_test[3], rows[3].reshape(3, 32, 32).astype(np.float32) / 255)
    assert data.y_test.tolist() == list(range(10))
    # The parent folder of cifar-10-batches-py is found as well.
    assert load_data(str(tmp_path)).source == data.source


def test_cifar100_python_format_reads_fine_labels(tmp_path: Path) -> None:
    data = load_data(str(write_cifar100(tmp_path)))
    assert data.num_classes == 100 and data.input_shape == (3, 32, 32)
    # 2 images per class: 40 of 200 are held out, at most one of a class, every class keeps one.
    assert len(data.y_train) == 160 and len(data.y_val) == 40 and np.bincount(data.y_val).max() == 1
    assert np.bincount(data.y_train, minlength=100).min() == 1
    assert data.y_test is not None and sorted(data.y_test.tolist()) == list(range(100))
    assert data.class_names[7] == "fine7" and "CIFAR-100" in data.source


def test_image_folder_rgb(tmp_path: Path) -> None:
    root = write_image_folder(tmp_path / "pets", {"cat": 5, "dog": 5})
    data = load_data(str(root))
    assert data.name == "pets" and data.class_names == ("cat", "dog")
    assert data.input_shape == (3, 5, 4) and data.num_classes == 2  # PNGs are 4 wide, 5 high
    assert len(data.y_train) == 8 and np.bincount(data.y_val).tolist() == [1, 1]
    assert data.x_test is None and "image folder" in data.source and "RGB" in data.source
    # Every image comes back exactly (channel-first, / 255).
    expected = {}
    for c, name in enumerate(["cat", "dog"]):
        for i in range(5):
            pixels = np.asarray(Image.open(root / name / f"{i:03d}.png"), dtype=np.float32) / 255
            expected[(c, pixels.transpose(2, 0, 1).tobytes())] = True
    got = [(int(y), x.tobytes()) for x, y in zip(np.concatenate([data.x_train, data.x_val]),
                                                np.concatenate([data.y_train, data.y_val]))]
    assert sorted(got) == sorted(expected)


def test_image_folder_gray_and_mixed_modes(tmp_path: Path) -> None:
    gray = load_data(str(write_image_folder(tmp_path / "g", {"a": 3, "b": 3}, mode="L")))
    assert gray.input_shape == (1, 5, 4) and " L," in gray.source
    mixed = write_image_folder(tmp_path / "m", {"a": 3, "b": 3}, mode="L")
    write_png(mixed / "b" / "rgb.png", "RGB", (4, 5), value=1)
    assert load_data(str(mixed)).input_shape == (3, 5, 4)


def test_image_folder_with_own_splits(tmp_path: Path) -> None:
    root = tmp_path / "split"
    write_image_folder(root / "train", {"x": 4, "y": 4})
    write_image_folder(root / "val", {"x": 1, "y": 2})
    write_image_folder(root / "test", {"y": 3})
    data = load_data(str(root))
    assert len(data.y_train) == 8 and data.y_val.tolist() == [0, 1, 1]
    assert data.y_test is not None and data.y_test.tolist() == [1, 1, 1]
    assert data.val_source == "the source's own validation split"


def test_npz_nhwc_uint8_and_nchw_float(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    nhwc = rng.integers(0, 256, size=(12, 6, 7, 3), dtype=np.uint8)
    data = load_data(str(write_npz(tmp_path / "a.npz", x=nhwc, y=labelled(6, 2))), val_fraction=0.5)
    assert data.input_shape == (3, 6, 7) and data.name == "a.npz"
    assert "channels on axis 3" in data.source and "divided by 255" in data.source
    all_x = np.concatenate([data.x_train, data.x_val])
    assert sorted(map(bytes, all_x.reshape(12, -1))) == sorted(
        map(bytes, (nhwc.transpose(0, 3, 1, 2).astype(np.float32) / 255).reshape(12, -1)))

    nchw = rng.normal(size=(12, 1, 6, 7)).astype(np.float32)
    data = load_data(str(write_npz(tmp_path / "b.npz", x=nchw, y=labelled(6, 2))))
    assert data.input_shape == (1, 6, 7) and "channels on axis 1" in data.source
    assert set(map(bytes, data.x_train)) <= set(map(bytes, nchw))  # float values kept as stored

    nhw = load_data(str(write_npz(tmp_path / "c.npz", x=nchw[:, 0], y=labelled(6, 2))))
    assert nhw.input_shape == (1, 6, 7)


def test_npz_own_val_and_test(tmp_path: Path) -> None:
    x = np.zeros((6, 4, 4), np.float32)
    path = write_npz(tmp_path / "d.npz", x=x, y=labelled(3, 2), x_val=x[:2] + 100, y_val=np.array([0, 1]),
                     x_test=x[:3], y_test=np.array([[1], [0], [1]]))
    data = load_data(str(path))
    assert data.val_source == "the source's own validation split"
    assert data.y_test is not None and data.y_test.tolist() == [1, 0, 1]
    assert data.mean == (0.0,) and data.std == (1.0,)  # from training images only (the val ones are 100)


# --- split, cap, statistics ----------------------------------------------------------------------

def _distinct_npz(tmp_path: Path, counts: list[int]) -> Path:
    """An npz whose images are all different (image i is filled with i), class c has counts[c]."""
    y = np.concatenate([np.full(n, c) for c, n in enumerate(counts)])
    x = np.arange(len(y), dtype=np.float32)[:, None, None, None] * np.ones((1, 1, 2, 2), np.float32)
    return write_npz(tmp_path / "distinct.npz", x=x, y=y)


def test_split_is_stratified_and_seeded(tmp_path: Path) -> None:
    path = _distinct_npz(tmp_path, [10, 20, 5])
    np_state, py_state = np.random.get_state(), random.getstate()
    a = load_data(str(path), split_seed=3)
    b = load_data(str(path), split_seed=3)
    c = load_data(str(path), split_seed=4)
    assert np.bincount(a.y_val).tolist() == [2, 4, 1] and np.bincount(a.y_train).tolist() == [8, 16, 4]
    np.testing.assert_array_equal(a.x_val, b.x_val)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    assert not np.array_equal(a.x_val, c.x_val)
    ids = lambda d: set(d.x_train[:, 0, 0, 0].tolist())  # noqa: E731
    assert ids(a).isdisjoint(set(a.x_val[:, 0, 0, 0].tolist())) and len(ids(a)) + len(a.y_val) == 35
    assert a.val_source.endswith("seed 3")
    assert np.random.get_state()[1].tolist() == np_state[1].tolist() and random.getstate() == py_state


def test_mean_and_std_come_from_the_training_images_only(tmp_path: Path) -> None:
    data = load_data(str(_distinct_npz(tmp_path, [10, 10])))
    assert data.mean == pytest.approx((float(data.x_train.mean()),))
    assert data.std == pytest.approx((float(data.x_train.std()),))
    all_x = np.concatenate([data.x_train, data.x_val])
    assert data.mean != pytest.approx((float(all_x.mean()),))
    rgb = load_data(str(write_cifar10(tmp_path)))
    np.testing.assert_allclose(rgb.mean, rgb.x_train.mean(axis=(0, 2, 3)), rtol=1e-6)
    np.testing.assert_allclose(rgb.std, rgb.x_train.std(axis=(0, 2, 3)), rtol=1e-5)


def test_max_images_caps_the_training_set_stratified(tmp_path: Path) -> None:
    path = _distinct_npz(tmp_path, [30, 10, 3])
    data = load_data(str(path), max_images=10)
    assert len(data.y_train) == 10 and np.bincount(data.y_train).tolist() == [7, 2, 1]
    assert len(data.y_val) == 9  # the validation split is not capped
    again = load_data(str(path), max_images=10)
    np.testing.assert_array_equal(data.x_train, again.x_train)
    assert "capped at 10" in data.source
    assert load_data(str(path), max_images=1000).y_train.shape == (34,)
    fails(path, "below the number of classes", max_images=2)


def test_split_helpers() -> None:
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    kept, held = stratified_split(y, 0.5, seed=0)
    assert sorted([*kept, *held]) == list(range(10)) and np.bincount(y[held]).tolist() == [2, 3]
    subset = stratified_subset(y, 4, seed=0)
    assert len(set(subset.tolist())) == 4 and np.bincount(y[subset]).tolist() == [2, 2]


def test_describe_is_json_ready(tmp_path: Path) -> None:
    data = load_data(str(write_image_folder(tmp_path / "p", {"a": 5, "b": 5})))
    summary = json.loads(json.dumps(data.describe()))
    assert summary["input_shape"] == [3, 5, 4] and summary["num_classes"] == 2
    assert summary["images"] == {"train": 8, "val": 2, "test": None}
    assert summary["images_per_class"]["val"] == [1, 1] and summary["class_names"] == ["a", "b"]
    assert len(summary["mean"]) == 3 and summary["source"] == data.source
    assert isinstance(data, ImageData)


# --- bad input -----------------------------------------------------------------------------------

def test_data_error_is_a_usage_error() -> None:
    assert issubclass(DataError, UsageError) and DataError.exit_code == 2


def test_missing_empty_and_wrong_paths(tmp_path: Path) -> None:
    fails(tmp_path / "nope", "no such file or folder")
    (tmp_path / "empty").mkdir()
    fails(tmp_path / "empty", "empty folder")
    (tmp_path / "notes.txt").write_text("hello")
    fails(tmp_path / "notes.txt", "must be an .npz")
    (tmp_path / "fake.npz").write_bytes(b"not a zip")
    fails(tmp_path / "fake.npz", "not a readable .npz")
    loose = tmp_path / "loose"
    write_png(loose / "a.png", "L", (4, 4), 0)
    fails(loose, "no class subfolders")
    with pytest.raises(DataError, match="val_fraction"):
        load_data("digits", val_fraction=1.0)


def test_image_folder_errors(tmp_path: Path) -> None:
    fails(write_image_folder(tmp_path / "one", {"only": 4}), "1 class; at least 2")
    odd = write_image_folder(tmp_path / "odd", {"a": 3, "b": 3})
    write_png(odd / "b" / "zz_big.png", "RGB", (6, 5), value=0)
    assert "zz_big.png" in fails(odd, "6x5 pixels.*must share one size")
    text = write_image_folder(tmp_path / "text", {"a": 3, "b": 3})
    (text / "a" / "readme.txt").write_text("not an image")
    assert "readme.txt" in fails(text, "not a readable image")
    broken = write_image_folder(tmp_path / "broken", {"a": 3, "b": 3})
    (broken / "b" / "000.png").write_bytes((broken / "b" / "000.png").read_bytes()[:40])
    assert "000.png" in fails(broken, "not a readable image")
    (tmp_path / "mixed" / "train" / "a").mkdir(parents=True)
    (tmp_path / "mixed" / "extra").mkdir()
    fails(tmp_path / "mixed", "train/ beside other folders")
    split = tmp_path / "split"
    write_image_folder(split / "train", {"a": 2, "b": 2})
    write_image_folder(split / "val", {"c": 1})
    fails(split, "class 'c' of val/ has no folder in train/")


@pytest.mark.parametrize(("arrays", "match"), [
    ({"x": np.zeros((4, 3, 3))}, "no 'y' array"),
    ({"y": np.zeros(4)}, "no 'x' array"),
    ({"x": np.zeros((4, 3, 3)), "y": np.array([0, 1, 0])}, "4 images but 3 labels"),
    ({"x": np.zeros((4, 3, 3)), "y": np.array([0, 1, -1, 1])}, "labels hold -1"),
    ({"x": np.zeros((4, 3, 3)), "y": np.array([0, 1, 0.5, 1])}, "whole numbers"),
    ({"x": np.zeros((4, 3, 3)), "y": np.array(["a", "b", "a", "b"])}, "whole numbers"),
    ({"x": np.zeros((4, 3, 3)), "y": np.array([0, 2, 0, 2])}, "class 1 has no training image"),
    ({"x": np.zeros((4, 3, 3)), "y": np.zeros(4, int)}, "1 class; at least 2"),
    ({"x": np.zeros((4, 3, 3)), "y": labelled(2, 2), "x_val": np.zeros((1, 3, 3)), "y_val": np.array([2])},
     "out of range for 2 classes"),
    ({"x": np.zeros((4, 3, 3)), "y": labelled(2, 2), "x_val": np.zeros((1, 3, 3))}, "must come together"),
    ({"x": np.zeros((4, 3, 3)), "y": labelled(2, 2), "x_val": np.zeros((1, 3, 4)), "y_val": np.array([1])},
     "validation images have shape"),
    ({"x": np.full((4, 3, 3), np.nan), "y": labelled(2, 2)}, "NaN or infinite"),
    ({"x": np.zeros((4, 3, 3)), "y": labelled(2, 2), "x_test": np.pad(np.array([[[np.inf]]]), ((0, 0), (1, 1), (1, 1))),
      "y_test": np.array([0])}, "test images hold 1 NaN or infinite"),
    ({"x": np.zeros((4, 3, 5, 3)), "y": labelled(2, 2)}, "cannot tell the channel axis"),
    ({"x": np.zeros((4, 5, 5, 5)), "y": labelled(2, 2)}, "cannot tell the channel axis"),
    ({"x": np.zeros((4, 3)), "y": labelled(2, 2)}, "expected \\(N, H, W\\)"),
])
def test_npz_errors(tmp_path: Path, arrays: dict[str, np.ndarray], match: str) -> None:
    fails(write_npz(tmp_path / "bad.npz", **arrays), match)


def test_a_split_that_leaves_a_class_without_training_images(tmp_path: Path) -> None:
    path = _distinct_npz(tmp_path, [10, 2])
    load_data(str(path), val_fraction=0.2)  # class 1 keeps 2 training images (0.4 rounds to 0)
    fails(path, "leave class 1 \\(2 images\\) with no training image", val_fraction=0.75)


def test_cifar_errors(tmp_path: Path) -> None:
    folder = write_cifar10(tmp_path / "a")
    (folder / "data_batch_3").unlink()
    assert "data_batch_3" in fails(folder, "missing")
    folder = write_cifar10(tmp_path / "b")
    whole = (folder / "data_batch_2").read_bytes()
    (folder / "data_batch_2").write_bytes(whole[: len(whole) // 2])
    assert "data_batch_2" in fails(folder, "not a readable pickle \\(truncated or corrupt\\)")
    (folder / "data_batch_2").write_bytes(b"\x00garbage")
    fails(folder, "not a readable pickle")
    folder = write_cifar10(tmp_path / "c")
    with open(folder / "data_batch_4", "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3072), np.uint8), b"labels": [0, 10]}, f)
    fails(folder, "labels hold 10, out of range for 10 classes")
    with open(folder / "data_batch_4", "wb") as f:
        pickle.dump({b"data": np.zeros((2, 3072), np.uint8)}, f)
    fails(folder, "no 'labels' entry")
    with open(folder / "data_batch_4", "wb") as f:
        pickle.dump([1, 2, 3], f)
    fails(folder, "holds a list, not a dict")


# --- pickles that hold more than data ------------------------------------------------------------

class _RunsACommand:
    """Unpickling this with a plain `pickle.load` would run a shell command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (self.command,)


def test_a_pickle_that_runs_a_command_is_refused_before_it_runs(tmp_path: Path) -> None:
    folder = write_cifar10(tmp_path)
    marker = tmp_path / "the-command-ran"
    batch = {b"labels": list(range(10)), b"data": _RunsACommand(f"touch {marker}")}
    for protocol in (2, pickle.DEFAULT_PROTOCOL):
        with open(folder / "data_batch_1", "wb") as f:
            pickle.dump(batch, f, protocol=protocol)
        message = fails(folder, f"^refused: {folder / 'data_batch_1'} holds a {os.system.__module__}.system, not data$")
        assert not marker.exists(), message
    # The same file run through the ordinary unpickler would have run it: the test is meaningful.
    with open(folder / "data_batch_1", "rb") as f:
        pickle.load(f)
    assert marker.exists()


@pytest.mark.parametrize(("payload", "names"), [
    ({b"x": {1, 2}}, "builtins.set"),
    ({b"x": __import__("collections").OrderedDict()}, "collections.OrderedDict"),
    ({b"x": np.array([1, 2], dtype=object)}, "array of Python objects"),
    ({b"x": __import__("datetime").date(2020, 1, 1)}, "datetime.date"),
])
def test_pickles_of_other_objects_are_refused(tmp_path: Path, payload: dict[bytes, object], names: str) -> None:
    path = tmp_path / "p.pkl"
    with open(path, "wb") as f:
        pickle.dump(payload, f)
    with pytest.raises(DataError, match=f"^refused: .*{names}"):
        load_pickle(path, error=DataError)


def test_codecs_encode_is_admitted_only_for_latin1_bytes(tmp_path: Path) -> None:
    path = tmp_path / "p.pkl"
    with open(path, "wb") as f:
        pickle.dump({b"k": b"\x00\xff"}, f, protocol=2)  # Python 3 spells bytes as _codecs.encode here
    assert load_pickle(path, error=DataError) == {b"k": b"\x00\xff"}
    import codecs

    class Rot13:
        def __reduce__(self) -> tuple[object, tuple[str, str]]:
            return codecs.encode, ("text", "rot13")

    with open(path, "wb") as f:
        pickle.dump(Rot13(), f, protocol=2)
    with pytest.raises(DataError, match="refused: .*_codecs.encode"):
        load_pickle(path, error=DataError)
