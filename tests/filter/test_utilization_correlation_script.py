"""experiments/utilization_correlation.py on a synthetic profile written to a temporary folder.

The profile's figures are made up here (``source="modelled"``) so that the right answer is known:
each class's utilization is its mean 200-epoch CIFAR-10 accuracy / 100, so the class-level
Spearman correlation must be exactly 1 if (and only if) cells are joined to the right classes.
"""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware.recorded import measurement_to_row, write_profile
from nasenergy.measurement import Measurement
from shared_files import shared_glob


@pytest.fixture(scope="module")
def script(load_experiment):
    return load_experiment("utilization_correlation")


def _measurement(util: float, precision: str = "fp16", batch_size: int = 1024) -> Measurement:
    return Measurement(
        device_name="synthetic", precision=precision, batch_size=batch_size, input_shape=(3, 32, 32),
        throughput_img_per_s=1000.0, latency_ms_per_batch=1.0, macs_per_img=1.0, flops_per_img=2.0,
        params=1, peak_flops_per_s=1.0, peak_source="datasheet", utilization=util,
        energy_j_per_img=None, energy_basis="unavailable", avg_power_w=None, idle_power_w=None,
        sm_clock_mhz=None, n_repeats=1, throughput_cv=0.0, energy_cv=None, measure_cost_s=0.0,
        source="modelled",
    )


def _row(canon: str, util: float, **kw) -> dict[str, str]:
    return measurement_to_row(
        _measurement(util, **kw), canonical_arch=canon, arch_index=0, driver_version="none",
        torch_version="none", measured_at="1970-01-01T00:00:00Z",
    )


@pytest.fixture(scope="module")
def data_dir(script) -> Path:
    """The shared folder holding the 12- and 200-epoch tables the script reads."""
    for pattern in script.ACCURACY_GLOBS.values():
        folder = shared_glob(pattern).parent
    return folder


@pytest.fixture(scope="module")
def classes(data_dir):
    """Mean 200-epoch CIFAR-10 accuracy of 300 random classes (from the shared table)."""
    from search_spaces import get_space

    space = get_space("tss")
    path = sorted(data_dir.glob("nb201_hp200_test_acc__*.csv.gz"))[0]
    members = defaultdict(list)
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            members[str(space.canonical(space.parse(row["arch_str"])))].append(float(row["cifar10_test_acc_200ep"]))
    names = sorted(members)
    pick = np.random.default_rng(0).choice(len(names), 300, replace=False)
    return {names[i]: (float(np.mean(members[names[i]])), len(members[names[i]])) for i in pick}


def test_join_recovers_a_known_perfect_correlation(script, classes, data_dir, tmp_path) -> None:
    profile = tmp_path / "profile.csv.gz"
    write_profile([_row(c, acc / 100) for c, (acc, _) in classes.items()], profile)
    rows = script.run(profile, tmp_path / "out", data_dir, None, None)
    assert len(rows) == 3 * 2 * 2 * 3
    get = {(r.dataset, r.epochs, r.level, r.predictor): r for r in rows}
    exact = get[("cifar10", 200, "class", "utilization")]
    assert exact.n == 300
    assert exact.spearman_rho == pytest.approx(1.0)
    assert exact.kendall_tau == pytest.approx(1.0)
    assert exact.predictor_source == "modelled"
    cell = get[("cifar10", 200, "cell", "utilization")]
    assert cell.n == sum(n for _, n in classes.values())
    assert 0.5 < cell.spearman_rho < 1.0  # cells of a class share one utilization
    assert get[("ImageNet16-120", 12, "class", "flops_per_img")].profile_input_shape == "3x32x32"
    out = tmp_path / "out"
    with open(out / "correlations.csv") as f:
        assert len(list(csv.DictReader(f))) == 36
    assert (out / "scatter.png").stat().st_size > 10_000
    readme = (out / "README.md").read_text()
    assert "modelled" in readme and "| cifar10 | 200 | 1.000 |" in readme


def test_unrelated_utilization_gives_no_correlation(script, classes, data_dir, tmp_path) -> None:
    rng = np.random.default_rng(1)
    profile = tmp_path / "profile.csv"
    write_profile([_row(c, float(rng.uniform())) for c in classes], profile)
    rows = script.run(profile, tmp_path / "out", data_dir, None, None)
    for r in rows:
        if r.predictor == "utilization" and r.level == "class":
            assert abs(r.spearman_rho) < 0.2


def test_missing_profile_is_a_one_line_error(script, tmp_path, capsys) -> None:
    code = script.main(["--profile", str(tmp_path / "nope.csv.gz"), "--out", str(tmp_path / "o"),
                        "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: profile not found") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_profile_setting_selection(script) -> None:
    rows = [_row("a", 0.1), _row("b", 0.2), _row("a", 0.3, precision="fp32", batch_size=256)]
    sel = script.select_profile(rows, None, None)
    assert (sel.precision, sel.batch_size, sel.source) == ("fp16", 1024, "modelled")
    assert sel.utilization == {("a", "3x32x32"): pytest.approx(0.1), ("b", "3x32x32"): pytest.approx(0.2)}
    assert script.select_profile(rows, "fp32", None).utilization == {("a", "3x32x32"): pytest.approx(0.3)}
    with pytest.raises(UsageError, match="several settings"):
        script.select_profile(rows[:1] + rows[2:], None, None)
    with pytest.raises(UsageError, match="two rows"):
        script.select_profile([_row("a", 0.1), _row("a", 0.2)], None, None)
    with pytest.raises(UsageError):
        script.select_profile(rows, "bf16", None)


def test_a_profile_of_deployed_networks_joins_cells_by_deployed_network(script, data_dir, tmp_path) -> None:
    """Rows keyed by deployed representatives, each with its deployed class's mean accuracy / 100:
    exact only if cells are joined by deployed network (not by canonical class)."""
    import dataclasses

    from search_spaces import get_space

    space = get_space("tss")
    path = sorted(data_dir.glob("nb201_hp200_test_acc__*.csv.gz"))[0]
    members = defaultdict(list)
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            rep = str(space.deployed_representative(space.parse(row["arch_str"])))
            members[rep].append(float(row["cifar10_test_acc_200ep"]))
    names = sorted(members)
    pick = [names[i] for i in np.random.default_rng(2).choice(len(names), 300, replace=False)]
    rows = [measurement_to_row(dataclasses.replace(_measurement(float(np.mean(members[n])) / 100),
                                                   network_form="deployed"),
                               canonical_arch=n, arch_index=0, driver_version="none", torch_version="none",
                               measured_at="1970-01-01T00:00:00Z") for n in pick]
    profile = tmp_path / "deployed.csv.gz"
    write_profile(rows, profile)
    got = {(r.dataset, r.epochs, r.level, r.predictor): r for r in script.run(profile, tmp_path / "out", data_dir, None, None)}
    exact = got[("cifar10", 200, "class", "utilization")]
    assert exact.n == 300 and exact.spearman_rho == pytest.approx(1.0)
    assert got[("cifar10", 200, "cell", "utilization")].n == sum(len(members[n]) for n in pick)
    assert "deployed network (`space.deployed_key`)" in (tmp_path / "out" / "README.md").read_text()
