"""The plots are drawn from rows, without a display, and name their provenance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nasenergy import plots
from nasenergy.search.objectives import hv_curve, objectives_for, points_of
from nasenergy.search.run_files import RunRecord, mark_front, number_evaluations


def _rows(n: int = 12, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = [
        {"trial_number": i, "outcome": "evaluated", "accuracy_pct": float(rng.uniform(40, 95)),
         "throughput_img_per_s": float(rng.uniform(1e4, 1e6)), "energy_j_per_img": float(rng.uniform(1e-4, 1e-2)),
         "accuracy_source": "recorded", "throughput_source": "modelled", "energy_source": "modelled",
         "datetime_complete": f"2026-01-01T00:00:{i:02d}"}
        for i in range(n)
    ]
    number_evaluations(rows)
    mark_front(rows, objectives_for(["accuracy", "throughput", "energy"]))
    return rows


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_draw_run_writes_three_pngs(tmp_path):
    rec = RunRecord(tmp_path, {"study_name": "s", "objectives": ["accuracy", "throughput", "energy"]}, _rows(), {})
    written = plots.draw_run(rec)
    assert sorted(p.name for p in written) == sorted(
        [plots.PROJECTIONS_PNG, plots.PARETO_3D_PNG, plots.HYPERVOLUME_PNG]
    )
    assert all(_is_png(p) for p in written)


def test_two_objectives_have_no_3d_view(tmp_path):
    rows = _rows()
    rec = RunRecord(tmp_path, {"objectives": ["accuracy", "energy"]}, rows, {})
    names = {p.name for p in plots.draw_run(rec)}
    assert plots.PARETO_3D_PNG not in names and plots.PROJECTIONS_PNG in names


def test_hypervolume_series_matches_the_curve():
    rows = _rows()
    objs = objectives_for(["accuracy", "throughput", "energy"])
    x, y = plots.hypervolume_series(rows, objs)
    assert x.tolist() == list(range(1, len(rows) + 1))
    assert np.allclose(y, hv_curve(points_of(rows, objs), objs))


def test_provenance_line_names_every_source():
    assert plots.provenance_line(_rows(2)) == "accuracy: recorded; throughput: modelled; energy: modelled"
    assert plots.provenance_line([]) == "no evaluated candidates"


def test_overlay_of_two_runs(tmp_path):
    objs = objectives_for(["accuracy", "throughput", "energy"])
    curves = {"a": plots.hypervolume_series(_rows(seed=1), objs), "b": plots.hypervolume_series(_rows(seed=2), objs)}
    out = plots.plot_hypervolume(curves, tmp_path / "cmp.png", title="t")
    assert _is_png(out)
    with pytest.raises(KeyError):
        plots.hypervolume_series([{"outcome": "evaluated"}], objectives_for(["speed"]))


def _write_run(folder: Path, name: str, objectives: list[str], seed: int) -> Path:
    from nasenergy.search import run_files

    folder.mkdir()
    run_files.write_tables(folder, _rows(seed=seed), objectives_for(objectives))
    run_files.write_json(folder / run_files.CONFIG_JSON, {"study_name": name, "objectives": objectives})
    return folder


def test_plot_command_redraws_and_compares(tmp_path, capsys):
    from nasenergy.plot import COMPARISON_PNG, main

    a = _write_run(tmp_path / "a", "run-a", ["accuracy", "throughput", "energy"], 1)
    b = _write_run(tmp_path / "b", "run-b", ["accuracy", "throughput", "energy"], 2)
    assert main([str(a), str(b), "--out", str(tmp_path)]) == 0
    assert _is_png(tmp_path / COMPARISON_PNG)
    assert _is_png(a / plots.HYPERVOLUME_PNG) and _is_png(b / plots.PROJECTIONS_PNG)
    assert str(tmp_path / COMPARISON_PNG) in capsys.readouterr().out


def test_plot_command_rejects_bad_input_in_one_line(tmp_path, capsys):
    from nasenergy.plot import main

    assert main([str(tmp_path / "missing")]) == 2
    a = _write_run(tmp_path / "a", "run-a", ["accuracy", "throughput", "energy"], 1)
    c = _write_run(tmp_path / "c", "run-c", ["accuracy", "energy"], 3)
    assert main([str(a), str(c)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
    assert "different objectives" in err[1]
