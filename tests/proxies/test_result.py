import json
import math

import pytest

from nasenergy.errors import UsageError
from nasenergy.proxies.result import ProxyResult


def _result(score: float, source: str = "measured") -> ProxyResult:
    return ProxyResult("jacov", score, "score", 0.1, source, 0, 64, "gaussian", "cpu")


def test_a_non_finite_score_is_json_safe():
    r = _result(-math.inf)
    assert not r.finite
    assert json.loads(json.dumps(r.to_dict()))["score"] == "-inf"
    assert _result(-3.5).to_dict()["score"] == -3.5


def test_the_source_is_checked():
    with pytest.raises(UsageError, match="source"):
        _result(1.0, "modelled")
