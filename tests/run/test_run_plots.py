"""The plots are drawn from rows, without a display, and name their provenance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nasenergy.run import plots
from nasenergy.run import plots_axes as run_plots_axes
from nasenergy.run.files import RunRecord
from nasenergy.run.front import RunFront
from nasenergy.run.objectives import hv_curve, objectives_for, points_of


def _rows(n: int = 12, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = [
        {"trial_number": i, "outcome": "evaluated", "accuracy_pct": float(rng.uniform(40, 95)),
         "throughput_img_per_s": float(rng.uniform(1e4, 1e6)), "energy_j_per_img": float(rng.uniform(1e-4, 1e-2)),
         "accuracy_source": "recorded", "throughput_source": "modelled", "energy_source": "modelled",
         "datetime_complete": f"2026-01-01T00:00:{i:02d}"}
        for i in range(n)
    ]
    rows = [r.as_row() for r in RunFront.mark(rows, objectives_for(["accuracy", "throughput", "energy"])).records]
    return rows


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_draw_run_writes_three_pngs(tmp_path):
    rec = RunRecord(tmp_path, {"study_name": "s", "objectives": ["accuracy", "throughput", "energy"]}, _rows(), {})
    written = plots.draw_run(rec)
    assert sorted(p.name for p in written) == sorted(
        [plots.PROJECTIONS_PNG, plots.HYPERVOLUME_PNG]
    )
    assert all(_is_png(p) for p in written)


def test_two_objectives_draw_their_projection(tmp_path):
    rows = _rows()
    rec = RunRecord(tmp_path, {"objectives": ["accuracy", "energy"]}, rows, {})
    names = {p.name for p in plots.draw_run(rec)}
    assert names == {plots.PROJECTIONS_PNG, plots.HYPERVOLUME_PNG}


def test_hypervolume_series_matches_the_curve():
    rows = _rows()
    objs = objectives_for(["accuracy", "throughput", "energy"])
    x, y = plots.hypervolume_series(rows, objs)
    assert x.tolist() == list(range(1, len(rows) + 1))
    assert np.allclose(y, hv_curve(points_of(rows, objs), objs))


def test_provenance_line_names_every_source():
    assert plots.provenance_line(_rows(2)) == "accuracy: recorded; throughput: modelled; energy: modelled"
    assert plots.provenance_line([]) == "no evaluated candidates"
    two = objectives_for(["accuracy", "throughput"])
    assert plots.provenance_line(_rows(2), two) == "accuracy: recorded; throughput: modelled"


def test_overlay_of_two_runs(tmp_path):
    objs = objectives_for(["accuracy", "throughput", "energy"])
    curves = {"a": plots.hypervolume_series(_rows(seed=1), objs), "b": plots.hypervolume_series(_rows(seed=2), objs)}
    out = plots.plot_hypervolume(curves, tmp_path / "cmp.png", objectives=objs, title="t")
    assert _is_png(out)
    with pytest.raises(KeyError):
        plots.hypervolume_series([{"outcome": "evaluated"}], objectives_for(["speed"]))


def _write_run(folder: Path, name: str, objectives: list[str], data_seed: int, **config) -> Path:
    from nasenergy.run import files as run_files

    folder.mkdir(parents=True)
    run_files.write_tables(folder, _rows(seed=data_seed), objectives_for(objectives))
    run_files.write_json(folder / run_files.CONFIG_JSON, {"study_name": name, "objectives": objectives, **config})
    return folder


def _axis_texts(monkeypatch) -> list[dict]:
    """Capture, for every axes saved by `run_plots_axes._save`, its labels, tick labels and legend texts."""
    seen: list[dict] = []
    save = plots._save

    def spy(fig, path, small_print=""):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            ticks = {}
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
                ticks[name] = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            seen.append({"file": path.name, "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "ticks": ticks,
                         "legend": [t.get_text() for t in legend.get_texts()] if legend else []})
        return save(fig, path, small_print)

    monkeypatch.setattr(run_plots_axes, "_save", spy)
    return seen


def test_every_axis_has_a_unit(tmp_path, monkeypatch):
    seen = _axis_texts(monkeypatch)
    rec = RunRecord(tmp_path, {"study_name": "s", "objectives": ["accuracy", "throughput", "energy"]}, _rows(40), {})
    plots.draw_run(rec)
    flat = list(seen)
    assert len(flat) == 4  # three projections and the hypervolume curve
    for axes in flat:
        for label in (axes["xlabel"], axes["ylabel"]):
            assert label.endswith(")") and "(" in label, label
    hv = next(a for a in seen if a["file"] == plots.HYPERVOLUME_PNG)
    assert "% × img/s × img/J" in hv["ylabel"]


def test_two_objective_hypervolume_unit(tmp_path, monkeypatch):
    seen = _axis_texts(monkeypatch)
    rec = RunRecord(tmp_path, {"study_name": "s", "objectives": ["accuracy", "throughput"]}, _rows(), {})
    plots.draw_run(rec)
    hv = next(a for a in seen if a["file"] == plots.HYPERVOLUME_PNG)
    assert "(% × img/s;" in hv["ylabel"] and "img/J" not in hv["ylabel"]


@pytest.mark.parametrize("spread", [1.3, 30.0, 1e4])
def test_projection_tick_labels_never_overlap(tmp_path, monkeypatch, spread):
    seen = _axis_texts(monkeypatch)
    rows = _rows(60)
    rng = np.random.default_rng(3)
    for r in rows:  # throughput and energy over a narrow or a wide range
        r["throughput_img_per_s"] = float(2e4 * rng.uniform(1, spread))
        r["energy_j_per_img"] = float(3e-5 * rng.uniform(1, spread))
    mark = [dict(r, on_front=False) for r in rows]
    plots.plot_projections(mark, objectives_for(["accuracy", "throughput", "energy"]), tmp_path / "p.png")
    assert len(seen) == 3
    for axes in seen:
        for name in ("x", "y"):
            boxes = [box for _, box in axes["ticks"][name]]
            assert len(boxes) >= 2, (axes, name)
            for a, b in zip(boxes, boxes[1:]):
                assert not a.overlaps(b), [text for text, _ in axes["ticks"][name]]


def test_comparison_legend_names_the_settings_that_differ_and_no_study(tmp_path, monkeypatch):
    from nasenergy.plot import COMPARISON_PNG, plot_runs

    seen = _axis_texts(monkeypatch)
    objs = ["accuracy", "throughput", "energy"]
    a = _write_run(tmp_path / "deep" / "a", "run-a", objs, 1, filter="dominance", target_recall=0.8, seed=0)
    b = _write_run(tmp_path / "deep" / "b", "run-b", objs, 2, filter="none", target_recall=0.95, seed=0)
    plot_runs([a, b], tmp_path)
    legend = next(x for x in seen if x["file"] == COMPARISON_PNG)["legend"]
    assert legend == ["filter dominance, target recall 0.8 (n=1)", "filter none (n=1)"]
    assert not any(str(tmp_path) in text or "run-" in text for text in legend)


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


def test_a_comparison_goes_next_to_the_runs_never_into_the_current_folder(tmp_path, capsys, monkeypatch):
    from nasenergy.plot import COMPARISON_PNG, main

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    runs = tmp_path / "runs"
    a = _write_run(runs / "a", "run-a", ["accuracy", "throughput", "energy"], 1)
    b = _write_run(runs / "b", "run-b", ["accuracy", "throughput", "energy"], 2)
    assert main([str(a), str(b)]) == 0
    assert _is_png(runs / COMPARISON_PNG) and not list(elsewhere.iterdir())
    assert str(runs / COMPARISON_PNG) in capsys.readouterr().out


def test_a_run_s_figures_have_a_readable_title_and_a_vector_copy(tmp_path):
    rows = [dict(r, measure_device="NVIDIA H200") for r in _rows()]
    cfg = {"study_name": "tss-cifar10-acc.thr.energy-fp16-b1024-x", "space": "tss", "dataset": "cifar10",
           "precision": "fp16", "batch_size": 1024, "objectives": ["accuracy", "throughput", "energy"]}
    objs = objectives_for(cfg["objectives"])
    assert plots.readable_title(cfg, rows, objs) == \
        "TSS on CIFAR-10: accuracy, throughput, energy; NVIDIA H200 (fp16, batch 1024)"
    written = plots.draw_run(RunRecord(tmp_path, cfg, rows, {}))
    for png in written:
        assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"


def test_evaluations_below_the_accuracy_floor_are_left_out_and_counted(tmp_path, monkeypatch):
    rows = _rows(30)
    floor = sorted(r["accuracy_pct"] for r in rows)[5]  # five rows lie below it
    titles = []
    real = plots._save

    def spy(fig, path, small_print=""):
        titles.append((path.name, fig._suptitle.get_text() if fig._suptitle else "",
                       sum(len(c.get_offsets()) for ax in fig.axes[:1] for c in ax.collections)))
        return real(fig, path, small_print)

    monkeypatch.setattr(run_plots_axes, "_save", spy)
    cfg = {"study_name": "s", "objectives": ["accuracy", "throughput", "energy"], "min_accuracy": floor}
    plots.draw_run(RunRecord(tmp_path, cfg, rows, {}))
    plots.draw_run(RunRecord(tmp_path, {k: v for k, v in cfg.items() if k != "min_accuracy"}, rows, {}))
    (_, with_floor, shown), (_, without, shown_all) = [t for t in titles if t[0] == plots.PROJECTIONS_PNG]
    assert f"5 of 30 evaluations below the accuracy floor {floor:g} % are not shown" in with_floor
    assert "floor" not in without and shown == shown_all - 5 == 25
