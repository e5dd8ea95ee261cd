"""The report's lines on real training (``--oracle train``): the training actually spent, in
seconds and joules (measured), what the filtered candidates would have cost (estimated from the
measured trainings) and the trainings' energy at each network's energy-optimal clock (modelled)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nasenergy.run.report_text import _duration


def _num(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def training_lines(evaluated: Sequence[Mapping[str, Any]], filtered: Sequence[Mapping[str, Any]]) -> list[str]:
    """Lines for the report's Cost section; none for a run whose accuracies were looked up."""
    trained = [r for r in evaluated if r.get("accuracy_source") == "measured" and _num(r, "eval_cost_s") is not None]
    if not trained:
        return []
    seconds = [_num(r, "eval_cost_s") or 0.0 for r in trained]
    joules = [j for j in (_num(r, "train_energy_j") for r in trained) if j is not None]
    devices = sorted({str(r.get("train_device")) for r in trained if r.get("train_device")})
    epochs = sorted({int(e) for e in (_num(r, "train_epochs") for r in trained) if e is not None})
    sources = sorted({str(r.get("train_energy_source")) for r in trained if r.get("train_energy_source")})
    resumed = sum(1 for r in trained if (_num(r, "train_resumed_from_epoch") or 0) > 0)
    line = (f"- training spent: {_duration(sum(seconds))} (measured) over {len(trained)} trainings of "
            f"{'/'.join(map(str, epochs)) or '?'} epochs on {', '.join(devices) or 'unknown device'}")
    if joules:
        line += f"; board energy {sum(joules) / 1000:.2f} kJ ({', '.join(sources) or 'measured'}, {len(joules)} trainings)"
    else:
        line += "; energy not measured (no energy counter on this device)"
    if resumed:
        line += f"; {resumed} continued from an epoch checkpoint after an interruption"
    lines = [line]
    if filtered:
        mean_s = sum(seconds) / len(seconds)
        avoided = f"≈ {_duration(mean_s * len(filtered))}"
        if joules:
            avoided += f" and ≈ {sum(joules) / len(joules) * len(filtered) / 1000:.2f} kJ"
        lines.append(f"- training the filter avoided: {avoided} (estimated: {len(filtered)} filtered candidates × "
                     f"the mean measured training, {_duration(mean_s)})")
    at_clock = [(j, s) for j, s in ((_num(r, "train_energy_j"), _num(r, "energy_saving_pct")) for r in trained)
                if j is not None and s is not None]
    if at_clock:
        modelled = sum(j * (1.0 - s / 100.0) for j, s in at_clock)
        lines.append(f"- training energy at each network's energy-optimal clock: {modelled / 1000:.2f} kJ for "
                     f"{len(at_clock)} trainings (modelled: the measured training energy scaled by the network's "
                     "inference saving at that clock, assuming a training step's energy falls with the clock as "
                     "its forward pass's does)")
    return lines
