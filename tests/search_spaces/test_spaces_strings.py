"""Parsing and printing of architecture strings; malformed input gives one clear ArchError."""

from __future__ import annotations

import dataclasses

import pytest

from nasenergy.errors import ArchError, UsageError
from search_spaces import SSSArch, TSSArch, get_space

TSS = get_space("tss")
SSS = get_space("sss")
BEST = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|"


def test_all_tss_strings_round_trip():
    seen = set()
    for arch in TSS.enumerate():
        text = str(arch)
        parsed = TSS.parse(text)
        assert parsed == arch and hash(parsed) == hash(arch) and str(parsed) == text
        seen.add(text)
    assert len(seen) == TSS.size == 15_625


def test_sss_strings_round_trip_on_a_sample():
    for arch in SSS.sample(2_000, seed=3):
        assert SSS.parse(str(arch)) == arch
    assert str(SSS.parse("8:16:24:32:40")) == "8:16:24:32:40"


def test_tss_parse_exact_structure():
    arch = TSS.parse(BEST)
    assert arch.ops == ("nor_conv_3x3", "nor_conv_3x3", "nor_conv_3x3", "skip_connect", "nor_conv_3x3", "nor_conv_3x3")
    assert arch.op(0, 3) == "skip_connect" and arch.op(2, 3) == "nor_conv_3x3"
    assert TSS.parse(f"  {BEST}\n") == arch
    assert TSS.parse(arch) is arch


def test_archs_are_immutable_and_hashable():
    arch = TSS.parse(BEST)
    with pytest.raises(dataclasses.FrozenInstanceError):
        arch.ops = ()  # type: ignore[misc]
    assert {arch, TSS.parse(BEST)} == {arch}
    sss = SSSArch([8, 16, 24, 32, 40])
    assert sss.channels == (8, 16, 24, 32, 40) and hash(sss) == hash(SSS.parse("8:16:24:32:40"))
    assert TSSArch(list(arch.ops)) == arch


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty TSS cell string"),
        ("   ", "empty TSS cell string"),
        (None, "got NoneType"),
        (42, "got int"),
        ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|", "3 nodes separated by '+', got 2"),
        (BEST + "+|none~0|", "3 nodes separated by '+', got 4"),
        ("|conv~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|nor_conv_3x3~1|nor_conv_3x3~2|", "unknown op 'conv' on edge 1<-0"),
        ("|none~0|+|none~0|none~1|+|none~0|max_pool_3x3~1|none~2|", "unknown op 'max_pool_3x3' on edge 3<-1"),
        ("|none~0|+|none~0|+|none~0|none~1|none~2|", "node 2 '|none~0|' must have 2 input(s), got 1"),
        ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|none~3|", "node 3 '|none~0|none~1|none~2|none~3|' must have 3 input(s), got 4"),
        ("|none~0|+|none~0|none~2|+|none~0|none~1|none~2|", "edge 2<-1: input index must be 1, got '2'"),
        ("|none~0|+|none~1|none~0|+|none~0|none~1|none~2|", "edge 2<-0: input index must be 0, got '1'"),
        ("|none0|+|none~0|none~1|+|none~0|none~1|none~2|", "edge 1<-0: malformed entry 'none0'"),
        ("|~0|+|none~0|none~1|+|none~0|none~1|none~2|", "edge 1<-0: malformed entry '~0'"),
        ("none~0+|none~0|none~1|+|none~0|none~1|none~2|", "node 1 'none~0' must be enclosed in '|'"),
        ("8:8:8:8:8", "3 nodes separated by '+', got 1"),
    ],
)
def test_malformed_tss_strings(text, fragment):
    with pytest.raises(ArchError) as info:
        TSS.parse(text)
    message = str(info.value)
    assert fragment in message and "\n" not in message
    assert isinstance(info.value, UsageError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty SSS configuration string"),
        (None, "got NoneType"),
        (8, "got int"),
        ("8:8:8:8", "5 channel widths separated by ':', got 4"),
        ("8:8:8:8:8:8", "5 channel widths separated by ':', got 6"),
        ("8:8:12:8:8", "bad channel width '12' at position 3"),
        ("8:8:8:8:72", "bad channel width '72' at position 5"),
        ("x:8:8:8:8", "bad channel width 'x' at position 1"),
        ("8:8:-8:8:8", "bad channel width '-8' at position 3"),
        ("8:8::8:8", "bad channel width '' at position 3"),
        (BEST, "5 channel widths separated by ':', got 1"),
    ],
)
def test_malformed_sss_strings(text, fragment):
    with pytest.raises(ArchError) as info:
        SSS.parse(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: TSSArch(("none",) * 5), "6 edges, got 5 ops"),
        (lambda: TSSArch(("none",) * 5 + ("conv",)), "unknown op 'conv' on edge 3<-2"),
        (lambda: TSSArch("none"), "must be a sequence"),
        (lambda: SSSArch((8, 8, 8, 8)), "5 channel widths, got 4"),
        (lambda: SSSArch((8, 8, 8.0, 8, 8)), "bad channel width 8.0 at position 3"),
        (lambda: SSSArch((8, True, 8, 8, 8)), "bad channel width True at position 2"),
    ],
)
def test_malformed_constructor_arguments(make, fragment):
    with pytest.raises(ArchError, match=".*") as info:
        make()
    assert fragment in str(info.value)
