import math

import pytest

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.proxies.compute import compute_arch_proxies
from nasenergy.proxies.table import TABLE_COLUMNS, ProxyTable, read_proxy_table, read_rows, report_row

from proxy_nets import SKIP_CELL, ZERO_CELL


def write_table(path, rows):
    import csv

    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        w.writerows(rows)
        f.write("ImageNet16-120,12")  # a torn last line, as an interrupted writer leaves
    return path


@pytest.fixture(scope="module")
def table_rows(tss):
    rows = []
    for arch in (ZERO_CELL, SKIP_CELL):
        rep = compute_arch_proxies(tss, arch, "ImageNet16-120", batch_size=4)
        rows.append(report_row(rep, tss.index(tss.deployed_representative(arch)), torch_version="x",
                               measured_at="2026-01-01T00:00:00Z"))
    return rows, rep


def test_a_recorded_row_answers_every_cell_of_its_deployed_class(tss, table_rows, tmp_path):
    rows, live = table_rows
    table = ProxyTable(read_rows(write_table(tmp_path / "t.csv", rows)), tss)
    assert len(table) == 2 and table.datasets() == ("ImageNet16-120",)
    rec = table.report(SKIP_CELL, "ImageNet16-120")
    assert all(r.source == "recorded" for r in rec)
    for name in live.names():
        assert rec[name].score == pytest.approx(live[name].score, rel=1e-9)
    # another spelling of the all-none network: a cell whose every input edge to node 3 is none
    other = "|nor_conv_3x3~0|+|none~0|none~1|+|none~0|none~1|none~2|"
    assert tss.deployed_key(other) == tss.deployed_key(ZERO_CELL)
    zero = table.report(other, "ImageNet16-120")
    assert zero["naswot"].score == -math.inf and "singular" in zero["naswot"].reason
    assert zero.network == other


def test_missing_rows_and_files_are_one_line_errors(tss, table_rows, tmp_path):
    rows, _ = table_rows
    table = ProxyTable(rows, tss)
    with pytest.raises(UsageError, match="no row"):
        table.report(SKIP_CELL, "cifar10")
    with pytest.raises(DataNotFoundError):
        read_proxy_table("tss", tmp_path / "absent.csv.gz")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(UsageError, match="not a proxy table"):
        read_rows(tmp_path / "bad.csv")
