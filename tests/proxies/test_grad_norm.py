import pytest
import torch
import torch.nn.functional as F

from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.data import make_batch
from nasenergy.proxies.grad_norm import grad_norm

from proxy_nets import CLASSES, SHAPE, tiny_net


def test_grad_norm_sums_the_layers_gradient_norms():
    batch = make_batch(SHAPE, CLASSES, batch_size=8, seed=0)
    got = grad_norm(tiny_net(), ProxyContext(SHAPE, CLASSES, "cpu", batch)).score
    twin = tiny_net().train()
    weights = [twin[0].weight, twin[3].weight, twin[8].weight]
    grads = torch.autograd.grad(F.cross_entropy(twin(batch.images), batch.labels), weights)
    assert got == pytest.approx(float(sum(g.norm() for g in grads)), rel=1e-5)


def test_grad_norm_of_a_network_blind_to_its_input_is_zero(tss_nets):
    batch = make_batch((3, 8, 8), 120, batch_size=4, seed=0)
    assert grad_norm(tss_nets["zero"], ProxyContext((3, 8, 8), 120, "cpu", batch)).score == 0.0
