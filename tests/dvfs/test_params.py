"""Parameter sets: JSON round trip, validation, device matching, extrapolation, shipped sets."""

from __future__ import annotations

import json

import pytest

from dvfs_helpers import make_params
from nasenergy.dvfs.params import (AlphaPredictor, GpuDvfsParams, ParamsError, extrapolate_params,
                                   params_for_device, shipped_params)
from nasenergy.errors import DataNotFoundError, UsageError


def test_json_round_trip(tmp_path, params) -> None:
    p = make_params(sources=(("knee_clock_mhz", "fit"),), fit=(("power_rms_frac", 0.04),))
    path = p.save(tmp_path / "p.json")
    back = GpuDvfsParams.load(path)
    assert back == p
    assert back.source_of("knee_clock_mhz") == "fit"
    assert json.loads(path.read_text())["format"] == "nasenergy.dvfs.params/1"


def test_load_errors(tmp_path) -> None:
    with pytest.raises(DataNotFoundError):
        GpuDvfsParams.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ParamsError, match="not valid JSON"):
        GpuDvfsParams.load(bad)
    bad.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ParamsError, match="not a DVFS parameter set"):
        GpuDvfsParams.load(bad)
    d = make_params().to_dict()
    del d["knee_clock_mhz"]
    bad.write_text(json.dumps(d))
    with pytest.raises(ParamsError, match="malformed"):
        GpuDvfsParams.load(bad)


@pytest.mark.parametrize("kw", [
    {"v_floor": 0.0}, {"v_exponent": 0.5}, {"per_cycle_share": 1.5}, {"overlap_exponent": 0.5},
    {"knee_clock_mhz": 5000.0}, {"idle_power_w": 800.0}, {"default_clock_mhz": 3000.0},
    {"supported_clocks_mhz": (1000.0, 900.0)}, {"alpha_predictors": ()},
    {"provenance": "guessed"},
])
def test_invalid_values_rejected(kw) -> None:
    with pytest.raises(ParamsError):
        make_params(**kw)


def test_alpha_predictor_clips_and_checks() -> None:
    a = AlphaPredictor(("power_frac",), (2.0,), 0.0, 0.1)
    assert a.predict({"power_frac": 0.2}) == pytest.approx(0.4)
    assert a.predict({"power_frac": 5.0}) == 1.0
    assert a.predict({"power_frac": -1.0}) == 0.1
    assert not a.usable_with({"power_frac": None})
    with pytest.raises(UsageError):
        a.predict({})
    with pytest.raises(ParamsError, match="unknown feature"):
        AlphaPredictor(("temperature",), (1.0,), 0.0, 0.1)


def test_params_for_device_longest_pattern_wins() -> None:
    a = make_params(name="a100", device_patterns=("A100",))
    b = make_params(name="a100-sxm", device_patterns=("A100-SXM4",))
    assert params_for_device("NVIDIA A100-SXM4-80GB", [a, b]).name == "a100-sxm"
    assert params_for_device("nvidia a100-pcie-40gb", [a, b]).name == "a100"
    with pytest.raises(UsageError, match="no DVFS parameter set"):
        params_for_device("NVIDIA GeForce RTX 4090", [a, b])


def test_extrapolation_keeps_relative_shape(params) -> None:
    x = extrapolate_params(params, name="new", gpu="New GPU", device_patterns=("New",),
                           supported_clocks_mhz=tuple(range(300, 2401, 20)),
                           default_clock_mhz=2400, power_limit_w=1000, idle_power_w=100,
                           caveat="extrapolated for a test")
    assert x.provenance == "extrapolated" and x.caveat == "extrapolated for a test"
    assert x.knee_clock_mhz / x.max_clock_mhz == pytest.approx(
        params.knee_clock_mhz / params.max_clock_mhz)
    assert x.static_power_w / x.idle_power_w == pytest.approx(
        params.static_power_w / params.idle_power_w)
    assert x.v_floor == params.v_floor and x.alpha_predictors == params.alpha_predictors


def test_shipped_sets_load_and_h200_is_marked_extrapolated() -> None:
    sets = shipped_params()
    assert {"a100-sxm4", "v100-pcie", "h200"} <= set(sets)
    h200 = params_for_device("NVIDIA H200")
    assert h200.name == "h200" and h200.provenance == "extrapolated"
    assert h200.caveat and "no measured H200" in h200.caveat
    assert len(h200.supported_clocks_mhz) == 110 and h200.max_clock_mhz == 1980
    for s in sets.values():
        assert s.sources, s.name
        if s.provenance == "calibrated":
            assert dict(s.fit)["n_sweeps"] >= 20
