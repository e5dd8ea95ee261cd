"""``python -m nasenergy.search --oracle train --data PATH``: real training as the full evaluation,
on the CPU here (digits, a CIFAR-format folder, an image folder), and every bad input refused in
one line with exit status 2 before any training."""

from __future__ import annotations

import csv
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nasenergy.run.report_text import _duration
from nasenergy.testing import write_cifar10, write_image_folder, write_npz

ROOT = Path(__file__).resolve().parents[2]


def search(tmp_path: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "nasenergy.search", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "candidates.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_search_on_digits_trains_every_evaluated_network(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = search(tmp_path, "--oracle", "train", "--data", "digits", "--budget", "6", "--epochs", "2",
                  "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    evaluated = [r for r in rows(out) if r["outcome"] == "evaluated"]
    assert len(evaluated) == 6 and len({r["network"] for r in evaluated}) == 6
    for r in evaluated:
        assert r["accuracy_source"] == "measured" and r["eval_cost_source"] == "measured"
        assert float(r["eval_cost_s"]) > 0 and r["train_epochs"] == "2" and float(r["train_images_per_s"]) > 0
        assert 0.0 <= float(r["accuracy_pct"]) <= 100.0
    config = json.loads((out / "config.json").read_text())
    assert (config["oracle"], config["data"], config["epochs"], config["dataset"]) == ("train", "digits", 2, "data-digits")
    report = (out / "report.md").read_text()
    spent = sum(float(r["eval_cost_s"]) for r in evaluated)
    assert "- training spent: " in report and "over 6 trainings of 2 epochs" in report
    assert f"- training spent: {_duration(spent)} (measured)" in report
    assert not list((out / "training").glob("*.npz"))  # every checkpoint removed once its training ended


def _tiny_cifar(root: Path) -> Path:
    return write_cifar10(root, per_class=2)


def _tiny_images(root: Path) -> Path:
    return write_image_folder(root / "images", {"cats": 12, "dogs": 12}, size=(8, 8))


@pytest.mark.parametrize("make", [_tiny_cifar, _tiny_images], ids=["cifar-folder", "image-folder"])
def test_a_search_trains_on_a_cifar_folder_and_an_image_folder(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    data = make(tmp_path)
    out = tmp_path / "run"
    done = search(tmp_path, "--oracle", "train", "--data", str(data), "--budget", "2", "--epochs", "1",
                  "--filter", "none", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    evaluated = [r for r in rows(out) if r["outcome"] == "evaluated"]
    assert len(evaluated) == 2 and all(r["accuracy_source"] == "measured" for r in evaluated)
    if make is _tiny_cifar:  # CIFAR has a test split: the final figure is the same training's test accuracy
        assert all(r["final_split"] == "x-test" and r["final_source"] == "measured" for r in evaluated)


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    empty = tmp_path / "empty"
    empty.mkdir()
    npz = write_npz(tmp_path / "mismatch.npz", x=np.zeros((4, 8, 8), np.float32), y=np.zeros(3, np.int64))
    one_class = write_image_folder(tmp_path / "one", {"only": 3}, size=(8, 8))
    notimage = write_image_folder(tmp_path / "notimage", {"a": 2, "b": 2}, size=(8, 8))
    (notimage / "a" / "readme.png").write_text("not an image")
    evil = write_cifar10(tmp_path / "evil", per_class=1)
    with open(evil / "data_batch_1", "wb") as fh:
        pickle.dump({b"data": _Payload(tmp_path / "owned"), b"labels": [0]}, fh)
    train = ["--oracle", "train", "--budget", "2", "--epochs", "1"]
    return {
        "data without train": (["--data", "digits"], "--oracle train"),
        "train without data": (["--oracle", "train"], "--data"),
        "missing path": ([*train, "--data", str(tmp_path / "nowhere")], "nowhere"),
        "empty folder": ([*train, "--data", str(empty)], "empty"),
        "x and y differ": ([*train, "--data", str(npz)], "labels"),
        "one class": ([*train, "--data", str(one_class)], "class"),
        "not an image": ([*train, "--data", str(notimage)], "readme.png"),
        "a pickle with code": ([*train, "--data", str(evil)], "refused"),
        "a recorded profile": ([*train, "--data", "digits", "--hardware", "recorded"], "recorded profile"),
        "a NATS dataset too": ([*train, "--data", "digits", "--dataset", "cifar100"], "--dataset"),
        "zero epochs": ([*train[:-1], "0", "--data", "digits"], "--epochs"),
        "bad validation share": ([*train, "--data", "digits", "--val-fraction", "1.5"], "--val-fraction"),
    }


def test_bad_training_inputs_are_one_line_and_status_2(tmp_path: Path) -> None:
    for what, (args, needle) in _bad_inputs(tmp_path).items():
        done = search(tmp_path, *args, "--out", str(tmp_path / "run"), timeout=120)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2, (what, done.stderr[-1500:])
        assert len(lines) == 1 and "error" in lines[0], (what, lines)
        assert "Traceback" not in done.stderr and needle.lower() in done.stderr.lower(), (what, done.stderr)
        assert not (tmp_path / "run" / "candidates.csv").exists(), what
    assert not (tmp_path / "owned").exists()  # the pickle's code never ran


@pytest.mark.slow
def test_kill_9_during_a_training_then_the_same_command_spends_exactly_the_budget(tmp_path: Path) -> None:
    """A run killed mid-training resumes with the same command: the budget is spent exactly, no
    network is trained twice to completion, and the killed training continues from its epoch
    checkpoint."""
    import signal
    import time

    out = tmp_path / "run"
    args = ["--oracle", "train", "--data", "digits", "--budget", "3", "--epochs", "30", "--out", str(out), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "nasenergy.search", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not list((out / "training").glob("*.npz")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert list((out / "training").glob("*.npz")), "no epoch checkpoint appeared"
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = search(tmp_path, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    evaluated = [r for r in rows(out) if r["outcome"] == "evaluated"]
    assert len(evaluated) == 3 and len({r["network"] for r in evaluated}) == 3
    assert any(int(r["train_resumed_from_epoch"]) > 0 for r in evaluated)
    assert "continued from an epoch checkpoint" in (out / "report.md").read_text()


@pytest.mark.slow
def test_two_worker_processes_train_on_the_users_data(tmp_path: Path) -> None:
    """Worker processes register the user's data themselves (spawned, they share no memory)."""
    out = tmp_path / "run"
    done = search(tmp_path, "--oracle", "train", "--data", "digits", "--budget", "4", "--epochs", "1",
                  "--workers", "2", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    evaluated = [r for r in rows(out) if r["outcome"] == "evaluated"]
    assert len(evaluated) == 4 and len({r["network"] for r in evaluated}) == 4
    assert len({r["worker"] for r in evaluated}) == 2 and all(r["accuracy_source"] == "measured" for r in evaluated)


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_training_on_the_cpu_share_its_cores(tmp_path: Path, workers: int) -> None:
    from nasenergy.search.command.components import training_oracle
    from nasenergy.search.command.config import SearchConfig
    from search_spaces import get_space

    config = SearchConfig(oracle="train", data="digits", epochs=1, workers=workers, out=str(tmp_path), quiet=True)
    oracle = training_oracle(config, get_space("tss"), "cpu")
    want = None if workers == 1 else max(1, (os.cpu_count() or 1) // workers)
    assert oracle.options.cpu_threads == want  # type: ignore[attr-defined]
