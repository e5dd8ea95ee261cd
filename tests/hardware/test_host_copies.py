"""`host_copies`: CPU copies for the CUDA meter, made ahead (no GPU needed)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from nasenergy.errors import UsageError  # noqa: E402
from nasenergy.hardware.cuda_meter import host_copies, memory_formats  # noqa: E402


def _conv_net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU())


def test_one_copy_per_memory_format_in_the_precision_dtype():
    net = _conv_net().train()
    copies = host_copies(net, "fp16")
    assert copies.formats == [True, False] and copies.precision == "fp16" and copies.model is net
    cl = copies.take(True)
    assert cl.training is False and cl[0].weight.dtype == torch.float16
    assert cl[0].weight.is_contiguous(memory_format=torch.channels_last)
    plain = copies.take(False)
    assert plain[0].weight.is_contiguous() and not plain[0].weight.is_contiguous(memory_format=torch.channels_last)
    assert net.training and net[0].weight.dtype == torch.float32  # the model itself is untouched
    assert copies.formats == []
    with pytest.raises(UsageError, match="used once"):
        copies.take(True)


def test_formats_follow_the_request_and_the_network():
    assert host_copies(_conv_net(), "fp32", channels_last=False).formats == [False]
    assert memory_formats(torch.nn.Sequential(torch.nn.Linear(4, 2)), None) == [False]
    assert host_copies(torch.nn.Sequential(torch.nn.Linear(4, 2)), "fp32").formats == [False]


def test_a_later_format_must_be_faster_by_more_than_the_tie_margin():
    from nasenergy.hardware.cuda_meter import FORMAT_TIE_FRAC, takes_over

    assert FORMAT_TIE_FRAC == 0.02
    assert not takes_over(0.99, 1.0)          # 1 % faster: a tie, channels-last (probed first) stays
    assert not takes_over(1.01, 1.0)
    assert takes_over(0.97, 1.0)              # 3 % faster: contiguous is chosen
    assert takes_over(0.99, 1.0, tie_frac=0.0)  # no margin: plain "the faster"
