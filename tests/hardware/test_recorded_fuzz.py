"""Recorded profiles on malformed input: a profile with any cell replaced, or cut at any byte, is
replayed or refused with a one-line `NasEnergyError`, never a Python error."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.recorded import RecordedMeter
from search_spaces import get_space

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
CELLS = st.one_of(
    st.sampled_from(["", "nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "abc", "3x32", "fp16", "True"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**12, 10**12).map(str),
    st.text(st.characters(blacklist_characters=',"\r\n', blacklist_categories=("Cs",)), max_size=8),
)


@functools.cache
def _profile() -> tuple[bytes, tuple[str, ...]]:
    """A valid 3-class profile (plain CSV) and its architectures."""
    from nasenergy.testing import FakeMeter, write_fake_profile

    tss = get_space("tss")
    archs = tuple(str(tss.canonical(tss.arch_at(i))) for i in (7, 4242, 9000))
    with tempfile.TemporaryDirectory() as folder:
        path = write_fake_profile(Path(folder) / "profile.csv", list(archs), space=tss,
                                  meter=FakeMeter(noise_cv=0.01, seed=1))
        return Path(path).read_bytes(), archs


def _replay_or_refuse(data: bytes) -> None:
    _, archs = _profile()
    tss = get_space("tss")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "profile.csv"
        path.write_bytes(data)
        try:
            meter = RecordedMeter(path, space=tss)
            for arch in archs:
                meter.measure_arch(arch, precision="fp16", batch_size=1024)
        except NasEnergyError as exc:
            assert "\n" not in str(exc), str(exc)


@FUZZ
@given(data=st.data())
def test_a_profile_with_any_cell_replaced_is_replayed_or_refused_in_one_line(data):
    raw, _ = _profile()
    lines = raw.decode().splitlines(keepends=True)
    at = data.draw(st.integers(1, len(lines) - 1))
    cells = lines[at].rstrip("\n").split(",")
    column = data.draw(st.integers(0, len(cells) - 1))
    cells[column] = data.draw(CELLS)
    lines[at] = ",".join(cells) + "\n"
    _replay_or_refuse("".join(lines).encode())


@FUZZ
@given(data=st.data())
def test_a_profile_cut_at_any_byte_is_replayed_or_refused_in_one_line(data):
    raw, _ = _profile()
    _replay_or_refuse(raw[: data.draw(st.integers(0, len(raw)))])
