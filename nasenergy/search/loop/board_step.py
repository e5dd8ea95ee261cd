"""The cross-board step of a run whose workers measure on several GPUs of this host.

Before the worker processes start, `calibrate_run` measures the reference networks
(`nasenergy.hardware.boards.reference_archs`) on every GPU the workers will be pinned to, in one
child process (so this process never holds a CUDA context), and checks the boards against
``--board-tolerance-pct`` under ``--boards`` (`nasenergy.hardware.boards.check_boards`): within
the tolerance nothing changes; beyond it, one warning line, then ``normalise`` (the default) makes
every worker divide its measurements by its board's ratios (`normalising`), ``refuse`` stops the
run before its first candidate (exit 2) and ``ignore`` keeps the figures as read. The calibration
is kept on the study (`BOARDS_ATTR`) and in ``env.json`` (``boards``), so the report can name it.

Boards of other machines sharing a PostgreSQL study are calibrated by their own command, each
against its own first GPU; nothing here compares boards of different hosts.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from nasenergy.errors import NasEnergyError
from nasenergy.hardware.boards import (
    BoardCalibration,
    NormalisingMeasure,
    calibrate_meters,
    check_boards,
)
from nasenergy.hardware.registry import METERS
from nasenergy.hardware.select import resolve_hardware
from nasenergy.search.command.config import SearchConfig
from search_spaces import get_space

if TYPE_CHECKING:
    from nasenergy.search.command.components import Components

logger = logging.getLogger(__name__)

BOARDS_ATTR = "board_calibration"
"""The study's user attribute holding the last calibration (`BoardCalibration.to_dict`) and the
policy applied (``policy``, ``normalised``)."""


def boards_of_run(config: SearchConfig, gpus: Sequence[str]) -> list[str]:
    """The distinct GPUs the run's worker processes are pinned to (worker k: ``gpus[k % n]``);
    empty unless the meter measures on GPUs (`MeterKind.uses_gpu`, as the CUDA meter does) and there
    are several workers."""
    if config.workers < 2 or not gpus:
        return []
    if not METERS.get(resolve_hardware(config.hardware, announce=None, space_name=config.space)).uses_gpu:
        return []
    return list(dict.fromkeys(gpus[k % len(gpus)] for k in range(config.workers)))


def _calibrate_gpus(config_dict: dict[str, Any], gpu_ids: list[str], path: str) -> None:
    """Child process: measure the reference networks on each GPU (CUDA devices 0..n-1 of
    ``gpu_ids``) and save the calibration to `path`."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_ids)
    from nasenergy.hardware.cuda_meter import CudaMeter  # lazy: torch, in the child only

    config = SearchConfig.from_dict(config_dict)
    meters = [CudaMeter(i) for i in range(len(gpu_ids))]
    try:
        calibration = calibrate_meters(meters, space=get_space(config.space), precision=config.precision,
                                       batch_size=config.batch_size, dataset=config.dataset,
                                       tolerance_frac=config.board_tolerance_pct / 100.0)
    finally:
        for m in meters:
            m.close()
    calibration.save(path)


Calibrator = Callable[[SearchConfig, list[str]], BoardCalibration]


def calibrate_in_child(config: SearchConfig, gpu_ids: list[str]) -> BoardCalibration:
    """`_calibrate_gpus` in a spawned process; its calibration.

    Raises:
        NasEnergyError: the child failed (its own error is on stderr).
    """
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="nasenergy-boards-") as tmp:
        path = Path(tmp) / "boards.json"
        proc = ctx.Process(target=_calibrate_gpus, args=(config.to_dict(), gpu_ids, str(path)),
                           name="nasenergy-board-calibration")
        proc.start()
        proc.join()
        if proc.exitcode != 0 or not path.is_file():
            raise NasEnergyError(f"the board calibration of GPUs {', '.join(gpu_ids)} failed (exit {proc.exitcode})")
        return BoardCalibration.load(path)


def calibrate_run(config: SearchConfig, gpu_ids: list[str], *,
                  calibrator: Calibrator = calibrate_in_child) -> dict[str, Any] | None:
    """Calibrate the run's boards and apply ``config.boards``.

    Returns:
        ``None`` with fewer than two boards; else the study attribute (`BOARDS_ATTR`): the
        calibration's dict plus ``policy`` and ``normalised`` (whether workers normalise).

    Raises:
        BoardMismatchError: boards beyond the tolerance under ``--boards refuse``.
    """
    if len(gpu_ids) < 2:
        return None
    calibration = calibrator(config, gpu_ids)
    if not config.quiet:
        logger.info("boards: %s", calibration.summary())
    warning = check_boards(calibration, config.boards)
    if warning is not None:
        logger.warning("%s", warning)
    return {**calibration.to_dict(), "policy": config.boards,
            "normalised": warning is not None and config.boards == "normalise"}


def normalising(components: "Components", attr: dict[str, Any] | None) -> "Components":
    """`components` whose measurements are normalised to the reference board where the run's
    calibration says so (``attr`` from `calibrate_run`); else `components` unchanged."""
    if not attr or not attr.get("normalised"):
        return components
    calibration = BoardCalibration.from_dict(attr)
    return dataclasses.replace(components, measure=NormalisingMeasure(components.measure, calibration))
