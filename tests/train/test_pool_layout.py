"""The guard against wrong channels_last average-pooling gradients (pytorch/pytorch#188344)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from nasenergy.train import pool_layout  # noqa: E402
from nasenergy.train.network import build_for_data  # noqa: E402
from search_spaces import get_space  # noqa: E402

POOLING_CELL = "|avg_pool_3x3~0|+|nor_conv_1x1~0|avg_pool_3x3~1|+|skip_connect~0|avg_pool_3x3~1|nor_conv_3x3~2|"


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    monkeypatch.setattr(pool_layout, "_CHECKED", {})


class _WrongNhwcBackward(torch.autograd.Function):
    """Average pooling whose input gradient is halved for a padded channels_last input, as the
    broken kernel gives wrong ones."""

    @staticmethod
    def forward(ctx, x, *args):  # type: ignore[override]
        padded = args[2] not in (0, (0, 0))
        ctx.nhwc = padded and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
        ctx.args = args
        ctx.save_for_backward(x)
        return _REAL_POOL(x, *args)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            xi = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(_REAL_POOL(xi, *ctx.args), xi, grad)
        return (g * 0.5 if ctx.nhwc else g, *[None] * len(ctx.args))


_REAL_POOL = torch.nn.functional.avg_pool2d


def _broken_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    return _WrongNhwcBackward.apply(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def test_a_correct_build_passes_the_check_and_the_answer_is_kept_per_device():
    assert pool_layout.nhwc_avg_pool_backward_ok("cpu") is True
    assert pool_layout._CHECKED == {"cpu": True}


def test_a_build_with_wrong_nhwc_gradients_fails_the_check(monkeypatch):
    monkeypatch.setattr(torch.nn.functional, "avg_pool2d", _broken_pool)
    assert pool_layout.nhwc_avg_pool_backward_ok("cpu") is False


def _grads(model, x):
    model.zero_grad(set_to_none=True)
    model(x).square().sum().backward()
    return [p.grad.clone() for p in model.parameters()]


def test_pooling_in_nchw_gives_the_contiguous_gradients_under_a_broken_kernel_and_leaves_the_network_as_it_was(
        monkeypatch):
    space = get_space("tss")
    x = torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    model = build_for_data(space, POOLING_CELL, in_channels=3, num_classes=5, seed=0).to(memory_format=torch.channels_last)
    xl = x.contiguous(memory_format=torch.channels_last)
    want = _grads(model, xl)  # the correct kernel

    monkeypatch.setattr(torch.nn.functional, "avg_pool2d", _broken_pool)
    broken = _grads(model, xl)
    assert not all(torch.allclose(a, b, atol=1e-5) for a, b in zip(broken, want))  # the fake breaks training

    with pool_layout.pool_in_nchw(model) as pools:
        assert pools == 3 * 15  # three avg_pool_3x3 edges in each of the 15 cells; the residual blocks' unpadded pools are left alone
        fixed = _grads(model, xl)
    assert all(torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(fixed, want))
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
