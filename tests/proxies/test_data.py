import numpy as np
import pytest

from nasenergy.errors import UsageError
from nasenergy.proxies.data import DATA_CHOICES, make_batch


@pytest.mark.parametrize("data", DATA_CHOICES)
def test_a_batch_is_seeded_and_shaped(data):
    a = make_batch((3, 16, 16), 10, batch_size=8, seed=3, data=data, dataset="cifar10")
    b = make_batch((3, 16, 16), 10, batch_size=8, seed=3, data=data, dataset="cifar10")
    c = make_batch((3, 16, 16), 10, batch_size=8, seed=4, data=data, dataset="cifar10")
    assert a.images.shape == (8, 3, 16, 16) and a.labels.shape == (8,)
    assert np.array_equal(a.images.numpy(), b.images.numpy()) and np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.images.numpy(), c.images.numpy())
    assert int(a.labels.min()) >= 0 and int(a.labels.max()) < 10
    assert a.data == data and a.seed == 3 and a.batch_size == 8


def test_gaussian_and_digits_batches_are_standardised():
    for data in ("gaussian", "digits"):
        x = make_batch((3, 32, 32), 10, batch_size=64, seed=0, data=data).images.numpy()
        assert abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05


def test_photo_crops_have_image_like_statistics():
    x = make_batch((3, 32, 32), 10, batch_size=64, seed=0, data="photos", dataset="cifar10").images.numpy()
    assert abs(x.mean()) < 1.5 and 0.3 < x.std() < 3
    # neighbouring pixels of a photo are correlated; of noise they are not
    assert np.corrcoef(x[:, :, :, :-1].ravel(), x[:, :, :, 1:].ravel())[0, 1] > 0.5


def test_bad_choices_are_one_line_errors():
    with pytest.raises(UsageError, match="unknown proxy data"):
        make_batch((3, 8, 8), 10, data="cifar")
    with pytest.raises(UsageError, match="at least 2"):
        make_batch((3, 8, 8), 10, batch_size=1)
