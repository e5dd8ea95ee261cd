"""Rank correlation of recorded GPU utilization (and of FLOPs and params) with NATS-Bench accuracy.

Joins the utilization of each TSS isomorphism class, from a recorded profile (default: the H200
profile shipped with the package), with the NATS-Bench accuracies in the shared data folder
(12-epoch: ``nb201_hp12_acc__*.csv.gz``; 200-epoch: ``nb201_hp200_test_acc__*.csv.gz``). Every
cell is mapped to the class its profile row stands for: ``space.canonical`` for a profile of networks
as built, ``space.deployed_representative`` for a profile of deployed networks (whose FLOPs and
params are then the deployed network's). For each dataset (CIFAR-10, CIFAR-100,
ImageNet16-120) and schedule (12, 200 epochs) it computes Spearman's rho and Kendall's tau-b of
utilization, FLOPs and params with test accuracy, at two levels:

* ``cell``: every cell whose class is in the profile (cells of one class share its utilization);
* ``class``: one point per class, accuracy averaged over the class's cells.

FLOPs and params are counted exactly from each architecture for the dataset's input shape (by
``search_spaces``). Utilization is used as recorded; when the profile has no rows at a dataset's
input shape (ImageNet16-120 is 16×16) the 32×32 rows are used and the CSV says so.

Writes ``correlations.csv``, ``scatter.png`` and ``README.md`` to ``--out`` (default
``results/utilization_correlation``)::

    python experiments/utilization_correlation.py [--profile PATH] [--precision fp16 --batch-size 1024]
"""

from __future__ import annotations

import csv
import hashlib
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import DataNotFoundError
from nasenergy.hardware.recorded import DEFAULT_PROFILE, read_profile
from nasenergy.paths import shared_data_dir
from search_spaces import DATASETS, get_space

from lib.correlation_inputs import (
    ACCURACY_COLUMNS,
    ACCURACY_GLOBS,
    CSV_COLUMNS,
    EPOCHS,
    LEVELS,
    PREDICTORS,
    _N_CLASSES,
    CorrelationRow,
    Joined,
    ProfileSelection,
    join,
    read_accuracies,
    select_profile,
)

__all__ = ["ACCURACY_GLOBS", "CorrelationRow", "main", "run", "select_profile"]



class RankCorrelation(NamedTuple):
    """Spearman's rho and Kendall's tau-b with their two-sided p-values."""

    spearman_rho: float
    spearman_p: float
    kendall_tau: float
    kendall_p: float


def rank_correlations(x: np.ndarray, y: np.ndarray) -> RankCorrelation:
    """Rank correlations of ``x`` with ``y`` (NaN pairs dropped; all NaN with fewer than 3 points
    or no spread)."""
    from scipy.stats import kendalltau, spearmanr

    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        nan = float("nan")
        return RankCorrelation(nan, nan, nan, nan)
    s = spearmanr(x, y)
    k = kendalltau(x, y)
    return RankCorrelation(float(s.statistic), float(s.pvalue), float(k.statistic), float(k.pvalue))


def correlations(joined: dict[str, Joined], utilization_source: str) -> list[CorrelationRow]:
    """All correlation rows: dataset × epochs × level × predictor."""
    out = []
    for dataset, j in joined.items():
        for epochs in EPOCHS:
            col = ACCURACY_COLUMNS[(dataset, epochs)]
            for level in LEVELS:
                values = j.cell_values if level == "cell" else j.class_values
                for pred in PREDICTORS:
                    rho, rho_p, tau, tau_p = rank_correlations(values[pred], values[col])
                    out.append(
                        CorrelationRow(
                            dataset=dataset,
                            epochs=epochs,
                            accuracy_column=col,
                            level=level,
                            predictor=pred,
                            predictor_source=utilization_source if pred == "utilization" else "modelled",
                            n=int(len(values[pred])),
                            spearman_rho=rho,
                            spearman_p=rho_p,
                            kendall_tau=tau,
                            kendall_p=tau_p,
                            profile_input_shape=j.profile_input_shape,
                        )
                    )
    return out


def class_level(rows: list[CorrelationRow]) -> dict[tuple[str, int, str], CorrelationRow]:
    """The class-level rows by ``(dataset, epochs, predictor)``, in the order of `rows`."""
    return {(r.dataset, r.epochs, r.predictor): r for r in rows if r.level == "class"}


def write_csv(rows: list[CorrelationRow], path: Path) -> None:
    """Write the correlation rows (floats to 6 significant digits)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for r in rows:
            w.writerow([format(v, ".6g") if isinstance(v, float) else v for v in (getattr(r, c) for c in CSV_COLUMNS)])


def plot_scatter(joined: dict[str, Joined], rows: list[CorrelationRow], profile: ProfileSelection, path: Path) -> None:
    """Class-level utilization against accuracy, one panel per dataset and schedule."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    table = class_level(rows)
    fig, axes = plt.subplots(len(EPOCHS), len(joined), figsize=(4.2 * len(joined), 3.6 * len(EPOCHS)), squeeze=False)
    for c, (dataset, j) in enumerate(joined.items()):
        for r_i, epochs in enumerate(EPOCHS):
            ax = axes[r_i][c]
            col = ACCURACY_COLUMNS[(dataset, epochs)]
            u = 100.0 * j.class_values["utilization"]
            ax.scatter(u, j.class_values[col], s=3, alpha=0.35, linewidths=0)
            if np.nanmin(u) > 0 and np.nanmax(u) / np.nanmin(u) > 30:
                ax.set_xscale("log")
                ax.xaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
                ax.xaxis.set_minor_formatter(NullFormatter())
            rho = table[(dataset, epochs, "utilization")].spearman_rho
            ax.set_title(f"{dataset}, {epochs} epochs (Spearman ρ = {rho:.3f})", fontsize=9)
            ax.set_xlabel(f"utilization, % of peak ({profile.source}, input {j.profile_input_shape})", fontsize=8)
            ax.set_ylabel("test accuracy, % (recorded, NATS-Bench)", fontsize=8)
    fig.suptitle(
        f"Utilization vs accuracy per TSS class — {profile.device_name}, {profile.precision}, batch {profile.batch_size}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


_CLASS_WORDS = {"as_built": "canonical class (`space.canonical`)",
                "deployed": "deployed network (`space.deployed_key`)"}
_NETWORK_WORDS = {"as_built": "architecture as built", "deployed": "deployed network"}


def write_readme(
    rows: list[CorrelationRow],
    joined: dict[str, Joined],
    profile: ProfileSelection,
    profile_path: Path,
    path: Path,
    n_space_cells: int | None = None,
    command: str = "python experiments/utilization_correlation.py",
) -> None:
    """A short README: the inputs, the sample, and the class-level Spearman and Kendall table.

    Args:
        n_space_cells: cells with accuracies in the tables (to state the profile's coverage).
    """
    digest = hashlib.sha256(profile_path.read_bytes()).hexdigest()[:16]
    n_classes = {d: len(j.class_names) for d, j in joined.items()}
    n_cells = {d: len(j.cell_class) for d, j in joined.items()}
    sample = ", ".join(f"{d}: {n_classes[d]:,} classes / {n_cells[d]:,} cells" for d in joined)
    of_all = f" of the {n_space_cells:,} cells in the tables" if n_space_cells else ""
    lines = [
        "# Utilization vs accuracy on NATS-Bench TSS",
        "",
        f"Made by `{command}`. Rank correlations of GPU utilization",
        "(and, for comparison, FLOPs and params) with NATS-Bench test accuracy after 12 and 200 epochs.",
        "",
        f"- Utilization: `{profile_path.name}` (sha256 {digest}…), {profile.source}, device {profile.device_name},",
        f"  {profile.precision}, batch {profile.batch_size}.",
        f"- Sample: every TSS cell whose {_CLASS_WORDS[profile.network_form]} is in the profile ({sample}{of_all}).",
        "  Cells of one class share its utilization. When the profile covers only part of the space the",
        "  correlations describe the covered classes only (see `nasenergy/data/README.md` for how they were chosen).",
        "- Accuracy: recorded NATS-Bench test accuracy from the shared data folder: 12-epoch columns are one",
        "  training run (seed 111), 200-epoch columns the mean over the recorded runs.",
        f"- FLOPs and params: counted exactly from each {_NETWORK_WORDS[profile.network_form]} by `search_spaces` "
        "(labelled `modelled`).",
        "- `cell` level: every cell; `class` level: one point per class, accuracy averaged over its cells.",
        "",
        "Class level, Spearman ρ and Kendall τ-b (`correlations.csv` also has p-values and the cell level):",
        "",
        "| dataset | epochs | utilization ρ | utilization τ | FLOPs ρ | FLOPs τ | params ρ | params τ | n classes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    table = class_level(rows)
    for d in joined:
        for e in EPOCHS:
            cells = []
            for p in PREDICTORS:
                cells += [f"{table[(d, e, p)].spearman_rho:.3f}", f"{table[(d, e, p)].kendall_tau:.3f}"]
            lines.append(f"| {d} | {e} | " + " | ".join(cells) + f" | {table[(d, e, PREDICTORS[0])].n} |")
    same = all(
        np.isclose(table[(d, e, "flops_per_img")].spearman_rho, table[(d, e, "params")].spearman_rho, equal_nan=True)
        for d in joined for e in EPOCHS
    )
    notes = []
    if same:
        notes.append(
            "- FLOPs and params rank the classes identically here: in TSS both grow only with the number of "
            "1×1 and 3×3 convolutions of the cell, which is repeated unchanged in all three stages."
        )
    chance = {d: j.class_values[ACCURACY_COLUMNS[(d, 200)]] < 1.5 * 100.0 / _N_CLASSES[d] for d, j in joined.items()}
    if any(m.any() for m in chance.values()):
        d0 = next(iter(joined))
        util = joined[d0].class_values["utilization"]
        notes.append(
            "- Classes at chance accuracy after 200 epochs (below 1.5 × 100 % / number of classes; the cell's "
            "input does not reach its output): " + ", ".join(f"{d} {int(m.sum())}" for d, m in chance.items())
            + (". They still run their other operations" if profile.network_form != "deployed"
               else ". Their deployed networks skip the dead cells' work")
            + f": median utilization of these classes ({d0}) "
            f"{100 * np.median(util[chance[d0]]):.2f} % against {100 * np.median(util):.2f} % for all classes."
        )
    shapes = {d: j.profile_input_shape for d, j in joined.items()}
    lines += ["", *notes, f"- Profile input shape used per dataset: {shapes}.", "",
              "`scatter.png`: class-level utilization (log scale) against accuracy."]
    path.write_text("\n".join(lines) + "\n")


def run(profile_path: Path, out_dir: Path, data_dir: Path, precision: str | None, batch_size: int | None,
        command: str = "python experiments/utilization_correlation.py") -> list[CorrelationRow]:
    """The whole experiment; returns the correlation rows it wrote."""
    if not profile_path.is_file():
        raise DataNotFoundError(
            f"profile not found: {profile_path}; record one with experiments/profile_tss_space.py or pass --profile"
        )
    profile = select_profile(read_profile(profile_path), precision, batch_size)
    accuracies = read_accuracies(data_dir)
    space = get_space("tss")
    joined = {d: join(space, accuracies, profile, d) for d in DATASETS}
    rows = correlations(joined, profile.source)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out_dir / "correlations.csv")
    plot_scatter(joined, rows, profile, out_dir / "scatter.png")
    write_readme(rows, joined, profile, profile_path, out_dir / "README.md", n_space_cells=len(accuracies),
                 command=command)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", type=Path, default=DEFAULT_PROFILE, help="recorded profile CSV(.gz)")
    p.add_argument("--out", type=Path, default=Path("results/utilization_correlation"), help="output folder")
    p.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: NASENERGY_SHARED_DATA)")
    p.add_argument("--precision", default=None, help="profile rows of this precision (default: the commonest setting)")
    p.add_argument("--batch-size", type=int, default=None, help="profile rows of this batch size")
    args = p.parse_args(argv)

    def body() -> None:
        data_dir = args.data_dir if args.data_dir is not None else shared_data_dir()
        if not data_dir.is_dir():
            raise DataNotFoundError(f"shared data folder not found: {data_dir}")
        given = sys.argv[1:] if argv is None else argv
        command = " ".join(["python experiments/utilization_correlation.py", *map(shlex.quote, given)])
        rows = run(args.profile, args.out, data_dir, args.precision, args.batch_size, command)
        for (dataset, epochs, predictor), r in class_level(rows).items():
            if predictor == "utilization":
                print(f"{dataset:>15} {epochs:>3} ep: Spearman {r.spearman_rho:.3f}, Kendall {r.kendall_tau:.3f} (n={r.n})")
        print(f"wrote {args.out}/correlations.csv, scatter.png, README.md")

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
