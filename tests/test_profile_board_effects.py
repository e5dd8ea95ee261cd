"""experiments/profile_board_effects.py recovers a board offset planted in synthetic profile rows."""

from __future__ import annotations

import numpy as np
import pytest

OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")


def _rows(offset: float, seed: int = 0) -> list[dict[str, str]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(400):
        ops = rng.choice(OPS, size=6)
        arch = "|{}~0|+|{}~0|{}~1|+|{}~0|{}~1|{}~2|".format(*ops)
        flops = float(rng.uniform(1e7, 4e8))
        board = "GPU-a" if i % 3 else "GPU-b"  # GPU-a has the most rows: the reference
        cost = flops * (1.0 + 0.2 * float(np.sum(ops == "nor_conv_3x3")))
        energy = 1e-11 * cost * (1 + offset if board == "GPU-b" else 1.0) * float(np.exp(rng.normal(0, 0.01)))
        rows.append({"canonical_arch": arch, "precision": "fp16", "gpu_uuid": board, "flops_per_img": str(flops),
                     "params": str(flops / 300), "memory_format": "contiguous", "energy_j_per_img": str(energy),
                     "throughput_img_per_s": str(1e13 / cost)})
    return rows


@pytest.mark.parametrize("offset", [0.0, -0.04, 0.03])
def test_planted_board_offset_is_recovered(load_experiment, offset: float) -> None:
    mod = load_experiment("profile_board_effects")
    table = mod.board_effects(_rows(offset), "fp16")
    energy_b = next(e for e in table if e["quantity"] == "energy_j_per_img" and e["board"] == "GPU-b")
    tput_b = next(e for e in table if e["quantity"] == "throughput_img_per_s" and e["board"] == "GPU-b")
    assert energy_b["reference_board"] == "GPU-a"
    assert energy_b["effect_pct"] == pytest.approx(100 * offset, abs=0.3)
    assert tput_b["effect_pct"] == pytest.approx(0.0, abs=0.3)


def test_one_board_gives_no_effects(load_experiment) -> None:
    mod = load_experiment("profile_board_effects")
    rows = [r for r in _rows(0.0) if r["gpu_uuid"] == "GPU-a"]
    assert mod.board_effects(rows, "fp16") == []


def test_paired_offsets_are_per_board_and_network(load_experiment) -> None:
    mod = load_experiment("profile_board_effects")
    profile = _rows(0.0)
    reference = []
    for r in profile[:30]:
        for board, factor in (("GPU-x", 0.97), ("GPU-y", 1.02)):
            reference.append({**r, "gpu_uuid": board, "energy_j_per_img": str(float(r["energy_j_per_img"]) * factor)})
    reference.append({**profile[0], "canonical_arch": "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|x"})  # not in the profile
    table = {(e["quantity"], e["board"]): e for e in mod.paired_offsets(profile[:30], reference)}
    assert table[("energy_j_per_img", "GPU-x")]["median_ratio_pct"] == pytest.approx(-3.0, abs=1e-6)
    assert table[("energy_j_per_img", "GPU-y")]["median_ratio_pct"] == pytest.approx(2.0, abs=1e-6)
    assert table[("throughput_img_per_s", "GPU-x")]["median_ratio_pct"] == pytest.approx(0.0, abs=1e-9)
    assert table[("energy_j_per_img", "GPU-x")]["pairs"] == 30


def test_paired_offsets_pair_only_rows_of_the_same_input(load_experiment) -> None:
    mod = load_experiment("profile_board_effects")
    big = [{**r, "input_shape": "3x32x32"} for r in _rows(0.0)[:20]]
    small = [{**r, "input_shape": "3x16x16", "energy_j_per_img": str(float(r["energy_j_per_img"]) / 4)} for r in big]
    reference = [{**r, "gpu_uuid": "GPU-x", "energy_j_per_img": str(float(r["energy_j_per_img"]) * 1.01)} for r in small]
    table = mod.paired_offsets(big + small, reference)
    assert {(e["input_shape"], e["quantity"]) for e in table} == {("3x16x16", "energy_j_per_img"),
                                                                 ("3x16x16", "throughput_img_per_s")}
    energy = next(e for e in table if e["quantity"] == "energy_j_per_img")
    assert energy["median_ratio_pct"] == pytest.approx(1.0, abs=1e-6) and energy["pairs"] == 20


def test_board_effects_fit_one_input_at_a_time(load_experiment) -> None:
    mod = load_experiment("profile_board_effects")
    big = [{**r, "input_shape": "3x32x32"} for r in _rows(0.0)]
    small = [{**r, "input_shape": "3x16x16"} for r in _rows(-0.05, seed=1)]
    (energy_b,) = [e for e in mod.board_effects(big + small, "fp16", "3x16x16")
                   if e["quantity"] == "energy_j_per_img" and e["board"] == "GPU-b"]
    assert energy_b["input_shape"] == "3x16x16"
    assert energy_b["effect_pct"] == pytest.approx(-5.0, abs=0.3)
