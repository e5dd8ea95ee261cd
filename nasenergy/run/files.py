"""What a run leaves in its folder, and how to read it back.

* ``candidates.csv``: one row per candidate (trial), filtered ones too, with every figure and its
  provenance (``measure_source``, ``accuracy_source``, ``dvfs_source``, ``throughput_source``,
  ``energy_source``). ``accuracy_pct`` is the search metric the accuracy objective uses
  (NATS protocol: validation accuracy after 12 epochs, ``accuracy_split``/``accuracy_schedule``);
  ``final_accuracy_pct`` is the figure to report (test accuracy after 200 epochs, mean over the
  recorded runs, ``final_split``/``final_schedule``/``final_trial``).
* ``pareto_front.csv``: the evaluated candidates on the Pareto front of the chosen objectives.
* ``report.md``, ``env.json``, ``config.json`` and the PNG plots.

Rows are built from the Optuna study alone (its trials' user attributes), so the files can be
rewritten at any time, by any worker, and after a crash.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy.errors import DataNotFoundError, UsageError, first_line, writing
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.run.candidate_schema import CANDIDATE_COLUMNS
from nasenergy.run.front import RunFront
from nasenergy.run.objectives import OBJECTIVES, SearchObjective, objectives_for, points_of
from nasenergy.run.outcomes import OUTCOMES
from nasenergy.run.record import CandidateRecord
from search_spaces import dataset_names, space_names

PRIVATE_FILE_MODE = 0o600
"""The mode of a file only its owner may read (a run's files that name a storage with a password)."""

CANDIDATES_CSV = "candidates.csv"
FRONT_CSV = "pareto_front.csv"
CONFIG_JSON = "config.json"
ENV_JSON = "env.json"
REPORT_MD = "report.md"

__all__ = [
    "CANDIDATES_CSV",
    "CANDIDATE_COLUMNS",
    "CONFIG_JSON",
    "ENV_JSON",
    "FRONT_CSV",
    "OUTCOMES",
    "REPORT_MD",
    "RunRecord",
    "csv_text",
    "load_run",
    "read_candidates",
    "write_json",
    "write_tables",
    "write_text_atomic",
]


@dataclass(frozen=True)
class RunRecord:
    """A run read back from its folder (or just written): a `nasenergy.run.view.RunView`.

    Attributes:
        run_dir: the folder.
        config: ``config.json`` as a dict.
        rows: every candidate, typed (`CandidateRecord`; plain rows are converted).
        env: ``env.json`` as a dict (empty if missing).
    """

    run_dir: Path
    config: dict[str, Any]
    rows: tuple[CandidateRecord, ...]
    env: dict[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", tuple(r if isinstance(r, CandidateRecord) else CandidateRecord(r)
                                               for r in self.rows))

    @property
    def name(self) -> str:
        """The study name (or the folder name)."""
        return str(self.config.get("study_name") or self.run_dir.name)

    @property
    def objectives(self) -> tuple[SearchObjective, ...]:
        """The run's objectives."""
        return objectives_for(self.config.get("objectives", OBJECTIVE_NAMES))

    @property
    def run_front(self) -> RunFront:
        """The run's evaluations, front and quality, as its files mark them (the front was computed
        once, when they were written; read here for the current ``config``)."""
        return RunFront.read(self.rows, self.objectives, self.config)

    @property
    def evaluated(self) -> tuple[CandidateRecord, ...]:
        """The fully evaluated, non-duplicate candidates in evaluation order."""
        return self.run_front.evaluated

    @property
    def front(self) -> tuple[CandidateRecord, ...]:
        """The candidates on the Pareto front, most accurate first."""
        return self.run_front.members


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse(value: str, kind: str) -> Any:
    if value == "":
        return None
    if kind == "int":
        number = float(value)
        if not number.is_integer():
            raise ValueError(f"{value!r} is not an integer")
        return int(number)
    if kind == "float":
        return float(value)
    if kind == "bool":
        if value.lower() not in ("true", "false"):
            raise ValueError(f"{value!r} is not true or false")
        return value.lower() == "true"
    return value


def write_text_atomic(path: Path, text: str, *, private: bool = False) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (readers never see half).

    With ``private``, the file is readable and writable by its owner only (mode 0600) from the
    moment it exists.

    Raises:
        OutputError: the file cannot be written (its old content, if any, is kept).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with writing(path):  # a full disk, a read-only place: one line; the file keeps its old content
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE if private else 0o666)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                if private:
                    os.fchmod(f.fileno(), PRIVATE_FILE_MODE)  # a left-over temporary file keeps its old mode
                f.write(text)
            tmp.replace(path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """``rows`` as CSV text with a header of ``columns``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_format(r.get(c)) for c in columns])
    return buf.getvalue()


def read_candidates(path: Path) -> list[dict[str, Any]]:
    """Rows of a ``candidates.csv`` (or ``pareto_front.csv``), typed by `CANDIDATE_COLUMNS`.

    Raises:
        DataNotFoundError: no such file.
        UsageError: the file lacks the ``trial_number`` or ``outcome`` column.
    """
    if not path.is_file():
        raise DataNotFoundError(f"{path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        if "trial_number" not in header or "outcome" not in header:
            raise UsageError(f"{path} is not a nasenergy candidates file (no trial_number/outcome column)")
        rows = [_typed_row(path, reader.line_num, row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path} is not a readable CSV file: {type(exc).__name__}: {first_line(exc)}") from None
    if not text.endswith("\n"):  # every line is written whole, ending in a line break
        raise UsageError(f"{path}: its last line is cut short (no line end); run the search command again to "
                         "rebuild the run's files from its study")
    return rows


def _typed_row(path: Path, line: int, row: dict[str | None, Any]) -> dict[str, Any]:
    """One candidates row, typed; raises `UsageError` naming the line and column."""
    if None in row:
        raise UsageError(f"{path}, line {line}: more fields than the header has")
    if any(value is None for value in row.values()):
        raise UsageError(f"{path}, line {line}: fewer fields than the header has (a row cut short)")
    typed = {}
    for column, text in row.items():
        kind = CANDIDATE_COLUMNS.get(str(column), "str")
        try:
            typed[str(column)] = _parse(text or "", kind)
        except ValueError:
            raise UsageError(f"{path}, line {line}, column {column}: {str(text)[:40]!r} is not {_KIND_TEXT[kind]}") from None
    if typed.get("trial_number") is None:
        raise UsageError(f"{path}, line {line}: trial_number is empty")
    return typed


_KIND_TEXT = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object file (``{}`` when missing)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, bad UTF-8 or bad JSON
        raise UsageError(f"{path} is not valid JSON: {first_line(exc)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold a JSON object, not {type(data).__name__}")
    return data


def _check_config(path: Path, config: dict[str, Any]) -> None:
    """The fields of ``config.json`` a reader uses must have their types."""
    objectives = config.get("objectives", ())
    if not (isinstance(objectives, list) and objectives and all(isinstance(o, str) and o in OBJECTIVES
                                                                 for o in objectives)):
        if "objectives" in config:
            raise UsageError(f"{path}: objectives must be a non-empty list of {', '.join(OBJECTIVES)}")
    name = config.get("study_name")
    if name is not None and not isinstance(name, str):
        raise UsageError(f"{path}: study_name must be text")
    if "space" in config and config["space"] not in space_names():
        raise UsageError(f"{path}: space {config['space']!r} is none of {', '.join(space_names())}")
    if "dataset" in config and config["dataset"] not in dataset_names():
        raise UsageError(f"{path}: dataset {config['dataset']!r} is none of {', '.join(dataset_names())}")
    budget = config.get("budget")
    if "budget" in config and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise UsageError(f"{path}: budget must be a positive whole number, got {budget!r}")


def load_run(run_dir: str | Path) -> RunRecord:
    """Read a run folder's ``config.json``, ``candidates.csv`` and ``env.json``.

    Raises:
        DataNotFoundError: the folder or its ``candidates.csv`` is missing.
        UsageError: a file that is malformed, with a one-line message naming it.
    """
    d = Path(run_dir)
    try:
        found = d.is_dir()
    except OSError as exc:  # a name too long, a loop of links
        raise UsageError(f"run folder {d}: {exc.strerror or exc}") from None
    if not found:
        raise DataNotFoundError(f"run folder {d} does not exist")
    rows = read_candidates(d / CANDIDATES_CSV)
    config = _read_json(d / CONFIG_JSON)
    _check_config(d / CONFIG_JSON, config)
    return RunRecord(d, config, tuple(map(CandidateRecord, rows)), _read_json(d / ENV_JSON))


def write_tables(run_dir: Path, rows: Iterable[Mapping[str, Any]], objectives: Sequence[SearchObjective], *,
                 private: bool = False, min_accuracy: float | None = None) -> RunFront:
    """Number the evaluations, mark the front (of the rows at or above ``min_accuracy``;
    `RunFront.mark`) and write both CSV files (mode 0600 if ``private``); returns the marked run."""
    marked = RunFront.mark(rows, objectives, min_accuracy=min_accuracy)
    cols = list(CANDIDATE_COLUMNS)
    write_text_atomic(run_dir / CANDIDATES_CSV, csv_text(marked.records, cols), private=private)
    write_text_atomic(run_dir / FRONT_CSV, csv_text(marked.members, cols), private=private)
    return marked


def write_json(path: Path, data: Mapping[str, Any], *, private: bool = False) -> None:
    """``data`` as indented JSON, atomically (mode 0600 if ``private``)."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", private=private)
