"""Tests of the rate model that estimates unrecorded costs (nasenergy.oracles.cost_model)."""

from __future__ import annotations

import numpy as np

from search_spaces import get_space

from nasenergy.oracles.cost_model import MIN_FIT_ARCHS, attach_rate_model, design_matrix, fit_rate_model
from nasenergy.oracles.data import BenchmarkData


def _data(space_name: str, train_s: np.ndarray) -> BenchmarkData:
    space = get_space(space_name)
    strs = np.array([str(a) for a in space.enumerate()])
    return BenchmarkData(space_name=space_name, arch_strs=strs, train_s={("cifar100", "12"): train_s})


def test_size_space_rates_are_recovered() -> None:
    x = design_matrix("sss")
    widths = x[:, :5]
    true_rate = 1e-6 * (1.0 + (widths**2).sum(axis=1) / 64)  # seconds per image-epoch
    recorded = np.full(x.shape[0], np.nan)
    known = np.arange(0, x.shape[0], 97)
    recorded[known] = true_rate[known] * 50_000 * 12
    model = fit_rate_model(_data("sss", recorded), x)
    assert model is not None and model.n_fit_archs == known.size
    np.testing.assert_allclose(model.train_rate_s_per_img, true_rate, rtol=1e-6)
    assert model.cv_median_rel_err_train < 1e-6
    assert (model.eval_rate_s_per_img == 0).all()  # no evaluation times recorded


def test_too_few_recorded_archs() -> None:
    recorded = np.full(15_625, np.nan)
    recorded[: MIN_FIT_ARCHS - 1] = 100.0
    data = _data("tss", recorded)
    assert attach_rate_model(data) is None
    assert data.est_train_rate is None and "cost_model" not in data.provenance
    assert np.isnan(data.estimated_cost_s(("cifar100", "x-valid", "12"))).all()
