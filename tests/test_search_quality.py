"""experiments/search_quality.py: the quality and regret curves, the evaluations-to-reach factor
with its interval, the declared seeds, and one-line errors for bad flags.

The subspace here is a small synthetic one built by hand (made-up figures), so the right answers
are known exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nasenergy.quality import DeployRegion

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "search_quality.py"


@pytest.fixture(scope="module")
def sq(load_experiment):
    return load_experiment("search_quality")


POINTS = np.array([
    [90.0, 100.0, 0.004],  # accurate, slow, hungry
    [80.0, 1000.0, 0.001],  # middle
    [60.0, 10000.0, 0.0001],  # fast, frugal, below the floor
    [85.0, 200.0, 0.003],  # between the first two: dominated by neither
])


def _truth(sq):
    region = DeployRegion(70.0, 50.0, 0.008)
    keys = ["a", "b", "c", "d"]
    return sq.Truth("toy", region, keys, POINTS, region.volume(POINTS, sq.OBJECTIVES), {"a", "b", "d"})


def test_the_held_out_seeds_are_declared_apart_from_the_tuning_seeds(sq):
    assert len(sq.HELD_OUT_SEEDS) >= 20
    assert not set(sq.HELD_OUT_SEEDS) & set(sq.TUNING_SEEDS)
    assert sq._seeds(None) == list(sq.HELD_OUT_SEEDS)


def test_every_rival_of_the_comparison_is_a_method(sq):
    assert {"random", "tpe", "nsga2", "threshold", "free", "proxies", "default"} <= set(sq.METHODS)
    for study in sq.STUDIES.values():
        assert set(study.methods) <= set(sq.METHODS) and sq.BASELINE in study.methods


def test_the_quality_curve_reaches_one_with_the_whole_front_and_holds_after_a_stop(sq):
    truth = _truth(sq)
    curve = sq.quality_curve(truth, POINTS[[2, 0, 1, 3]], budget=6)
    assert curve[0] == 0.0  # below the floor: nothing
    assert 0 < curve[1] < curve[2] < curve[3]
    assert curve[3] == pytest.approx(1.0)
    assert curve[5] == curve[3]  # a run that stopped keeps its last value


def test_the_regret_curve_falls_to_zero_when_every_budget_is_met(sq):
    truth = _truth(sq)
    limits = sq.regret_limits(truth, n=4)
    start = sq.regret_curve(truth, np.empty((0, 3)), limits, budget=3)
    assert np.all(start > 0)
    full = sq.regret_curve(truth, POINTS, limits, budget=4)
    assert full[-1] == pytest.approx(0.0)
    assert np.all(np.diff(full) <= 1e-12)  # regret never grows


def test_the_regret_curve_ends_where_the_library_regret_profile_does(sq):
    from nasenergy.quality import regret_profile

    truth = _truth(sq)
    limits = sq.regret_limits(truth)
    for rows in ([1], [0, 3], [2, 3, 1]):
        found = POINTS[rows]
        expected = regret_profile(found, POINTS, sq.OBJECTIVES, truth.region).mean_regret_pt
        assert sq.regret_curve(truth, found, limits, budget=len(found))[-1] == pytest.approx(expected)


def test_evals_to_reach_and_never(sq):
    curve = np.array([0.1, 0.5, 0.9, 0.95])
    assert sq.evals_to_reach(curve, 0.5) == 2
    assert sq.evals_to_reach(curve, 0.96) is None


def test_a_method_twice_as_fast_gets_factor_two_and_a_slower_one_never(sq):
    n = np.arange(1, 201)
    base = np.tile(1 - 1 / n, (5, 1))  # the baseline's curve
    fast = np.tile(1 - 1 / (2 * n), (5, 1))  # reaches base(k) at k/2
    slow = np.tile(0.5 * (1 - 1 / n), (5, 1))
    rng = np.random.default_rng(0)
    needed, factor, lo, hi, never = sq.factor_with_interval(fast, base, 100, rng, n_boot=50)
    assert needed == 50 and factor == pytest.approx(2.0) and lo == pytest.approx(2.0) and never == 0
    needed, factor, lo, hi, never = sq.factor_with_interval(slow, base, 100, rng, n_boot=50)
    assert needed is None and factor == 0 and never == 1.0


@pytest.mark.parametrize("args", [["--studies", "nope"], ["--methods", "magic"], ["--seeds", "x-y"], ["--jobs", "0"]])
def test_bad_flags_give_one_line_and_exit_2(args, tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def test_the_proxies_profile_keeps_the_networks_the_proxy_table_holds(sq, tmp_path):
    """Written once under the work folder: the shipped profile's rows of the networks whose
    proxies the shipped table holds (all of them for CIFAR-10)."""
    import csv
    import gzip

    from nasenergy.hardware.recorded import RecordedMeter

    path = sq.proxies_profile("cifar10", tmp_path)
    assert path.parent == tmp_path and path.is_file()
    with gzip.open(path, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) > 0 and len(rows) <= sum(1 for _ in RecordedMeter().rows())
    assert sq.proxies_profile("cifar10", tmp_path) == path  # the second call reads the file written


def test_the_size_space_studies_search_the_size_space_with_every_rival(sq):
    """The ``sss-*`` studies run every rival of the topology space's studies on ``--space sss``; a
    plain run leaves them out."""
    tss_rivals = set(sq.STUDIES["cifar10"].methods)
    for name in ("sss-cifar10", "sss-cifar100", "sss-ImageNet16-120"):
        study = sq.STUDIES[name]
        assert study.space == "sss" and tss_rivals <= set(study.methods)
        config = sq.config_for(study, "default", 100, None, None).validate()
        assert config.space == "sss" and config.dataset == study.dataset
    assert not any(n.startswith("sss-") for n in sq.TSS_STUDIES)
    assert sq.build_parser().parse_args([]).studies == ",".join(sq.TSS_STUDIES)


def test_a_method_whose_name_holds_a_dot_keeps_its_own_run_files(sq, tmp_path):
    csv_a, json_a = sq.run_files(tmp_path, "sss-cifar10", "recall0.8", 1)
    csv_b, json_b = sq.run_files(tmp_path, "sss-cifar10", "recall0.8", 2)
    assert csv_a.name == "recall0.8_s001.csv.gz" and json_a.name == "recall0.8_s001.json"
    assert len({csv_a, json_a, csv_b, json_b}) == 4
