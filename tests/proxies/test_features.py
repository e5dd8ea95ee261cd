import math

import numpy as np
import pytest

from nasenergy.errors import UsageError
from nasenergy.filter import UtilizationFilter
from nasenergy.filter.feature_providers import feature_set
from nasenergy.filter.records import FilterError
from nasenergy.proxies.compute import compute_proxies
from nasenergy.proxies.features import MISSING_FEATURE, PROXY_FEATURE_NAMES, provider_for_hardware, proxy_features
from nasenergy.testing import FakeMeter

from proxy_nets import SKIP_CELL, ZERO_CELL


def test_features_are_finite_and_degenerate_scores_rank_lowest(tss_nets):
    live = proxy_features(compute_proxies(tss_nets["skip"], (3, 8, 8), 120, batch_size=4))
    dead = proxy_features(compute_proxies(tss_nets["zero"], (3, 8, 8), 120, batch_size=4))
    assert len(live) == len(PROXY_FEATURE_NAMES) and np.isfinite(live).all() and np.isfinite(dead).all()
    jacov = PROXY_FEATURE_NAMES.index("neg_log10_neg_jacov")
    assert dead[jacov] == MISSING_FEATURE < live[jacov]


def test_a_feature_set_joins_structure_and_live_proxies(tss):
    fs = feature_set(["structure", "proxies-live"], space=tss, dataset="ImageNet16-120",
                     options={"proxies-live": {"proxies": ["params", "synflow"], "batch_size": 4}})
    x = fs(SKIP_CELL)
    assert fs.names[-2:] == ("log10_params", "log10_synflow")
    assert len(x) == len(fs.names) == len(tss.feature_names) + 2
    assert x[-2] == pytest.approx(math.log10(tss.count_deployed(SKIP_CELL, "ImageNet16-120").params))


def test_a_filter_takes_proxy_features(tss):
    fs = feature_set(["proxies-live"], space=tss, dataset="ImageNet16-120",
                     options={"proxies-live": {"proxies": ["params", "flops"]}})
    meter = FakeMeter()
    flt = UtilizationFilter.create("dominance", min_fit=4, n_folds=2, local_margin=None,
                                   objectives=("accuracy", "throughput"))
    for k in range(6):
        arch = tss.arch_at(k)
        m = meter.measure_arch(arch, precision="fp16", batch_size=256, space=tss)
        flt.observe(m, 50.0 + k, features=fs(arch))
    m = meter.measure_arch(SKIP_CELL, precision="fp16", batch_size=256, space=tss)
    decision = flt.admit(m, np.array([[10.0, 1.0]]), features=fs(SKIP_CELL))
    assert decision.admit and decision.accuracy_upper is not None  # the model, not the cold start, decided


def test_unknown_or_repeated_providers_are_filter_errors(tss):
    with pytest.raises(FilterError, match="unknown feature provider"):
        feature_set(["fisher"], space=tss)
    with pytest.raises(FilterError, match="twice"):
        feature_set(["structure", "structure"], space=tss)
    with pytest.raises(FilterError, match="bad option"):
        feature_set(["structure"], space=tss, colour="red")


def test_the_recorded_provider_reads_the_table(tss, tmp_path):
    import csv

    from nasenergy.proxies.table import TABLE_COLUMNS, report_row

    live = compute_proxies(tss.build_deployed(SKIP_CELL, "ImageNet16-120"), (3, 16, 16), 120, batch_size=4,
                           dataset="ImageNet16-120", network=SKIP_CELL, init_seed=0)
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        w.writerow(report_row(live, tss.index(tss.deployed_representative(SKIP_CELL)), torch_version="x",
                              measured_at="t"))
    fs = feature_set(["proxies"], space=tss, dataset="ImageNet16-120", options={"proxies": {"path": path}})
    assert fs.names == PROXY_FEATURE_NAMES
    assert np.allclose(fs(SKIP_CELL), proxy_features(live), rtol=1e-8)
    with pytest.raises(UsageError, match="no row"):
        fs(ZERO_CELL)


def test_gpu_searches_compute_proxies_and_others_read_the_table():
    assert provider_for_hardware("cuda") == "proxies-live"
    assert provider_for_hardware("recorded") == provider_for_hardware("cpu") == "proxies"
