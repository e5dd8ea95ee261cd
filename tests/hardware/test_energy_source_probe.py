"""The energy-source probe's analysis (the measuring part needs a GPU)."""

from __future__ import annotations

import pytest


@pytest.fixture
def probe(load_experiment):
    return load_experiment("energy_source_probe")


def _rows(source, p, arch, energies, cost=0.1):
    return [{"source": source, "pass": p, "arch_index": arch, "window": k, "energy_j_per_img": e, "cost_s": cost}
            for k, e in enumerate(energies)]


def test_summarise_compares_each_source_with_its_pass_reference_and_the_other_pass(probe):
    rows = []
    for p in (0, 1):
        rows += _rows("reference", p, 7, [1.0])
        rows += _rows("reference", p, 9, [2.0])
    rows += _rows("instant", 0, 7, [1.10, 1.02, 1.04])  # median 1.04: 4 % off
    rows += _rows("instant", 1, 7, [0.98])              # 2 % off; passes differ by 1.04/0.98
    rows += _rows("instant", 0, 9, [2.0])
    rows += _rows("instant", 1, 9, [2.2])
    by = {r["source"]: r for r in probe.summarise(rows)}
    inst = by["instant"]
    assert inst["classes"] == 2
    assert inst["vs_reference_worst_pct"] == "10.00"          # class 9, pass 1
    assert inst["vs_reference_median_pct"] == "3.00"          # of 4, 2, 0, 10
    assert inst["pass_to_pass_worst_pct"] == f"{100 * 0.2 / 2.2:.2f}"
    assert by["reference"]["vs_reference_median_pct"] == ""
    assert "counter_1tick" not in by
    first = by["instant_first"]  # the first window alone: 1.10 (not the median 1.04) for class 7, pass 0
    assert first["vs_reference_worst_pct"] == "10.00"
    assert first["pass_to_pass_worst_pct"] == f"{100 * 0.12 / 0.98:.2f}"


def test_run_refuses_without_a_gpu(probe, capsys, tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert probe.main(["run", "--out", str(tmp_path)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_step_rows_are_seconds_after_the_start(probe):
    rows = probe.step_rows([(1_000_020_000, 250.04), (1_000_040_000, 390.0)], 1000.0)
    assert rows == [{"t_s": "0.0200", "power_w": "250.0"}, {"t_s": "0.0400", "power_w": "390.0"}]
