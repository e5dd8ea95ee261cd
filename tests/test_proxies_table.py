"""experiments/proxies_table.py: resumable chunks, --limit, merge into the gzip table the package reads."""

import gzip

import pytest

pytest.importorskip("torch")

from nasenergy.proxies.table import ProxyTable, read_rows  # noqa: E402
from search_spaces import get_space  # noqa: E402

CELLS = ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|",
         "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|",
         "|nor_conv_1x1~0|+|none~0|none~1|+|none~0|none~1|none~2|")


@pytest.fixture
def builder(load_experiment, monkeypatch):
    mod = load_experiment("proxies_table")
    space = get_space("tss")
    nets = sorted({(space.index(space.deployed_representative(c)), str(space.deployed_representative(c))) for c in CELLS})
    monkeypatch.setattr(mod, "networks", lambda space, *a, **k: nets)
    return mod, nets


def test_measure_resumes_and_merge_writes_the_table(builder, tmp_path, capsys):
    mod, nets = builder
    chunks = tmp_path / "chunks"
    common = ["measure", "--chunk-dir", str(chunks), "--dataset", "ImageNet16-120", "--batch-size", "4"]
    assert mod.main([*common, "--limit", "1"]) == 0
    assert len(mod.done_keys(chunks)) == 1
    assert mod.main(common) == 0
    assert mod.done_keys(chunks) == {("ImageNet16-120", i) for i, _ in nets}
    assert mod.main(common) == 0 and "0 rows to compute" in capsys.readouterr().out
    other = ["measure", "--chunk-dir", str(tmp_path / "new"), "--dataset", "ImageNet16-120", "--skip-dir", str(chunks)]
    assert mod.main(other) == 0 and "0 rows to compute" in capsys.readouterr().out
    out = tmp_path / "tss_proxies.csv.gz"
    assert mod.main(["merge", "--out", str(out), *map(str, chunks.glob("*.csv"))]) == 0
    printed = capsys.readouterr().out
    assert "| device | cpu |" in printed and "gaussian, batch size 4" in printed
    first = out.read_bytes()
    assert mod.main(["merge", "--out", str(out), *map(str, chunks.glob("*.csv"))]) == 0
    assert out.read_bytes() == first  # reproducible byte for byte
    rows = read_rows(out)
    assert [int(r["arch_index"]) for r in rows] == sorted(i for i, _ in nets)
    table = ProxyTable(rows, get_space("tss"))
    assert table.report(CELLS[1], "ImageNet16-120")["params"].source == "recorded"
    assert gzip.decompress(first).decode().count("\n") == len(nets) + 1


def test_sharding_and_sampling_split_the_work(load_experiment):
    mod = load_experiment("proxies_table")
    nets = [(i, f"a{i}") for i in range(10)]
    shards = [mod.todo(nets, ["cifar10"], set(), shard=(k, 3)) for k in range(3)]
    assert sorted(i for s in shards for _, i, _ in s) == list(range(10))
    sample = mod.todo(nets, ["cifar10", "cifar100"], {("cifar10", 0)}, sample=4, sample_seed=1)
    assert len({i for _, i, _ in sample}) <= 4 and ("cifar10", 0, "a0") not in sample
    assert mod.todo(nets, ["cifar10"], set(), limit=3) == [("cifar10", i, f"a{i}") for i in range(3)]


def test_bad_arguments_exit_2(load_experiment, capsys):
    mod = load_experiment("proxies_table")
    with pytest.raises(SystemExit) as e:
        mod.main(["measure", "--chunk-dir", "x", "--shard", "3/2"])
    assert e.value.code == 2
    assert mod.main(["measure", "--chunk-dir", "x", "--device", "tpu"]) == 2


def test_the_real_network_lists(load_experiment):
    mod = load_experiment("proxies_table")
    assert len(mod.networks(get_space("sss"))) == 4096
