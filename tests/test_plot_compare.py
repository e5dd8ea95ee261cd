"""Comparing runs: seeds of one setting form a group, drawn as a median with an interquartile band."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nasenergy import plot
from nasenergy.run import plots
from nasenergy.run import plots_axes as run_plots_axes
from nasenergy.run.files import RunRecord, load_run
from nasenergy.run.front import RunFront
from nasenergy.run.objectives import objectives_for

OBJS = ["accuracy", "throughput", "energy"]


def _rows(n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = [
        {"trial_number": i, "outcome": "evaluated", "accuracy_pct": float(rng.uniform(60, 95)),
         "throughput_img_per_s": float(rng.uniform(1e4, 1e6)), "energy_j_per_img": float(rng.uniform(1e-4, 1e-2)),
         "measure_throughput_img_per_s": float(rng.uniform(1e4, 1e6)),
         "measure_energy_j_per_img": float(rng.uniform(1e-4, 1e-2)),
         "accuracy_source": "recorded", "throughput_source": "modelled", "energy_source": "modelled",
         "datetime_complete": f"2026-01-01T00:00:{i:02d}"}
        for i in range(n)
    ]
    rows = [r.as_row() for r in RunFront.mark(rows, objectives_for(OBJS)).records]
    return rows


def _write_run(folder: Path, seed: int, n: int = 12, **config) -> Path:
    from nasenergy.run import files as run_files

    folder.mkdir(parents=True)
    run_files.write_tables(folder, _rows(n, seed), objectives_for(OBJS))
    cfg = {"study_name": f"tss-x-{config.get('filter', 'dominance')}-seed{seed}", "objectives": OBJS,
           "space": "tss", "dataset": "cifar10", "min_accuracy": 70.0, "seed": seed, "out": str(folder),
           "filter": "dominance", "target_recall": 0.95, "sampler": "tpe", **config}
    run_files.write_json(folder / run_files.CONFIG_JSON, cfg)
    return folder


def _record(name: str, **config) -> RunRecord:
    return RunRecord(Path(name), {"study_name": name, "objectives": OBJS, **config}, [], {})


def test_runs_group_by_their_settings_without_the_seed():
    runs = [
        _record("a1", filter="dominance", target_recall=0.95, seed=1, out="/r/a1"),
        _record("b1", filter="none", target_recall=0.95, seed=1, out="/r/b1"),
        _record("a2", filter="dominance", target_recall=0.95, seed=2, out="/r/a2"),
        _record("c1", filter="dominance", target_recall=0.8, seed=1, out="/r/c1"),
        _record("b2", filter="none", target_recall=0.8, seed=2, out="/r/b2"),  # no filter: recall means nothing
    ]
    groups = plot.group_runs(runs)
    assert [[r.name for r in g] for g in groups] == [["a1", "a2"], ["b1", "b2"], ["c1"]]
    assert plot.group_labels(groups) == ["filter dominance, target recall 0.95", "filter none",
                                         "filter dominance, target recall 0.8"]


def test_groups_differing_in_an_unnamed_setting_are_told_apart_by_its_key():
    groups = plot.group_runs([_record("a", max_candidates=10, seed=1), _record("b", max_candidates=20, seed=1)])
    assert plot.group_labels(groups) == ["max candidates 10", "max candidates 20"]


def test_study_names_of_a_group_are_written_once_with_their_differing_parts():
    assert plot.study_pattern(["tss-tpe-seed1", "tss-tpe-seed2", "tss-tpe-seed13"]) == "tss-tpe-seed{1,2,13}"
    assert plot.study_pattern(["only", "only"]) == "only"


def test_median_and_band_are_the_quartiles_at_each_evaluation():
    curves = [np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 1.0, 4.0, 4.0]), np.array([2.0, 5.0, 6.0, 8.0]),
              np.array([3.0, 3.0, 3.0])]  # the last stopped early: the median ends with it
    x, median, q25, q75, length = plots.median_band(curves)
    assert length == 3 and x.tolist() == [1, 2, 3]
    # four values per evaluation, linear interpolation: q25 = v1 + 0.75 (v2 - v1), q75 = v3 + 0.25 (v4 - v3)
    assert median.tolist() == [1.5, 2.0, 3.5]
    assert q25.tolist() == [0.75, 1.0, 2.75]
    assert q75.tolist() == [2.25, 3.5, 4.5]
    x, median, q25, q75, _ = plots.median_band([np.array([2.0, 7.0])])
    assert median.tolist() == q25.tolist() == q75.tolist() == [2.0, 7.0]
    with pytest.raises(ValueError):
        plots.median_band([])


def _drawn(monkeypatch) -> list[dict]:
    """For each figure `run_plots_axes._save` writes: its file name, lines, bands and legend texts."""
    seen: list[dict] = []
    save = plots._save

    def spy(fig, path, small_print=""):
        ax = fig.axes[0]
        legend = ax.get_legend()
        seen.append({"file": path.name, "lines": [(line.get_color(), line.get_ydata()) for line in ax.get_lines()],
                     "bands": len([c for c in ax.collections if c.__class__.__name__ == "FillBetweenPolyCollection"
                                   or c.__class__.__name__ == "PolyCollection"]),
                     "points": [(c.get_facecolor()[0].tolist(), c.get_offsets()[:, 1].tolist())
                                for c in ax.collections if c.__class__.__name__ == "PathCollection"],
                     "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
                     "legend_title": legend.get_title().get_text() if legend else "",
                     "small_print": small_print, "title": ax.get_title()})
        return save(fig, path, small_print)

    monkeypatch.setattr(run_plots_axes, "_save", spy)
    return seen


def test_a_comparison_draws_each_group_s_median_band_and_count(tmp_path, monkeypatch):
    seen = _drawn(monkeypatch)
    runs = [_write_run(tmp_path / "runs" / f"a{s}", s) for s in (1, 2, 3)]
    runs.append(_write_run(tmp_path / "runs" / "b1", 7, filter="none"))
    out = tmp_path / "cmp"
    written = plot.plot_runs(runs, out)
    comparison = next(x for x in seen if x["file"] == plot.COMPARISON_PNG)
    assert comparison["legend"] == ["filter dominance (n=3)", "filter none (n=1)"]
    assert "median" in comparison["legend_title"] and "interquartile range" in comparison["legend_title"]
    assert comparison["bands"] == 1  # the group of one run has no band
    # the drawn median is the median of the three runs' curves in the common region
    records = [load_run(r) for r in runs]
    region = plot.comparison_region(records)
    objs = records[0].objectives
    curves = [plots.hypervolume_series(r.evaluated, objs, region)[1] for r in records[:3]]
    (colour_a, drawn_a), (colour_b, drawn_b) = comparison["lines"]
    assert np.allclose(drawn_a, np.median(np.vstack(curves), axis=0))
    assert np.allclose(drawn_b, plots.hypervolume_series(records[3].evaluated, objs, region)[1])
    # the final figure: each run's last value, in the group's colour
    final = next(x for x in seen if x["file"] == plot.FINAL_PNG)
    (face_a, ys_a), (face_b, ys_b) = final["points"]
    assert np.allclose(sorted(ys_a), sorted(c[-1] for c in curves))
    from matplotlib.colors import to_rgba
    assert np.allclose(face_a, to_rgba(colour_a)) and np.allclose(face_b, to_rgba(colour_b))
    assert "seed{1,2,3}" in comparison["small_print"] and "tss-x-none-seed7" in comparison["small_print"]
    assert "one deploy region for all 4 runs" in comparison["small_print"]
    assert "TSS on CIFAR-10" in comparison["title"]
    for name in (plot.COMPARISON_PNG, plot.FINAL_PNG):
        assert (out / name) in written and (out / name).read_bytes()[:4] == b"\x89PNG"
        assert (out / name).with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"


def test_the_comparison_region_is_one_for_every_run_from_all_their_measurements(tmp_path):
    runs = [load_run(_write_run(tmp_path / f"r{s}", s)) for s in (1, 2)]
    region = plot.comparison_region(runs)
    rows = [row for r in runs for row in r.rows]
    assert region.accuracy_floor_pct == 70.0
    assert region.throughput_ref_img_per_s == min(float(x["measure_throughput_img_per_s"]) for x in rows)
    assert region.energy_ref_j_per_img == max(float(x["measure_energy_j_per_img"]) for x in rows)
    assert plot.comparison_region(runs[::-1]) == region


def test_the_command_writes_png_and_pdf_to_out_and_nothing_into_the_current_folder(tmp_path, monkeypatch, capsys):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    runs = [_write_run(tmp_path / "runs" / f"a{s}", s) for s in (1, 2)]
    out = tmp_path / "figures"
    assert plot.main([*map(str, runs), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [plot.COMPARISON_PNG, plot.FINAL_PNG, "hypervolume_comparison.pdf", "hypervolume_final.pdf"])
    assert not list(here.iterdir())
    printed = capsys.readouterr().out
    assert str(out / plot.COMPARISON_PNG) in printed and str(out / plot.FINAL_PNG) in printed


def test_the_same_run_twice_is_refused(tmp_path, capsys):
    """Two spellings of one folder would make a "median over seeds" of one run."""
    run = _write_run(tmp_path / "runs" / "a1", 1)
    assert plot.main([str(run), str(tmp_path / "runs" / ".." / "runs" / "a1")]) == 2
    err = capsys.readouterr().err
    assert "given twice" in err and err.count("\n") == 1


def test_an_out_that_is_a_file_or_unwritable_is_one_line(tmp_path, capsys, monkeypatch):
    import errno

    runs = [_write_run(tmp_path / "runs" / f"a{s}", s) for s in (1, 2)]
    a_file = tmp_path / "a_file"
    a_file.write_text("mine\n")
    assert plot.main([*map(str, runs), "--out", str(a_file)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert plot.main([str(runs[0]), "--out", str(a_file / "sub")]) == 2  # a file where a folder is expected
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write ") and err.count("\n") == 1
    assert a_file.read_text() == "mine\n"

    from matplotlib.figure import Figure

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Figure, "savefig", read_only)
    assert plot.main([str(runs[0])]) == 2
    assert capsys.readouterr().err.endswith(": Read-only file system\n")


def test_names_too_long_to_look_up_are_one_line(tmp_path, capsys):
    long_name = tmp_path / ("x" * 300)
    run = _write_run(tmp_path / "runs" / "a1", 1)
    for argv in ([str(long_name)], [str(run), "--out", str(long_name / "figures")]):
        assert plot.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "File name too long" in err and err.count("\n") == 1, err
