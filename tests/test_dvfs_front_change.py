"""experiments/dvfs_front_change.py on hand-made fronts (made-up figures, known answers)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest


@pytest.fixture(scope="module")
def fc(load_experiment):
    return load_experiment("dvfs_front_change")


def _sub(default: dict[str, tuple[float, float]]):
    """A stand-in `Subspace` whose networks have these default-clock (img/s, J/img)."""
    classes = {k: SimpleNamespace(measurement=SimpleNamespace(throughput_img_per_s=t, energy_j_per_img=e))
               for k, (t, e) in default.items()}
    return SimpleNamespace(classes=classes, dataset="cifar10")


def _row(key: str, acc: float, thr: float, energy: float, outcome: str = "evaluated") -> dict[str, str]:
    return {"outcome": outcome, "canonical": key, "network": "", "accuracy_pct": str(acc),
            "throughput_img_per_s": str(thr), "energy_j_per_img": str(energy), "method": "tpe", "seed": "0"}


def test_a_network_enters_and_one_leaves(fc):
    # default clock: c is dominated by b (same accuracy, slower, hungrier) -> front {a, b}
    sub = _sub({"a": (100.0, 1.0), "b": (200.0, 1.0), "c": (150.0, 1.2)})
    # at the optimal clocks c saves much more energy than b, and b nothing: c now beats b on energy
    rows = [_row("a", 90.0, 80.0, 0.7), _row("b", 80.0, 190.0, 1.0), _row("c", 80.0, 140.0, 0.5),
            _row("c", 80.0, 140.0, 0.5, outcome="filtered")]
    change = fc.run_front_change(rows, sub)
    assert change.default == {"a", "b"} and change.dvfs == {"a", "b", "c"}
    assert change.entered == {"c"} and not change.left
    assert change.as_row() == {"front_dvfs": 3, "front_default": 2, "on_both": 2, "entered": 1, "left": 0}


def test_the_same_figures_change_nothing(fc):
    keys = ["a", "b", "c"]
    pts = np.array([[90.0, 100.0, 1.0], [80.0, 200.0, 1.0], [70.0, 50.0, 2.0]])
    change = fc.front_change(keys, pts, pts.copy())
    assert change.dvfs == change.default == {"a", "b"} and not change.entered and not change.left


def test_a_run_on_another_profile_is_refused(fc):
    with pytest.raises(fc.UsageError, match="another profile"):
        fc.run_front_change([_row("z", 50.0, 1.0, 1.0)], _sub({"a": (1.0, 1.0)}))


def test_summary_counts_runs_with_a_change(fc):
    per_run = [{"dataset": "cifar10", "method": "tpe", "front_dvfs": 3, "front_default": 2, "on_both": 2,
                "entered": 1, "left": 0},
               {"dataset": "cifar10", "method": "tpe", "front_dvfs": 2, "front_default": 2, "on_both": 2,
                "entered": 0, "left": 0}]
    (s,) = fc.summarise(per_run)
    assert s["runs"] == 2 and s["runs_changed"] == 1 and s["entered_mean"] == 0.5 and s["front_dvfs_mean"] == 2.5


@pytest.mark.parametrize("argv, fragment", [
    (["--runs", "cifar10"], "DATASET=FOLDER"),
    (["--runs", "cifar10=/nonexistent"], "no runs/*.csv.gz"),
])
def test_bad_input_is_one_line_and_exit_2(fc, capsys, tmp_path, argv, fragment):
    try:
        code = fc.main([*argv, "--out", str(tmp_path / "o")])
    except SystemExit as exc:  # a bad flag: the parser exits
        code = exc.code
    assert code == 2 and not (tmp_path / "o").exists()
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err and err.count("\n") == 1


def test_the_committed_readme_holds_the_committed_summary(fc):
    import csv
    from pathlib import Path

    out = Path(__file__).resolve().parents[1] / "results" / "dvfs_front_change"
    with (out / "summary.csv").open(newline="") as f:
        summary = list(csv.DictReader(f))
    readme = (out / "README.md").read_text()
    for s in summary:
        assert (f"| {s['dataset']} | {s['method']} | {s['runs']} | {float(s['front_dvfs_mean']):.1f} | "
                f"{float(s['front_default_mean']):.1f} | {float(s['entered_mean']):.2f} | "
                f"{float(s['left_mean']):.2f} | {s['runs_changed']} of {s['runs']} |") in readme
