"""Run-folder readers on malformed files: a one-line `NasEnergyError`, never a Python error.

A real run folder's ``candidates.csv``, ``config.json`` and ``env.json`` are damaged at random
(a cell or JSON value replaced, the file cut short, bytes inserted); `load_run` must then either
read a record whose properties work, or refuse it in one line."""

from __future__ import annotations

import copy
import csv
import functools
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_mutation import JSON_VALUES, json_paths, mutate

from nasenergy.errors import NasEnergyError, UsageError
from nasenergy.run.files import CANDIDATES_CSV, CONFIG_JSON, ENV_JSON, load_run
from nasenergy.run.objectives import points_of

FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CELLS = st.text(max_size=12) | st.sampled_from(["", "nan", "inf", "1.5", "-3", "true", "x,y", '"', "\x00", "1e400"])


@functools.cache
def _run_folder() -> Path:
    """A small finished run (made once per session)."""
    from fake_parts import TABLE_ENV, fake_components, write_table

    from nasenergy.search import SearchConfig, run_search
    from search_spaces import get_space

    root = Path(tempfile.mkdtemp(prefix="nasenergy-fuzz-"))
    previous = os.environ.get(TABLE_ENV)
    os.environ[TABLE_ENV] = str(write_table(root / "table.csv", get_space("tss")))
    try:
        run_search(SearchConfig(budget=4, dvfs="none", filter="none", quiet=True, out=str(root / "run")),
                   components_factory=fake_components)
    finally:
        if previous is None:
            del os.environ[TABLE_ENV]
        else:
            os.environ[TABLE_ENV] = previous
    return root / "run"


def _exercise(run_dir: Path) -> None:
    """Read the run and use every property a reader uses."""
    try:
        record = load_run(run_dir)
    except NasEnergyError as exc:
        assert "\n" not in str(exc), str(exc)
        return
    assert isinstance(record.name, str)
    objectives = record.objectives
    points_of(record.evaluated, objectives)
    assert all(isinstance(r["trial_number"], int) for r in record.rows)
    len(record.front)


def _copy() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="nasenergy-fuzz-case-"))
    shutil.copytree(_run_folder(), folder / "run", ignore=shutil.ignore_patterns("*.png", "*.journal", "*.sqlite"))
    return folder / "run"



@FUZZ
@given(data=st.data())
def test_a_damaged_candidates_file_is_read_or_refused_in_one_line(data):
    run_dir = _copy()
    try:
        path = run_dir / CANDIDATES_CSV
        rows = list(csv.reader(io.StringIO(path.read_text())))
        how = data.draw(st.sampled_from(["cell", "cut", "insert", "extra"]))
        if how == "cell":
            r = data.draw(st.integers(0, len(rows) - 1))
            c = data.draw(st.integers(0, len(rows[r]) - 1))
            rows[r][c] = data.draw(CELLS)
        elif how == "extra":
            rows[data.draw(st.integers(1, len(rows) - 1))].append(data.draw(CELLS))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        raw = buf.getvalue().encode()
        if how == "cut":
            raw = raw[: data.draw(st.integers(0, len(raw)))]
        elif how == "insert":
            at = data.draw(st.integers(0, len(raw)))
            raw = raw[:at] + data.draw(st.binary(min_size=1, max_size=8)) + raw[at:]
        path.write_bytes(raw)
        _exercise(run_dir)
    finally:
        shutil.rmtree(run_dir.parent)


@FUZZ
@given(data=st.data())
def test_a_damaged_config_or_env_is_read_or_refused_in_one_line(data):
    run_dir = _copy()
    try:
        path = run_dir / data.draw(st.sampled_from([CONFIG_JSON, ENV_JSON]))
        if data.draw(st.booleans()):
            doc = copy.deepcopy(json.loads(path.read_text()))
            doc = mutate(doc, data.draw(st.sampled_from(json_paths(doc))), data.draw(JSON_VALUES))
            path.write_text(json.dumps(doc))
        else:
            path.write_bytes(data.draw(st.binary(max_size=60)))
        _exercise(run_dir)
    finally:
        shutil.rmtree(run_dir.parent)


@pytest.mark.parametrize(
    ("file", "content", "needle"),
    [
        (CONFIG_JSON, "[]", "must hold a JSON object"),
        (CONFIG_JSON, '{"objectives": "accuracy"}', "objectives must be"),
        (CONFIG_JSON, '{"objectives": ["accuracy", 3]}', "objectives must be"),
        (ENV_JSON, "\xff", "not valid JSON"),
        (CANDIDATES_CSV, "trial_number,outcome\nx,evaluated\n", "line 2, column trial_number"),
        (CANDIDATES_CSV, "trial_number,outcome,on_front\n1,evaluated,maybe\n", "true or false"),
        (CANDIDATES_CSV, "trial_number,outcome\n1,evaluated,extra\n", "more fields"),
        (CANDIDATES_CSV, "trial_number,outcome\n,evaluated\n", "trial_number is empty"),
    ],
)
def test_named_malformations(tmp_path, file, content, needle):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / CANDIDATES_CSV).write_text("trial_number,outcome\n0,evaluated\n")
    (run_dir / file).write_bytes(content.encode("latin-1"))
    with pytest.raises(UsageError, match=needle) as ei:
        load_run(run_dir)
    assert "\n" not in str(ei.value)
