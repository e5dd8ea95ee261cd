"""Utilization vs accuracy, inputs: one setting of a recorded profile, the NATS-Bench accuracy
tables, and the two joined per cell and per class (see ``experiments/utilization_correlation.py``)."""

from __future__ import annotations

import csv
import gzip
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.hardware.recorded import measurement_from_row

EPOCHS: tuple[int, ...] = (12, 200)
ACCURACY_COLUMNS: dict[tuple[str, int], str] = {
    ("cifar10", 12): "cifar10_test_acc_12ep",
    ("cifar100", 12): "cifar100_test_acc_12ep",
    ("ImageNet16-120", 12): "imagenet16_test_acc_12ep",
    ("cifar10", 200): "cifar10_test_acc_200ep",
    ("cifar100", 200): "cifar100_test_acc_200ep",
    ("ImageNet16-120", 200): "imagenet16_test_acc_200ep",
}
ACCURACY_GLOBS: dict[int, str] = {12: "nb201_hp12_acc__*.csv.gz", 200: "nb201_hp200_test_acc__*.csv.gz"}
PREDICTORS: tuple[str, ...] = ("utilization", "flops_per_img", "params")
_N_CLASSES: dict[str, int] = {"cifar10": 10, "cifar100": 100, "ImageNet16-120": 120}
LEVELS: tuple[str, ...] = ("cell", "class")
CSV_COLUMNS: tuple[str, ...] = (
    "dataset",
    "epochs",
    "accuracy_column",
    "level",
    "predictor",
    "predictor_source",
    "n",
    "spearman_rho",
    "spearman_p",
    "kendall_tau",
    "kendall_p",
    "profile_input_shape",
)


@dataclass(frozen=True)
class ProfileSelection:
    """The profile rows used: utilization per (class string, input shape) and their setting.

    Attributes:
        utilization: ``{(canonical_arch, "3x32x32"): utilization}``.
        precision: the rows' precision.
        batch_size: the rows' batch size.
        device_name: the device(s) the rows were taken on.
        source: the rows' provenance (``recorded``, ``measured`` or ``modelled``).
        n_rows: rows in the whole profile.
        network_form: the network the rows measured: ``as_built`` (one row per canonical class,
            as-built FLOPs and params) or ``deployed`` (one row per deployed network, keyed by its
            representative `SearchSpace.deployed_representative`; deployed FLOPs and params).
    """

    utilization: dict[tuple[str, str], float]
    precision: str
    batch_size: int
    device_name: str
    source: str
    n_rows: int
    network_form: str = "as_built"

    def class_of(self, space: Any, arch: Any) -> Any:
        """The architecture whose row answers for ``arch``: its class representative as the
        profile keys it."""
        return space.deployed_representative(arch) if self.network_form == "deployed" else space.canonical(arch)

    def count(self, space: Any, arch: Any, dataset: str) -> Any:
        """The FLOPs and params of the network the profile measured for ``arch``."""
        return space.count_deployed(arch, dataset) if self.network_form == "deployed" else space.count(arch, dataset)


@dataclass(frozen=True)
class CorrelationRow:
    """One line of ``correlations.csv`` (see `CSV_COLUMNS`)."""

    dataset: str
    epochs: int
    accuracy_column: str
    level: str
    predictor: str
    predictor_source: str
    n: int
    spearman_rho: float
    spearman_p: float
    kendall_tau: float
    kendall_p: float
    profile_input_shape: str


@dataclass(frozen=True)
class Joined:
    """Per dataset, the cells (and classes) with their predictors and accuracies."""

    cell_class: list[str]
    cell_values: dict[str, np.ndarray]
    class_names: list[str]
    class_values: dict[str, np.ndarray]
    profile_input_shape: str


def select_profile(rows: list[dict[str, str]], precision: str | None, batch_size: int | None) -> ProfileSelection:
    """Keep one setting (precision, batch size) of the profile.

    Without a choice the setting with the most rows is used.

    Raises:
        UsageError: no rows of the chosen setting, a tie between settings, or duplicate classes.
    """
    if precision is not None:
        rows = [r for r in rows if r["precision"] == precision]
    if batch_size is not None:
        rows = [r for r in rows if int(r["batch_size"]) == batch_size]
    if not rows:
        raise UsageError("the profile has no rows for the chosen --precision/--batch-size")
    settings = Counter((r["precision"], int(r["batch_size"])) for r in rows)
    (best, count), *rest = settings.most_common()
    if rest and rest[0][1] == count:
        listed = ", ".join(f"{p}/{b}" for p, b in settings)
        raise UsageError(f"the profile has several settings ({listed}); choose with --precision and --batch-size")
    util: dict[tuple[str, str], float] = {}
    devices, sources = set(), set()
    forms = {r.get("network_form") or "as_built" for r in rows}
    if len(forms) > 1:
        raise UsageError(f"the profile mixes network forms ({', '.join(sorted(forms))})")
    for r in rows:
        if (r["precision"], int(r["batch_size"])) != best:
            continue
        key = (r["canonical_arch"], r["input_shape"])
        if key in util:
            raise UsageError(f"the profile has two rows for class {key[0]} at {key[1]} ({best[0]}/{best[1]})")
        m = measurement_from_row(r)
        util[key] = float(m.utilization)
        devices.add(m.device_name)
        sources.add(m.source)
    return ProfileSelection(
        utilization=util,
        precision=best[0],
        batch_size=best[1],
        device_name=", ".join(sorted(devices)),
        source="/".join(sorted(sources)),
        n_rows=len(rows),
        network_form=forms.pop(),
    )


def find_accuracy_file(data_dir: Path, epochs: int) -> Path:
    """The shared accuracy table for the schedule ``epochs``."""
    hits = sorted(data_dir.glob(ACCURACY_GLOBS[epochs]))
    if not hits:
        raise DataNotFoundError(f"no {ACCURACY_GLOBS[epochs]} in {data_dir}")
    return hits[0]


def read_accuracies(data_dir: Path) -> dict[str, dict[str, float]]:
    """``{arch_str: {accuracy column: percent}}`` from the 12- and 200-epoch tables."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    wanted = set(ACCURACY_COLUMNS.values())
    for epochs in EPOCHS:
        path = find_accuracy_file(data_dir, epochs)
        with gzip.open(path, "rt", newline="") as f:
            for row in csv.DictReader(f):
                for col in wanted & set(row):
                    if row[col] != "":
                        out[row["arch_str"]][col] = float(row[col])
    return dict(out)


def join(
    space: Any,
    accuracies: dict[str, dict[str, float]],
    profile: ProfileSelection,
    dataset: str,
) -> Joined:
    """Cells and classes of ``dataset`` with utilization, FLOPs, params and accuracies.

    Raises:
        UsageError: no cell's class is in the profile.
    """
    want_shape = "x".join(str(s) for s in space.input_shape(dataset))
    shapes = Counter(shape for _, shape in profile.utilization)
    shape = want_shape if want_shape in shapes else shapes.most_common(1)[0][0]
    cols = [ACCURACY_COLUMNS[(dataset, e)] for e in EPOCHS]
    cell_class: list[str] = []
    cell_rows: list[list[float]] = []
    members: dict[str, list[list[float]]] = defaultdict(list)
    reps: dict[str, Any] = {}
    for arch_str, accs in accuracies.items():
        arch = space.parse(arch_str)
        canon = profile.class_of(space, arch)
        key = (str(canon), shape)
        if key not in profile.utilization or not all(c in accs for c in cols):
            continue
        cost = profile.count(space, arch, dataset)
        cell_class.append(key[0])
        cell_rows.append([profile.utilization[key], float(cost.flops), float(cost.params)] + [accs[c] for c in cols])
        members[key[0]].append([accs[c] for c in cols])
        reps[key[0]] = canon
    if not cell_rows:
        raise UsageError(f"no TSS cell of {dataset} has its class in the profile (input shape {shape})")
    names = PREDICTORS + tuple(cols)
    cells = np.array(cell_rows)
    class_names = sorted(members)
    class_rows = []
    for name in class_names:
        cost = profile.count(space, reps[name], dataset)
        util = profile.utilization[(name, shape)]
        class_rows.append([util, float(cost.flops), float(cost.params)] + list(np.mean(members[name], axis=0)))
    classes = np.array(class_rows)
    return Joined(
        cell_class=cell_class,
        cell_values={n: cells[:, i] for i, n in enumerate(names)},
        class_names=class_names,
        class_values={n: classes[:, i] for i, n in enumerate(names)},
        profile_input_shape=shape,
    )
