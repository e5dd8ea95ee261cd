"""The recorded H200 profile shipped in `nasenergy/data`: every TSS cell is answered through its
canonical form, and the data README states the coverage the file really has."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from nasenergy.hardware.recorded import DEFAULT_PROFILE, NotRecordedError, RecordedMeter

search_spaces = pytest.importorskip("search_spaces")

N_CLASSES = 6466


@pytest.fixture(scope="module")
def shipped():
    if not DEFAULT_PROFILE.is_file():
        pytest.fail(f"the shipped profile is missing: {DEFAULT_PROFILE}")
    space = search_spaces.get_space("tss")
    return RecordedMeter(space=space), space


def _classes(meter: RecordedMeter, precision: str) -> set[str]:
    return {r["canonical_arch"] for r in meter.rows() if r["precision"] == precision}


def test_every_cell_is_answered_at_fp16_through_its_canonical_form(shipped):
    meter, space = shipped
    assert len(_classes(meter, "fp16")) == N_CLASSES
    by_class: dict[str, tuple[float, float]] = {}
    for arch in space.enumerate():
        m = meter.measure_arch(arch, precision="fp16", batch_size=1024)
        assert m.source == "recorded" and m.precision == "fp16" and m.batch_size == 1024
        assert m.throughput_img_per_s > 0 and m.energy_j_per_img > 0 and 0 < m.utilization < 1
        figures = (m.throughput_img_per_s, m.energy_j_per_img)
        # All members of a class replay the one row of their canonical form.
        assert by_class.setdefault(str(space.canonical(arch)), figures) == figures
    assert len(by_class) == N_CLASSES


def test_fp32_rows_answer_exactly_the_cells_of_their_classes(shipped):
    meter, space = shipped
    fp32 = _classes(meter, "fp32")
    answered = 0
    for arch in space.enumerate():
        if str(space.canonical(arch)) in fp32:
            assert meter.measure_arch(arch, precision="fp32", batch_size=256).precision == "fp32"
            answered += 1
        else:
            with pytest.raises(NotRecordedError):
                meter.measure_arch(arch, precision="fp32", batch_size=256)
    assert len(fp32) == 0 or answered >= len(fp32)


def test_one_row_per_class_and_setting(shipped):
    meter, _ = shipped
    keys = Counter((r["canonical_arch"], r["precision"], r["batch_size"]) for r in meter.rows())
    assert set(keys.values()) == {1}
    assert {(r["precision"], r["batch_size"]) for r in meter.rows()} <= {("fp16", "1024"), ("fp32", "256")}


def test_the_data_readme_states_the_real_coverage(shipped):
    meter, space = shipped
    text = (DEFAULT_PROFILE.parent / "README.md").read_text()
    fp32 = _classes(meter, "fp32")
    cells = sum(str(space.canonical(a)) in fp32 for a in space.enumerate())
    stated = re.search(r"\*\*fp32, batch 256: ([\d,]+) of the 6,466 classes, covering ([\d,]+) of the 15,625", text)
    assert stated, "the data README no longer states the fp32 coverage"
    assert [int(g.replace(",", "")) for g in stated.groups()] == [len(fp32), cells]
    assert "**fp16, batch 1024: all 6,466 canonical classes**" in text


def test_the_as_built_profile_labels_whose_figures_it_replays(shipped):
    # arch 14174's class representative (2676) has fewer params as built than 14174 itself: the row is
    # the representative's, and the measurement says so next to the arch's own official counts
    meter, space = shipped
    m = meter.measure_arch(space.arch_at(14174), precision="fp16", batch_size=1024)
    assert m.network_form == "as_built"
    assert m.params == space.count(space.canonical(space.arch_at(14174))).params == 587_386
    assert m.params_official == space.count(space.arch_at(14174)).params == 830_426


def test_the_shipped_profiles_stay_under_2_mib_in_all():
    files = sorted(DEFAULT_PROFILE.parent.glob("h200_*profile*.csv.gz"))
    assert DEFAULT_PROFILE in files
    total = sum(p.stat().st_size for p in files)
    assert total < 2 * 1024 * 1024, {p.name: p.stat().st_size for p in files}
