"""The public surface of the package: look-up by name, datasets, errors."""

from __future__ import annotations

import pytest

import search_spaces
from nasenergy.errors import ArchError, UsageError
from search_spaces import DATASETS, SSSArch, TSSArch, get_space


def test_get_space():
    tss = get_space("tss")
    assert tss.name == "tss" and tss.size == 15_625 and get_space("TSS") is tss
    sss = get_space("sss")
    assert sss.name == "sss" and sss.size == 32_768
    assert isinstance(tss.arch_at(0), TSSArch) and isinstance(sss.arch_at(0), SSSArch)


@pytest.mark.parametrize("bad", ["nasbench101", "", None])
def test_unknown_space(bad):
    with pytest.raises(UsageError, match="unknown search space"):
        get_space(bad)


def test_datasets():
    assert DATASETS == ("cifar10", "cifar100", "ImageNet16-120")


@pytest.mark.parametrize("method", ["count", "input_shape", "num_classes"])
def test_unknown_dataset(method):
    tss = get_space("tss")
    args = (tss.arch_at(0), "mnist") if method == "count" else ("mnist",)
    with pytest.raises(UsageError, match="unknown dataset 'mnist'"):
        getattr(tss, method)(*args)


def test_methods_take_strings_and_reject_foreign_archs():
    tss, sss = get_space("tss"), get_space("sss")
    text = str(tss.arch_at(3))
    assert tss.count(text, "cifar10") == tss.count(tss.arch_at(3), "cifar10")
    assert (tss.features(text) == tss.features(tss.arch_at(3))).all()
    with pytest.raises(ArchError):
        tss.index(sss.arch_at(3))
    with pytest.raises(ArchError):
        sss.count(tss.arch_at(3), "cifar10")


def test_public_names_resolve():
    for name in search_spaces.__all__:
        assert hasattr(search_spaces, name), name
