"""Recorded profiles: measurements of whole TSS isomorphism classes, replayed without hardware.

A profile is a (gzipped) CSV with one row per canonical TSS architecture and setting. Its columns
are every `Measurement` field (``input_shape`` written as ``3x32x32``; ``None`` as an empty cell;
floats to 7 significant digits)
plus `EXTRA_COLUMNS`: ``canonical_arch`` (the class representative's string), ``arch_index`` (the
official NATS index of the cell that was built), ``driver_version``, ``torch_version`` and
``measured_at`` (ISO 8601, UTC). `OPTIONAL_COLUMNS` describe the measuring run (``gpu_uuid``,
``energy_window_s``: the least length of an energy window, ``energy_windows``: how many windows
were taken); a profile without them reads as if they were empty. ``gpu_uuid`` and
``driver_version`` are measurement fields too (`Measurement.gpu_uuid`), so a replayed measurement
names the board and driver of its row.

A profile of deployed networks (``network_form`` = ``deployed``) holds one row per deployed class
(`search_spaces.SearchSpace.deployed_key`): every member of such a class deploys to the identical
network, so its row is exact for each of them. `RecordedMeter` answers for any member through its
deployed key, with the member's own official (as-built) params and FLOPs. An older profile of
as-built networks is keyed by ``space.canonical(arch)`` (NAS-Bench-201's classes), whose members
may differ as built; its figures are the class representative's. Results are marked
``source="recorded"``. It replays (an `ArchMeter` and a `RecordedProfile`); it cannot measure an
arbitrary network, so it is no `Meter`.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import math
import os
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Mapping, Sequence

from nasenergy.errors import ArchError, CandidateError, DataNotFoundError, UsageError, first_line
from nasenergy.hardware.deployed import with_official_counts
from nasenergy.measurement import Measurement
from search_spaces import Arch, SpaceProtocol, get_space

#: The TSS profile of deployed networks (measured on an NVIDIA H200): the default.
DEPLOYED_PROFILE = Path(__file__).resolve().parent.parent / "data" / "h200_tss_deployed_profile.csv.gz"
#: The TSS profile shipped with the package, replayed by ``--hardware recorded``.
DEFAULT_PROFILE = DEPLOYED_PROFILE
#: The earlier TSS profile of the networks as built (NATS reference implementation; fp16 figures of
#: each NAS-Bench-201 class's representative), kept for comparison (``--profile``).
AS_BUILT_PROFILE = Path(__file__).resolve().parent.parent / "data" / "h200_tss_profile.csv.gz"
#: The profile of a seeded sample of SSS configurations (deployed networks), once recorded.
SSS_PROFILE = Path(__file__).resolve().parent.parent / "data" / "h200_sss_deployed_profile.csv.gz"


def default_profile(space_name: str) -> Path:
    """The shipped profile of a space (``tss`` or ``sss``)."""
    return SSS_PROFILE if space_name == "sss" else DEFAULT_PROFILE

MEASUREMENT_COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Measurement))
#: Measurement fields a profile may lack (added later; they read as empty, i.e. ``None``).
EXTRA_COLUMNS: tuple[str, ...] = ("canonical_arch", "arch_index", "driver_version", "torch_version",
                                  "measured_at")
#: Measurement fields a profile may lack (``driver_version``, a measurement field too, is one of
#: the `EXTRA_COLUMNS` every profile has).
OPTIONAL_MEASUREMENT_COLUMNS: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Measurement) if f.default is None and f.name not in EXTRA_COLUMNS)
#: The columns every profile has (the optional measurement fields are in `OPTIONAL_COLUMNS`).
PROFILE_COLUMNS: tuple[str, ...] = EXTRA_COLUMNS + tuple(
    c for c in MEASUREMENT_COLUMNS if c not in OPTIONAL_MEASUREMENT_COLUMNS and c not in EXTRA_COLUMNS)
RUN_COLUMNS: tuple[str, ...] = ("gpu_uuid", "energy_window_s", "energy_windows")
#: ``gpu_uuid`` (also a measurement field) names the board of every row measured since it exists.
OPTIONAL_COLUMNS: tuple[str, ...] = RUN_COLUMNS + tuple(
    c for c in OPTIONAL_MEASUREMENT_COLUMNS if c not in RUN_COLUMNS)
#: The columns `write_profile` writes, in order.
WRITTEN_COLUMNS: tuple[str, ...] = PROFILE_COLUMNS + OPTIONAL_COLUMNS

_INT_FIELDS = {"batch_size", "params", "n_repeats", "params_official"}
_STR_FIELDS = {"device_name", "precision", "peak_source", "energy_basis", "source"}
_OPTIONAL_STR_FIELDS = {"network_form", "memory_format", "energy_reading", "counters_kind", "gpu_uuid",
                        "driver_version", "normalised_to_gpu_uuid"}


class NotRecordedError(CandidateError, LookupError):
    """The profile holds no measurement for this architecture class and setting."""

    exit_code = 2


def shape_to_str(shape: Sequence[int]) -> str:
    """``(3, 32, 32)`` -> ``"3x32x32"``."""
    return "x".join(str(int(s)) for s in shape)


def shape_from_str(text: str) -> tuple[int, ...]:
    """``"3x32x32"`` -> ``(3, 32, 32)``."""
    return tuple(int(s) for s in text.split("x"))


def measurement_to_row(m: Measurement, **extra: Any) -> dict[str, str]:
    """A profile row (all strings) for `m` plus the `EXTRA_COLUMNS` (and any `OPTIONAL_COLUMNS`)
    given as keywords. Where a column is both (``driver_version``, ``gpu_uuid``), the measurement's
    own value is written unless it is ``None``."""
    missing = set(EXTRA_COLUMNS) - set(extra)
    if missing:
        raise ValueError(f"profile row lacks {sorted(missing)}")
    unknown = set(extra) - set(EXTRA_COLUMNS) - set(OPTIONAL_COLUMNS)
    if unknown:
        raise ValueError(f"not profile columns: {sorted(unknown)}")
    row = {k: "" if extra.get(k) is None else str(extra[k]) for k in EXTRA_COLUMNS + OPTIONAL_COLUMNS}
    for k, v in m.to_dict().items():
        if k == "input_shape":
            row[k] = shape_to_str(v)
        elif v is None:
            if extra.get(k) is None:
                row[k] = ""
        elif isinstance(v, float):
            row[k] = format(v, ".7g")
        else:
            row[k] = str(v)
    return row


def measurement_from_row(row: Mapping[str, str]) -> Measurement:
    """The `Measurement` stored in a profile row (extra columns ignored)."""
    kw: dict[str, Any] = {}
    for name in MEASUREMENT_COLUMNS:
        text = row.get(name, "")
        if name == "input_shape":
            kw[name] = shape_from_str(text)
        elif name in _STR_FIELDS:
            kw[name] = text
        elif text == "":
            kw[name] = None
        elif name in _OPTIONAL_STR_FIELDS:
            kw[name] = text
        elif name in _INT_FIELDS:
            kw[name] = int(text)
        else:
            kw[name] = float(text)
    return Measurement(**kw)


def row_busy_fraction(row: Mapping[str, str]) -> float | None:
    """A row's energy-window throughput (mean power / energy per image, rows of total energy) over
    its timed throughput (`nasenergy.hardware.busy_windows.busy_fraction`): below
    `nasenergy.hardware.busy_windows.MIN_BUSY_FRAC` the GPU idled inside the window. ``None``
    when the row cannot say."""
    try:
        if row.get("energy_basis") != "total":
            return None
        return float(row["avg_power_w"]) / float(row["energy_j_per_img"]) / float(row["throughput_img_per_s"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


_POSITIVE_COLUMNS = ("throughput_img_per_s", "latency_ms_per_batch", "batch_size")
"""Columns every profile row must hold as a finite number above zero."""
_NON_NEGATIVE_COLUMNS = ("energy_j_per_img", "avg_power_w", "idle_power_w", "utilization", "sm_clock_mhz")
"""Columns a profile row may leave empty, else a finite number not below zero."""


def check_profile_row(row: Mapping[str, str], where: str) -> None:
    """Refuse a profile row whose figures cannot be measurements: a throughput, latency or batch
    size that is not a number above zero, or an energy, power, utilization or clock below zero.

    Raises:
        UsageError: one line naming ``where`` (the file and line) and the column.
    """
    for name in _POSITIVE_COLUMNS + _NON_NEGATIVE_COLUMNS:
        text = (row.get(name) or "").strip()
        if text == "" and name in _NON_NEGATIVE_COLUMNS:
            continue
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{where}: {name} is {text!r}, not a number; this is not a usable profile") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and name in _POSITIVE_COLUMNS):
            need = "above zero" if name in _POSITIVE_COLUMNS else "zero or more"
            raise UsageError(f"{where}: {name} is {text}, must be a finite number {need}; this is not a usable profile")


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", newline="", encoding="utf-8")  # type: ignore[return-value]
    return open(path, mode, newline="", encoding="utf-8")


def read_profile(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """All rows of a profile CSV (``.csv`` or ``.csv.gz``).

    Raises:
        DataNotFoundError: the file does not exist.
        UsageError: it is not a profile (columns missing).
    """
    p = Path(path)
    if not p.is_file():
        raise DataNotFoundError(f"profile not found: {p}")
    try:
        with _open_text(p, "r") as f:
            reader = csv.DictReader(f)
            missing = set(PROFILE_COLUMNS) - set(reader.fieldnames or ())
            if missing:
                raise UsageError(f"{p} is not a profile: columns missing: {', '.join(sorted(missing))}")
            return [{**row, **{k: "" for k in OPTIONAL_COLUMNS if k not in row}} for row in reader]
    except (OSError, EOFError, csv.Error, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read profile {p}: {exc}") from None


def write_profile(rows: Iterable[Mapping[str, str]], path: str | os.PathLike[str]) -> int:
    """Write `rows` as a profile CSV (gzipped if the name ends in ``.gz``) atomically; returns the
    number of rows. The gzip header carries no timestamp, so equal rows give equal bytes."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    n = 0
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=WRITTEN_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") if k in OPTIONAL_COLUMNS else row[k] for k in WRITTEN_COLUMNS})
        n += 1
    data = buf.getvalue().encode("utf-8")
    if p.suffix == ".gz":
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                  compresslevel=9, mtime=0) as gz:
            gz.write(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, p)
    return n


class RecordedMeter:
    """Replays a recorded TSS profile (``source="recorded"``).

    Args:
        path: the profile CSV (default: the H200 profile of `space` shipped in ``nasenergy/data``).
        space: the search space of the profile's architectures (default: ``get_space("tss")``).

    Raises:
        DataNotFoundError: the profile file is missing.
    """

    precisions: tuple[str, ...]

    def __init__(self, path: str | os.PathLike[str] | None = None, *, space: SpaceProtocol | None = None) -> None:
        space_name = getattr(space, "name", "tss")
        self.path = Path(path) if path is not None else default_profile(space_name)
        if path is None and not self.path.is_file():
            raise DataNotFoundError(
                f"the recorded H200 profile of the {space_name} space is not installed ({self.path.name}); "
                "measure on a GPU (--hardware cuda) or on this CPU (--hardware cpu)"
            )
        self._space = space
        self._rows: dict[tuple[str, str, int, str], dict[str, str]] = {}
        self._by_class: dict[str, set[tuple[str, int, str]]] = {}
        rows = read_profile(self.path)
        forms = {row.get("network_form") or "as_built" for row in rows}
        if len(forms) > 1:
            raise UsageError(f"{self.path} mixes network forms ({', '.join(sorted(forms))}); keep one per profile")
        self.network_form = forms.pop() if forms else "as_built"
        self._measurements: dict[tuple[str, str, int, str], Measurement] = {}
        for line, row in enumerate(rows, start=2):
            where = f"{self.path}, line {line}"
            check_profile_row(row, where)
            try:
                measurement = measurement_from_row(row)  # parsed once, here: a bad cell stops the load
                batch_size = int(row["batch_size"])
            except (ValueError, TypeError) as exc:
                raise UsageError(f"{where}: {first_line(exc)}; this is not a usable profile") from None
            try:
                network = self._class_of(row["canonical_arch"])
            except ArchError as exc:
                raise UsageError(f"{self.path} is not a profile of the {self.space.name} space: {exc}") from None
            key = (network, row["precision"], batch_size, row["input_shape"])
            self._rows[key] = row
            self._measurements[key] = measurement
            self._by_class.setdefault(key[0], set()).add(key[1:])
        self.settings = sorted({k[1:] for k in self._rows})
        self.precisions = tuple(sorted({k[1] for k in self._rows}))
        names = {r["device_name"] for r in self._rows.values()}
        self.device_name = names.pop() if len(names) == 1 else ", ".join(sorted(names))

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def space(self) -> Any:
        if self._space is None:
            self._space = get_space("tss")
        return self._space

    def _class_of(self, arch: Arch) -> str:
        """The key of `arch`'s class in this profile: its deployed key, or its canonical form."""
        space = self.space
        if self.network_form == "deployed":
            return space.deployed_key(arch)
        return str(space.canonical(arch))

    def _key(self, arch: Arch, precision: str, batch_size: int, dataset: str) -> tuple[str, str, int, str]:
        space = self.space
        if isinstance(arch, str):
            arch = space.parse(arch)
        shape = shape_to_str(space.input_shape(dataset))
        return self._class_of(arch), precision, int(batch_size), shape

    def covers(self, arch: Arch, *, precision: str | None = None, batch_size: int | None = None,
               dataset: str = "cifar10") -> bool:
        """Whether the profile holds `arch`'s class (at `precision`/`batch_size` if given)."""
        canon, _, _, shape = self._key(arch, "", 0, dataset)
        return any(s == shape and (precision is None or p == precision)
                   and (batch_size is None or b == batch_size)
                   for p, b, s in self._by_class.get(canon, ()))

    def measure_arch(self, arch: Arch, *, precision: str, batch_size: int,
                     dataset: str = "cifar10", space: SpaceProtocol | None = None) -> Measurement:
        """The recorded measurement of `arch`'s class.

        ``measure_cost_s`` is the cost of the original measurement, not of this lookup.

        Args:
            arch: a TSS architecture or its string.
            precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
            batch_size: images per forward pass.
            dataset: selects the input shape.
            space: ignored: a profile answers for the space it was recorded in (`space`).

        Raises:
            NotRecordedError: the class or setting is not in the profile.
        """
        key = self._key(arch, precision, batch_size, dataset)
        row = self._rows.get(key)
        if row is None:
            have = "; ".join(f"{p} bs {b} {s}" for p, b, s in self.settings) or "nothing"
            raise NotRecordedError(
                f"{self.path.name} has no record of {key[0]} at {precision} bs {batch_size} "
                f"input {key[3]} (it holds {len(self)} rows: {have})"
            )
        # The row's figures are its network's (deployed, or the class representative as built);
        # the official counts are always the asked architecture's own.
        m = dataclasses.replace(self._measurements[key], source="recorded")
        return with_official_counts(m, self.space, arch, dataset, network_form=self.network_form)

    def rows(self) -> Iterator[dict[str, str]]:
        """The profile's rows."""
        return iter(self._rows.values())
