"""experiments/train_benchmark.py on the CPU at toy sizes: every stage writes its rows, both loops
run on the same networks, and a rerun resumes (adds no row)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments"))

import train_benchmark  # noqa: E402


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
def test_every_stage_writes_rows_and_a_rerun_resumes(tmp_path: Path) -> None:
    args = ["--out", str(tmp_path), "--device", "cpu", "--networks", "2", "--epochs", "1", "--images", "64",
            "--slots", "1", "--parity-seeds", "100", "--parity-epochs", "1", "--fidelity-networks", "2",
            "--fidelity-images", "64", "--stages", "speed,pack,parity,fidelity"]
    assert train_benchmark.main(args) == 0
    speed = _rows(tmp_path / "speed.csv")
    assert sorted({r["loop"] for r in speed}) == ["plain", "trainer"] and len(speed) == 4
    assert {r["arch"] for r in speed if r["loop"] == "plain"} == {r["arch"] for r in speed if r["loop"] == "trainer"}
    assert all(float(r["wall_s"]) > 0 for r in speed)
    assert len(_rows(tmp_path / "pack.csv")) == 1 and len(_rows(tmp_path / "pack_networks.csv")) == 2
    parity = _rows(tmp_path / "parity.csv")
    assert len(parity) == 4  # 2 networks x 1 seed x 2 loops
    fidelity = _rows(tmp_path / "fidelity.csv")
    assert len(fidelity) == 4 and all(0 <= int(r["arch_index"]) < 1000 for r in fidelity)
    sizes = {p.name: p.stat().st_size for p in tmp_path.glob("*.csv")}
    assert train_benchmark.main(args) == 0
    assert {p.name: p.stat().st_size for p in tmp_path.glob("*.csv")} == sizes


def test_the_networks_span_the_space_and_the_fidelity_sample_is_distinct() -> None:
    from search_spaces import get_space

    space = get_space("tss")
    nets = train_benchmark.spanning_networks(5)
    flops = [space.count_deployed(a, "cifar10").flops for a in nets]
    assert flops == sorted(flops) and flops[0] < flops[-1] / 10
    sample = train_benchmark.fidelity_networks(20)
    assert len({space.deployed_key(a) for _, a in sample}) == 20 and all(i < 1000 for i, _ in sample)


def test_fidelity_is_the_rank_correlation_with_nats_recorded_epoch_times(tmp_path: Path) -> None:
    import json

    from shared_files import require_shared

    require_shared("nats_tss_first1000_train_time__nats_bench_extractor.csv.gz")
    import train_fidelity

    recorded = train_fidelity.recorded_epoch_s()
    cells = sorted(recorded)[:30]
    path = tmp_path / "fidelity.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["loop", "arch", "seed", "slots", "arch_index", "epoch_s", "device_name"])
        writer.writeheader()
        for i in cells:  # times proportional to the recorded ones: a rank correlation of 1
            writer.writerow({"loop": "trainer", "arch": "a", "seed": 0, "slots": 1, "arch_index": i,
                             "epoch_s": 0.01 * recorded[i], "device_name": "test"})
    assert train_fidelity.main([str(path)]) == 0
    summary = json.loads((tmp_path / "fidelity_summary.json").read_text())
    assert summary["networks"] == 30 and summary["spearman"] > 0.999
    assert abs(summary["median_ratio_ours_over_recorded"] - 0.01) < 1e-9
