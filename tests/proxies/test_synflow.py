import pytest
import torch
from torch import nn

from nasenergy.proxies._common import ProxyContext
from nasenergy.proxies.synflow import synflow


def test_synflow_of_a_linear_chain_is_its_conserved_flow_per_layer():
    # For a bias-free linear chain, sum over one layer of |theta * dR/dtheta| equals R (synaptic
    # flow is conserved layer by layer; Tanaka et al. 2020), so two layers score 2R.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Flatten(), nn.Linear(12, 7, bias=False), nn.Linear(7, 3, bias=False))
    w1, w2 = net[1].weight.detach().double().abs(), net[2].weight.detach().double().abs()
    flow = float((w2 @ w1 @ torch.ones(12, dtype=torch.float64)).sum())
    score = synflow(net, ProxyContext((3, 2, 2), 3, "cpu")).score
    assert score == pytest.approx(2 * flow, rel=1e-12)
    assert net[1].weight.dtype == torch.float32 and float(net[1].weight.detach().min()) < 0  # caller's net untouched


def test_synflow_of_a_network_blind_to_its_input_is_zero_with_a_reason(tss_nets):
    v = synflow(tss_nets["zero"], ProxyContext((3, 8, 8), 120, "cpu"))
    assert v.score == 0.0 and "path" in v.reason
