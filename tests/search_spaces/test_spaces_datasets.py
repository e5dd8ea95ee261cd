"""The dataset vocabulary: spellings, and datasets a user registers."""

import pytest

import search_spaces
from search_spaces import _datasets
from search_spaces._errors import UnknownDatasetError
from search_spaces import DatasetInfo, canonical_dataset, dataset_names, get_space, register_dataset


@pytest.fixture
def fresh_vocabulary(monkeypatch):
    """Registrations made in a test end with it."""
    monkeypatch.setattr(_datasets, "_INFOS", dict(_datasets._INFOS))
    monkeypatch.setattr(_datasets, "_BY_SPELLING", dict(_datasets._BY_SPELLING))


def test_the_nats_datasets_and_their_spellings():
    assert dataset_names()[:3] == search_spaces.DATASETS
    assert canonical_dataset(" CIFAR-10 ") == "cifar10" and canonical_dataset("imagenet16") == "ImageNet16-120"


def test_a_registered_dataset_is_spelled_shaped_and_built(fresh_vocabulary):
    register_dataset(DatasetInfo("tiny-imagenet", 200, (3, 64, 64)), aliases=("TinyImageNet",))
    assert canonical_dataset("tinyimagenet") == canonical_dataset("Tiny-ImageNet") == "tiny-imagenet"
    assert dataset_names()[-1] == "tiny-imagenet"
    space = get_space("tss")
    arch = space.arch_at(1234)
    assert space.input_shape("tiny-imagenet") == (3, 64, 64) and space.num_classes("TinyImageNet") == 200
    assert space.count(arch, "tiny-imagenet").flops > 4 * space.count(arch, "cifar10").flops * 0.99
    torch = pytest.importorskip("torch")
    logits = space.build_deployed(arch, "tiny-imagenet")(torch.zeros(2, 3, 64, 64))
    assert tuple(logits.shape) == (2, 200)


def test_a_registered_dataset_is_gone_with_its_test():
    with pytest.raises(UnknownDatasetError, match="unknown dataset 'tiny-imagenet'"):
        canonical_dataset("tiny-imagenet")


@pytest.mark.parametrize("info, aliases, message", [
    (DatasetInfo("cifar10", 10, (3, 32, 32)), (), "belongs to NATS-Bench"),
    (DatasetInfo("mine", 10, (3, 32, 32)), ("cifar-100",), "belongs to NATS-Bench"),
    (DatasetInfo("cifar10-valid", 10, (3, 32, 32)), (), "belongs to NATS-Bench"),
    (DatasetInfo("mine", 0, (3, 32, 32)), (), "positive"),
    (DatasetInfo("mine", 10, (3, 32)), (), "positive"),
    (DatasetInfo("", 10, (3, 32, 32)), (), "needs a name"),
])
def test_a_bad_registration_is_refused(fresh_vocabulary, info, aliases, message):
    with pytest.raises(ValueError, match=message):
        register_dataset(info, aliases=aliases)


def test_a_name_is_registered_once_unless_replaced(fresh_vocabulary):
    register_dataset(DatasetInfo("mine", 10, (3, 8, 8)))
    with pytest.raises(ValueError, match="already registered"):
        register_dataset(DatasetInfo("mine", 20, (3, 8, 8)))
    register_dataset(DatasetInfo("mine", 20, (3, 8, 8)), replace=True)
    assert get_space("sss").num_classes("MINE") == 20
