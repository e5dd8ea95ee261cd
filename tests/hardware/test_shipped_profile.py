"""The recorded H200 profiles shipped in `nasenergy/data`: the default (deployed networks) answers
every cell of a recorded deployed class, at both settings, with that class's one row, and refuses
the others; the data README states the coverage the file really has; the as-built profile stays
beside it."""

from __future__ import annotations

import re

import pytest

from nasenergy.hardware.recorded import (
    AS_BUILT_PROFILE,
    DEFAULT_PROFILE,
    NotRecordedError,
    RecordedMeter,
    default_profile,
    read_profile,
)

search_spaces = pytest.importorskip("search_spaces")

SETTINGS = (("fp16", 1024), ("fp32", 256))


@pytest.fixture(scope="module")
def shipped():
    if not DEFAULT_PROFILE.is_file():
        pytest.fail(f"the shipped profile is missing: {DEFAULT_PROFILE}")
    space = search_spaces.get_space("tss")
    return RecordedMeter(space=space), space


def _recorded_keys(meter: RecordedMeter, space, precision: str, input_shape: str = "3x32x32") -> set[str]:
    return {space.deployed_key(r["canonical_arch"]) for r in meter.rows()
            if r["precision"] == precision and r["input_shape"] == input_shape}


def test_the_default_tss_profile_is_the_deployed_one(shipped):
    meter, _ = shipped
    assert default_profile("tss") == DEFAULT_PROFILE and meter.path == DEFAULT_PROFILE
    assert meter.network_form == "deployed"
    assert {(p, b) for p, b, _ in meter.settings} == set(SETTINGS)


@pytest.mark.parametrize("precision,batch_size", SETTINGS)
def test_every_cell_of_a_recorded_class_replays_its_class_row_and_no_other(shipped, precision, batch_size):
    meter, space = shipped
    recorded = _recorded_keys(meter, space, precision)
    by_key: dict[str, tuple[float, float, int]] = {}
    refused = 0
    for arch in space.enumerate():
        key = space.deployed_key(arch)
        if key not in recorded:
            with pytest.raises(NotRecordedError):
                meter.measure_arch(arch, precision=precision, batch_size=batch_size)
            refused += 1
            continue
        m = meter.measure_arch(arch, precision=precision, batch_size=batch_size)
        assert m.source == "recorded" and (m.precision, m.batch_size) == (precision, batch_size)
        assert m.network_form == "deployed" and 0 < m.utilization < 1
        assert m.params_official == space.count(arch).params  # the cell's own as-built count
        figures = (m.throughput_img_per_s, m.energy_j_per_img, m.params)
        assert by_key.setdefault(key, figures) == figures  # one row for every member
    assert set(by_key) == recorded and refused + sum(
        1 for a in space.enumerate() if space.deployed_key(a) in recorded) == space.size


def test_the_data_readme_states_the_real_coverage(shipped):
    meter, space = shipped
    text = (DEFAULT_PROFILE.parent / "README.md").read_text()
    n_classes = len(list(space.deployed_classes()))
    fp16, fp32 = (_recorded_keys(meter, space, p) for p, _ in SETTINGS)
    stated = re.search(r"\*\*Coverage: ([\d,]+) of ([\d,]+) deployed classes \(each at fp16 and fp32; ([\d,]+) rows\)\*\*",
                       text)
    assert stated, "the data README no longer states the deployed profile's coverage"
    n_rows = sum(1 for r in meter.rows() if r["input_shape"] == "3x32x32")
    assert [int(g.replace(",", "")) for g in stated.groups()] == [len(fp16), n_classes, n_rows]
    assert fp16 == fp32  # every recorded class at both settings


def test_the_data_readme_states_the_real_imagenet16_coverage(shipped):
    """The 16x16 rows (ImageNet16-120's input) are recorded in sessions; the README says how far."""
    meter, space = shipped
    text = (DEFAULT_PROFILE.parent / "README.md").read_text()
    n_classes = len(list(space.deployed_classes()))
    fp16, fp32 = (_recorded_keys(meter, space, p, "3x16x16") for p, _ in SETTINGS)
    stated = re.search(r"\*\*ImageNet16-120 coverage \(3x16x16\): ([\d,]+) of ([\d,]+) deployed classes at fp16 "
                       r"and ([\d,]+) at fp32 \(([\d,]+) rows\)\*\*", text)
    assert stated, "the data README no longer states the 16x16 coverage"
    n_rows = sum(1 for r in meter.rows() if r["input_shape"] == "3x16x16")
    assert [int(g.replace(",", "")) for g in stated.groups()] == [len(fp16), n_classes, len(fp32), n_rows]


def test_the_as_built_profile_labels_whose_figures_it_replays():
    # arch 14174's class representative (2676) has fewer params as built than 14174 itself: the row is
    # the representative's, and the measurement says so next to the arch's own official counts
    space = search_spaces.get_space("tss")
    meter = RecordedMeter(AS_BUILT_PROFILE, space=space)
    m = meter.measure_arch(space.arch_at(14174), precision="fp16", batch_size=1024)
    assert m.network_form == "as_built"
    assert m.params == space.count(space.canonical(space.arch_at(14174))).params == 587_386
    assert m.params_official == space.count(space.arch_at(14174)).params == 830_426
    classes = {r["canonical_arch"] for r in read_profile(AS_BUILT_PROFILE) if r["precision"] == "fp16"}
    assert len(classes) == 6466  # every NAS-Bench-201 class at fp16


def test_the_shipped_profiles_stay_under_4_mib_in_all():
    """Three datasets' inputs (32x32 and 16x16) of every deployed TSS network at two settings, the
    SSS sample and the as-built profile: the package stays a quick install."""
    files = sorted(DEFAULT_PROFILE.parent.glob("h200_*profile*.csv.gz"))
    assert DEFAULT_PROFILE in files and AS_BUILT_PROFILE in files
    total = sum(p.stat().st_size for p in files)
    assert total < 4 * 1024 * 1024, {p.name: p.stat().st_size for p in files}


def test_the_sss_profile_is_a_seeded_sample_of_deployed_networks_as_the_readme_states():
    space = search_spaces.get_space("sss")
    meter = RecordedMeter(default_profile("sss"), space=space)
    all_rows = list(meter.rows())
    assert meter.network_form == "deployed"
    assert len({(r["canonical_arch"], r["input_shape"]) for r in all_rows}) == len(all_rows)  # one row per configuration and input
    assert {(r["precision"], int(r["batch_size"])) for r in all_rows} == {("fp16", 1024)}
    assert {r["input_shape"] for r in all_rows} <= {"3x32x32", "3x16x16"}
    rows = [r for r in all_rows if r["input_shape"] == "3x32x32"]
    configs = {r["canonical_arch"] for r in rows}
    text = (DEFAULT_PROFILE.parent / "README.md").read_text()
    stated = re.search(r"\*\*SSS coverage: ([\d,]+) of ([\d,]+) configurations \(fp16, batch 1024\)\*\*", text)
    assert stated, "the data README no longer states the SSS profile's coverage"
    assert [int(g.replace(",", "")) for g in stated.groups()] == [len(rows), space.size]
    # ImageNet16-120's input: the first configurations of the same seeded order, as the README states
    small = [r for r in all_rows if r["input_shape"] == "3x16x16"]
    stated = re.search(r"\*\*SSS ImageNet16-120 coverage \(3x16x16\): ([\d,]+) of ([\d,]+) configurations "
                       r"\(fp16, batch 1024\)\*\*", text)
    assert stated, "the data README no longer states the SSS profile's 16x16 coverage"
    assert [int(g.replace(",", "")) for g in stated.groups()] == [len(small), space.size]
    assert {r["canonical_arch"] for r in small} <= configs
    arch = space.arch_at(int(rows[0]["arch_index"]))
    m = meter.measure_arch(arch, batch_size=1024, precision="fp16")
    assert m.throughput_img_per_s == float(rows[0]["throughput_img_per_s"])
    missing = next(a for a in space.enumerate() if str(a) not in configs)
    with pytest.raises(NotRecordedError):
        meter.measure_arch(missing, batch_size=1024, precision="fp16")
