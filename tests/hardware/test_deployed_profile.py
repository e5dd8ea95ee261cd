"""The recorded H200 profile of deployed networks (being re-recorded; shipped beside the default).

Every row must describe the network it names: the deployed network of its class, measured once
for every cell that deploys to it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from nasenergy import profile
from nasenergy.hardware.recorded import DEPLOYED_PROFILE, RecordedMeter, read_profile

search_spaces = pytest.importorskip("search_spaces")


@pytest.fixture(scope="module")
def deployed():
    space = search_spaces.get_space("tss")
    return RecordedMeter(DEPLOYED_PROFILE, space=space), space, read_profile(DEPLOYED_PROFILE)


def test_one_row_per_deployed_class_and_setting_named_by_its_smallest_member(deployed):
    _, space, rows = deployed
    keys = Counter((space.deployed_key(r["canonical_arch"]), r["precision"], r["batch_size"], r["input_shape"])
                   for r in rows)
    assert max(keys.values()) == 1
    for r in rows:
        arch = space.parse(r["canonical_arch"])
        assert space.deployed_representative(arch) == arch and int(r["arch_index"]) == space.index(arch)
        assert (r["precision"], r["batch_size"]) in {("fp16", "1024"), ("fp32", "256")}
        assert r["input_shape"] in _DATASET_OF_SHAPE


_DATASET_OF_SHAPE = {"3x32x32": ("cifar10", 10), "3x16x16": ("ImageNet16-120", 120)}
"""The input shapes a profile row may have, and the dataset (and its class count) each stands for."""


def test_rows_are_deployed_networks_with_counters_and_a_memory_format(deployed):
    _, space, rows = deployed
    for r in rows:
        arch = space.parse(r["canonical_arch"])
        dataset, n_classes = _DATASET_OF_SHAPE[r["input_shape"]]
        dep, official = space.count_deployed(arch, dataset), space.count(arch, dataset)
        assert r["network_form"] == "deployed" and r["source"] == "measured"
        assert int(r["params"]) == dep.params and int(r["params_official"]) == official.params
        # PyTorch's FLOP counter leaves out the classifier bias (2 FLOPs per class), NATS-Bench counts it
        assert float(r["flops_per_img"]) == pytest.approx(dep.flops - 2 * n_classes, rel=1e-6)
        assert float(r["flops_per_img_official"]) == pytest.approx(official.flops, rel=1e-6)
        assert r["memory_format"] in ("channels_last", "contiguous")
        assert r["counters_kind"] == "gpm" and 0 < float(r["sm_util_pct"]) <= 100
        assert 0 <= float(r["dram_bw_util_pct"]) <= 100


def test_one_steady_row_per_class_and_setting(deployed):
    """No class twice at a setting, and no row whose energy window left the GPU idle (a class may
    lack a setting until its left-out row is measured again)."""
    from nasenergy.hardware.energy_window import MIN_BUSY_FRAC
    from nasenergy.hardware.recorded import row_busy_fraction

    _, space, rows = deployed
    keys = [(r["canonical_arch"], r["precision"], r["input_shape"]) for r in rows]
    assert len(keys) == len(set(keys)) and {p for _, p, _ in keys} == {"fp16", "fp32"}
    for r in rows:
        assert row_busy_fraction(r) >= MIN_BUSY_FRAC, r["canonical_arch"]


def _members_differing_as_built(space, meter) -> tuple[str, str]:
    by_key = defaultdict(list)
    recorded = {space.deployed_key(r["canonical_arch"]) for r in meter.rows()}
    for arch in space.enumerate():
        key = space.deployed_key(arch)
        if key in recorded:
            by_key[key].append(arch)
    for members in by_key.values():
        params = {space.count(a).params: a for a in members}
        if len(params) > 1:
            a, b = list(params.values())[:2]
            return str(a), str(b)
    pytest.fail("no recorded deployed class has members that differ as built")


def test_members_of_a_class_replay_identical_figures_with_their_own_official_counts(deployed, capsys):
    meter, space, _ = deployed
    a, b = _members_differing_as_built(space, meter)
    outs = []
    for arch in (a, b):
        assert profile.main(["--hardware", "recorded", "--profile", str(DEPLOYED_PROFILE), "--arch", arch,
                             "--json"]) == 0
        (m,) = json.loads(capsys.readouterr().out)["measurements"]
        outs.append(m)
    first, second = outs
    assert first["params_official"] != second["params_official"]
    for name in ("throughput_img_per_s", "energy_j_per_img", "params", "flops_per_img", "utilization",
                 "memory_format", "sm_util_pct", "dram_bw_util_pct"):
        assert first[name] == second[name]
    assert first["network_form"] == second["network_form"] == "deployed"
    assert space.count(a).params == first["params_official"] and space.count(b).params == second["params_official"]
