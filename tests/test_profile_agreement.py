"""The agreement check of ``experiments/profile_tss_space.py remeasure``: its sample and its table."""

import csv

import pytest


@pytest.fixture
def mod(load_experiment):
    return load_experiment("profile_tss_space")


def test_a_stratified_pick_takes_one_from_each_stratum(mod):
    values = [float((7 * i) % 1000) for i in range(1000)]  # 0..999, shuffled
    pick = mod.stratified_pick(values, 100, seed=3)
    assert len(pick) == 100 == len(set(pick))
    assert sorted(int(values[i]) // 10 for i in pick) == list(range(100))  # one per tenth of a decile
    assert pick == mod.stratified_pick(values, 100, seed=3)
    assert pick != mod.stratified_pick(values, 100, seed=4)
    assert mod.stratified_pick(values[:5], 100, seed=0) == [0, 1, 2, 3, 4]


def test_a_random_pick_is_seeded(mod):
    a = mod.random_pick(50, 10, seed=1)
    assert a == sorted(a) and len(set(a)) == 10 and a == mod.random_pick(50, 10, seed=1)


def _row(mod, arch, precision, t_old, t_new, e_old, e_new):
    return {"precision": precision, **mod.agreement_row(arch, t_old, t_new, e_old, e_new, ("a", "b"), ("g1", "g2"))}


def test_the_agreement_table_has_each_precision_and_spearman(mod, tmp_path, capsys):
    rows = [_row(mod, f"x{i}", p, 100.0 + i, (100.0 + i) * (1.01 if p == "fp16" else 0.98), 1.0 + i, 1.0 + 2 * i)
            for i in range(5) for p in ("fp16", "fp32")]
    assert mod.write_agreement(tmp_path, rows, "five classes") == 0
    readme = (tmp_path / "README.md").read_text()
    assert "| fp16 throughput | 5 | 1.00 % | 1.00 % | 1.0000 |" in readme
    assert "| fp32 throughput | 5 | 2.00 % | 2.00 % | 1.0000 |" in readme
    assert "| fp16 energy | 5 |" in readme
    with open(tmp_path / "agreement.csv") as f:
        assert [r["precision"] for r in csv.DictReader(f)].count("fp32") == 5
    rows[0]["throughput_new"], rows[2]["throughput_new"] = rows[2]["throughput_new"], rows[0]["throughput_new"]
    mod.write_agreement(tmp_path, rows, "swapped")
    assert "| fp16 throughput | 5 | 1.00 % | 1.00 % | 0.9000 |" in (tmp_path / "README.md").read_text()


def test_rows_of_the_recording_board_and_of_others_get_their_own_lines(mod, tmp_path):
    rows = []
    for i in range(6):
        board = "g1" if i < 3 else "g2"  # g1 recorded every row; the last three were re-measured on g2
        factor = 1.0 if board == "g1" else 0.95
        rows.append({"precision": "fp16", **mod.agreement_row(f"x{i}", 100.0 + i, 100.0 + i, 1.0 + i,
                                                              (1.0 + i) * factor, ("a", "b"), ("g1", board))})
    assert mod.write_agreement(tmp_path, rows, "six classes") == 0
    readme = (tmp_path / "README.md").read_text()
    assert "| same board, fp16 energy | 3 | 0.00 % | 0.00 % | 1.0000 |" in readme
    assert "| other board, fp16 energy | 3 | 5.00 % | 5.00 % | 1.0000 |" in readme
    mod.write_agreement(tmp_path, rows[3:], "other boards only")
    assert "same board" not in (tmp_path / "README.md").read_text()


def test_nothing_to_compare_is_a_one_line_error(mod, tmp_path, capsys):
    assert mod.write_agreement(tmp_path, [], "none") == 2
    assert capsys.readouterr().err.strip() == "error: no network is in both measurements"


def test_remeasure_without_a_gpu_is_a_one_line_error(mod, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert mod.main(["remeasure", "5", "--dataset", "ImageNet16-120", "--stratify"]) == 2
    assert capsys.readouterr().err.strip() == "error: re-measuring needs a CUDA GPU"


def test_remeasure_measures_the_stratified_classes_in_their_recorded_settings(mod, monkeypatch, tmp_path):
    import torch

    from nasenergy.hardware.cuda_formats import HostCopies
    from nasenergy.testing import FakeMeter

    class BoardMeter(FakeMeter):  # the CUDA meter's surface that remeasure reads
        nvml_device, energy_window_s, energy_repeats = None, 0.28, 1

        def measure(self, model, input_shape, **kw):
            return super().measure(model.model if isinstance(model, HostCopies) else model, input_shape, **kw)

        def close(self):
            pass

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(mod, "CudaMeter", lambda **kw: BoardMeter.board(1, throughput_factor=1.1))
    out = tmp_path / "agree"
    assert mod.main(["remeasure", "3", "--dataset", "ImageNet16-120", "--precisions", "fp16,fp32", "--stratify",
                     "--seed", "5", "--out", str(out)]) == 0
    with open(out / "agreement.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["precision"] for r in rows) == ["fp16"] * 3 + ["fp32"] * 3
    recorded = {(r["canonical_arch"], r["precision"]): r for r in mod.read_profile(mod.DEPLOYED_PROFILE)
                if r["input_shape"] == "3x16x16"}
    for r in rows:
        old = recorded[(r["canonical_arch"], r["precision"])]  # a 16x16 row of the shipped profile
        assert float(r["throughput_old"]) == float(old["throughput_img_per_s"])
        assert r["measured_old"] == old["measured_at"] and r["gpu_uuid_new"] == "GPU-fake-0001"
    tputs = sorted(float(recorded[(a, "fp16")]["throughput_img_per_s"]) for a, p in recorded if p == "fp16")
    picked = sorted(float(r["throughput_old"]) for r in rows if r["precision"] == "fp16")
    thirds = [tputs[len(tputs) // 3], tputs[2 * len(tputs) // 3]]
    assert picked[0] <= thirds[0] <= picked[1] <= thirds[1] <= picked[2]  # one from each third
    assert "3 classes (a throughput-stratified sample of the" in (out / "README.md").read_text()


def test_spearman_is_nan_where_undefined_and_warns_nothing(mod):
    import math
    import warnings

    from experiments.lib.profile_rows import spearman

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
        assert math.isnan(spearman([1.0, 2.0], [2.0, 1.0]))
        assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
