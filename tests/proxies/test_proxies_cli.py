import json
import subprocess
import sys
from pathlib import Path

from nasenergy.proxies.cli import main

from proxy_nets import SKIP_CELL, ZERO_CELL

ROOT = Path(__file__).resolve().parents[2]


def test_json_lists_each_proxy_with_its_cost(capsys):
    assert main(["--arch", ZERO_CELL, "--dataset", "ImageNet16-120", "--batch-size", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["proxies"]) == {"synflow", "jacov", "naswot", "snip", "grad_norm", "flops", "params"}
    assert out["proxies"]["jacov"]["score"] == "-inf" and out["proxies"]["jacov"]["cost_s"] > 0
    assert out["input_shape"] == [3, 16, 16] and out["num_classes"] == 120


def test_text_output_and_a_subset(capsys):
    assert main(["--arch", SKIP_CELL, "--proxies", "params,flops"]) == 0
    out = capsys.readouterr().out
    assert "params" in out and "flops" in out and "synflow" not in out and "measured" in out


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nasenergy.proxies", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_help_bad_flags_and_bad_archs():
    assert _run("--help").returncode == 0
    for args in (("--arch", SKIP_CELL, "--colour", "red"), ("--arch", "|bogus~0|"),
                 ("--arch", SKIP_CELL, "--proxies", "fisher"), ("--arch", SKIP_CELL, "--batch-size", "1"),
                 ("--arch", SKIP_CELL, "--device", "tpu"), ("--arch", SKIP_CELL, "--recorded", "--table", "/nope.csv")):
        p = _run(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("error:"), (args, p.stderr)
