"""experiments/proxies_data_choice.py: the summary of scores under two batches."""

import math

import pytest


def test_rank_agreement_between_batches(load_experiment):
    mod = load_experiment("proxies_data_choice")
    rows = []
    for i in range(8):
        for batch in ("gaussian0", "gaussian1", "photos0", "digits0"):
            for proxy in mod.PROXIES:
                score = float(i) if batch != "digits0" else float(-i)
                if proxy == "jacov" and i == 0:
                    score = -math.inf
                rows.append({"arch_index": str(i), "batch": batch, "proxy": proxy, "score": repr(score)})
    stats = mod.summarise(rows, seed=0)
    by = {(s["proxy"], s["batch_a"], s["batch_b"]): s for s in stats}
    assert by[("snip", "gaussian0", "gaussian1")]["spearman_rho"] == pytest.approx(1.0)
    assert by[("snip", "gaussian0", "digits0")]["spearman_rho"] == pytest.approx(-1.0)
    assert by[("jacov", "gaussian0", "photos0")]["spearman_rho"] == pytest.approx(1.0)  # -inf ranks last in both
    assert all(s["n_networks"] == 8 for s in stats)
