"""Shared figure plumbing of the run plots: the Agg figure, saving PNG + PDF, readable titles,
tick formatters, the provenance line and group colours (matplotlib, Agg, no pyplot).

The drawing modules (`nasenergy.run.plots`, `nasenergy.run.plots_hypervolume`) call `_save` through
this module (``run_plots_axes._save``), so one patch of it sees every figure written. The public names
are re-exported by `nasenergy.run.plots`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.errors import writing
from nasenergy.objectives import SearchObjective

if TYPE_CHECKING:
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure


def _figure(width_in: float, height_in: float) -> "Figure":
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: "Figure", path: Path, small_print: str = "") -> Path:
    """Write ``path`` (PNG) and the same figure as a PDF beside it (a vector copy for papers);
    ``small_print`` (e.g. the study name; several lines allowed) goes in small grey type below the
    figure, at the right.

    Raises:
        OutputError: the file cannot be written there.
    """
    if small_print:
        fig.text(0.995, 0.0, small_print, ha="right", va="top", fontsize=6, color="0.45")
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, bbox_inches="tight", pad_inches=0.1)  # keeps a legend below the axes whole
        fig.savefig(path.with_suffix(".pdf"), bbox_inches="tight", pad_inches=0.1)
    return path


def readable_title(config: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                   objectives: Sequence[SearchObjective]) -> str:
    """A title a reader understands: space, dataset, objectives and hardware, e.g. ``TSS on
    CIFAR-10: accuracy, throughput, energy; NVIDIA H200 (fp16, batch 1024)``."""
    devices = sorted({str(r["measure_device"]) for r in rows if r.get("measure_device")})
    hardware = ", ".join(devices) or str(config.get("hardware") or "hardware unknown")
    setting = ", ".join(str(v) for v in (config.get("precision"),
                                         f"batch {config['batch_size']}" if config.get("batch_size") else None) if v)
    dataset = {"cifar10": "CIFAR-10", "cifar100": "CIFAR-100"}.get(str(config.get("dataset")), config.get("dataset"))
    space = str(config.get("space") or "").upper()
    head = " on ".join(str(v) for v in (space, dataset) if v)
    return (f"{head + ': ' if head else ''}{', '.join(o.name for o in objectives)}; {hardware}"
            + (f" ({setting})" if setting else ""))


def _readable_log_ticks(axis: "Axis", values: np.ndarray) -> None:
    """Log-scale ticks that never crowd: a few evenly stepped ticks within a factor of three,
    1-2-5 steps up to a few decades, whole decades beyond; minor ticks unlabelled."""
    from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter

    decades = float(np.log10(values.max() / values.min())) if len(values) else 0.0
    if decades < 0.5:
        axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
    else:
        subs = (1.0, 2.0, 5.0) if decades < 2.5 else (1.0,)
        axis.set_major_locator(LogLocator(base=10.0, subs=subs, numticks=6))
    axis.set_major_formatter(_short_number_formatter())
    axis.set_minor_formatter(NullFormatter())


def _short_number_formatter() -> Any:
    """Tick labels such as ``2e-05``, ``5e+04`` or ``300``: three significant digits at most."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:.3g}")


def provenance_line(
    rows: Sequence[Mapping[str, Any]], objectives: Sequence[SearchObjective] | None = None
) -> str:
    """``accuracy: recorded (x-valid, 12 ep); throughput: modelled; energy: modelled`` for the
    evaluated rows (the accuracy's split and schedule where the rows name them), naming only
    ``objectives`` when given."""
    parts = []
    names = None if objectives is None else {o.name for o in objectives}
    for label, col in (("accuracy", "accuracy_source"), ("throughput", "throughput_source"), ("energy", "energy_source")):
        if names is not None and label not in names:
            continue
        sources = sorted({str(r[col]) for r in rows if r.get(col)})
        if sources:
            parts.append(f"{label}: {'/'.join(sources)}")
            if label == "accuracy":
                metric = sorted({f"{r['accuracy_split']}, {r.get('accuracy_schedule')} ep" for r in rows
                                 if r.get("accuracy_split")})
                parts[-1] += f" ({'; '.join(metric)})" if metric else ""
    return "; ".join(parts) or "no evaluated candidates"


def dvfs_applied(evaluated: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any evaluated row was scored at an energy-optimal clock (a DVFS step ran): a run
    with ``--dvfs none``, or on a meter without energy (the CPU), has its figures at the default
    clock and never says "optimal clock"."""
    return any(r.get("dvfs_source") for r in evaluated)


def group_colours(n: int) -> list[Any]:
    """One colour per group, in order (matplotlib's ``tab10``, repeated beyond ten groups): every
    figure of one comparison gives a group the same colour."""
    from matplotlib import colormaps  # lazy: matplotlib

    cmap = colormaps["tab10"]
    return [cmap(k % 10) for k in range(n)]
