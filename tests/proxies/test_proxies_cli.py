import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("flags", [
    ["--seed", "4294967296"], ["--seed", "-1"], ["--init-seed", "18446744073709551616"], ["--init-seed", "-5"],
    ["--batch-size", "100000"], ["--batch-size", "x"],
])
def test_seeds_and_batch_sizes_out_of_range_are_one_line(flags, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--arch", SKIP_CELL, "--proxies", "jacov", *flags])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument ") and err.count("\n") == 1 and "expected a whole number" in err


def test_a_binary_or_cut_table_is_one_line(tmp_path, capsys):
    from nasenergy.proxies.table import default_table_path

    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    shipped = default_table_path("tss").read_bytes()
    cut_gz = tmp_path / "cut.csv.gz"
    cut_gz.write_bytes(shipped[: len(shipped) // 3])
    lines = gzip.decompress(shipped).decode().splitlines(keepends=True)
    bad_value = tmp_path / "bad.csv"
    header, first = lines[0], lines[1].split(",")
    first[1] = "zero"  # an arch_index that is no number
    bad_value.write_text(header + ",".join(first))
    for table, needle in ((binary, "is not a readable proxy table"), (cut_gz, "is not a readable proxy table"),
                          (bad_value, "ValueError")):
        assert main(["--arch", SKIP_CELL, "--recorded", "--table", str(table)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and needle in err, err
