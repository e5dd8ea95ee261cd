import pytest
import torch
import torch.nn.functional as F

from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.data import make_batch
from nasenergy.proxies.snip import snip

from proxy_nets import CLASSES, SHAPE, tiny_net


def test_snip_sums_weight_saliencies_of_convolutions_and_linear_layers():
    net = tiny_net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    batch = make_batch(SHAPE, CLASSES, batch_size=8, seed=0)
    got = snip(net, ProxyContext(SHAPE, CLASSES, "cpu", batch)).score
    twin = tiny_net().train()
    weights = [twin[0].weight, twin[3].weight, twin[8].weight]
    grads = torch.autograd.grad(F.cross_entropy(twin(batch.images), batch.labels), weights)
    assert got == pytest.approx(float(sum((g * w).detach().abs().sum() for g, w in zip(grads, weights))), rel=1e-5)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())  # BN statistics untouched


def test_snip_of_a_network_blind_to_its_input_is_zero(tss_nets):
    batch = make_batch((3, 8, 8), 120, batch_size=4, seed=0)
    v = snip(tss_nets["zero"], ProxyContext((3, 8, 8), 120, "cpu", batch))
    assert v.score == 0.0 and v.reason
