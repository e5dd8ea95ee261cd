"""Shared fixtures: a small recorded profile of synthetic figures, written by the tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tss():
    return pytest.importorskip("search_spaces").get_space("tss")


@pytest.fixture(scope="session")
def member_pair(tss):
    """A non-canonical architecture and its class representative."""
    for arch in tss.enumerate():
        canon = tss.canonical(arch)
        if canon != arch:
            return arch, canon
    raise AssertionError("no non-canonical TSS architecture found")


@pytest.fixture()
def small_profile(tmp_path, tss, member_pair):
    """A 3-class fp16 / batch 1024 profile; returns (path, canonical archs)."""
    from nasenergy.testing import FakeMeter, write_fake_profile

    canons = [member_pair[1]] + [tss.canonical(tss.arch_at(i)) for i in (7, 4242)]
    path = write_fake_profile(tmp_path / "profile.csv.gz", canons, space=tss,
                              meter=FakeMeter(noise_cv=0.01, seed=1))
    return path, canons
