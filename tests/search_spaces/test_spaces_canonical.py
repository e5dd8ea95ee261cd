"""Canonical forms: NAS-Bench-201's 6,466 classes of TSS cells; SSS configurations are their own."""

from __future__ import annotations

from collections import defaultdict

from search_spaces import get_space

TSS = get_space("tss")


def _partition(groups: dict[object, set[int]]) -> set[frozenset[int]]:
    return {frozenset(members) for members in groups.values()}


def test_exactly_6466_classes_with_smallest_index_representatives():
    members: dict[int, list[int]] = defaultdict(list)
    for index, arch in enumerate(TSS.enumerate()):
        members[TSS.index(TSS.canonical(arch))].append(index)
    assert len(members) == 6_466
    assert all(rep == min(indices) for rep, indices in members.items())
    reps = TSS.canonical_classes()
    assert [TSS.index(r) for r in reps] == sorted(members)
    assert all(TSS.canonical(r) == r for r in reps)


def test_partition_equals_nas_bench_201_isomorph_str(landscape_rows):
    assert len(landscape_rows) == TSS.size
    by_reference: dict[str, set[int]] = defaultdict(set)
    by_canonical: dict[object, set[int]] = defaultdict(set)
    for row in landscape_rows:
        index = int(row["arch_index"])
        assert TSS.index(row["arch_str"]) == index
        by_reference[row["isomorph_str"]].add(index)
        by_canonical[TSS.canonical(row["arch_str"])].add(index)
    assert len(by_reference) == 6_466
    assert _partition(by_canonical) == _partition(by_reference)


def test_known_equivalences():
    conv_direct = "|avg_pool_3x3~0|+|nor_conv_1x1~0|none~1|+|nor_conv_3x3~0|none~1|none~2|"
    conv_via_skip = "|skip_connect~0|+|none~0|none~1|+|none~0|nor_conv_3x3~1|none~2|"
    conv_via_pool_of_zero = "|none~0|+|none~0|none~1|+|nor_conv_3x3~0|avg_pool_3x3~1|none~2|"
    assert TSS.canonical(conv_direct) == TSS.canonical(conv_via_skip) == TSS.canonical(conv_via_pool_of_zero)
    assert TSS.isomorphism_key(conv_direct) == "#+#+(0)@nor_conv_3x3"
    # A different op, or the conv applied twice, is a different function.
    assert TSS.canonical(conv_direct) != TSS.canonical(conv_direct.replace("nor_conv_3x3", "nor_conv_1x1"))
    assert TSS.canonical(conv_via_skip) != TSS.canonical(conv_via_skip.replace("skip_connect", "nor_conv_3x3"))
    # The 125 cells whose output node receives only `none` edges all compute zero: one class.
    disconnected = [a for a in TSS.enumerate() if a.ops[3:] == ("none",) * 3]
    assert len({TSS.canonical(a) for a in disconnected}) == 1 and len(disconnected) == 125


def test_canonical_accepts_strings_and_is_idempotent():
    for arch in TSS.sample(200, seed=0):
        canonical = TSS.canonical(str(arch))
        assert TSS.canonical(canonical) == canonical
        assert TSS.index(canonical) <= TSS.index(arch)
        assert TSS.isomorphism_key(canonical) == TSS.isomorphism_key(arch)


def test_sss_canonical_is_identity():
    sss = get_space("sss")
    for arch in sss.sample(20, seed=0):
        assert sss.canonical(arch) == arch
    classes = sss.canonical_classes()
    assert len(classes) == sss.size and classes[0] == sss.arch_at(0)
