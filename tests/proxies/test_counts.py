from torch import nn

from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.counts import flops, params


def test_flops_and_params_of_a_linear_layer():
    net = nn.Sequential(nn.Flatten(), nn.Linear(12, 10))
    ctx = ProxyContext((3, 2, 2), 10, "cpu")
    assert flops(net, ctx).score == 2 * 12 * 10
    assert params(net, ctx).score == 12 * 10 + 10


def test_the_deployed_counts_are_the_analytic_ones(tss, tss_nets):
    from proxy_nets import CONV_CELL

    cost = tss.count_deployed(CONV_CELL, "ImageNet16-120")
    ctx = ProxyContext((3, 16, 16), 120, "cpu")
    assert params(tss_nets["conv"], ctx).score == cost.params
    # the analytic count adds one MAC per class for the classifier's bias; PyTorch's counter does not
    assert flops(tss_nets["conv"], ctx).score == cost.flops - 2 * 120
