"""Which board measured a network, and how boards of one model compare (cross-board calibration).

Two boards of one GPU model differ by a few per cent in power and speed (part-to-part variation,
temperature, power-brake state). A search whose workers measure on several boards mixes their
figures on one front, so a network can look better only because a frugal board measured it.

* `Board`: the identity of the board behind a `Measurement` (UUID, name, driver, SM clock and
  power limit read at the time).
* `calibrate`: measures the same few reference networks (`reference_archs`) on every board a run
  uses and gives each board's ratio to the first on throughput and on energy per image: the
  geometric mean over the networks of ``board figure / reference board figure`` (`BoardRatio`).
* `check_boards`: boards whose ratio is further from 1 than a tolerance get a one-line warning;
  the policy then normalises each measurement to the reference board (`normalise`: divides its
  throughput and energy per image by its board's ratios and says so in the measurement:
  ``normalised_to_gpu_uuid``, ``board_throughput_ratio``, ``board_energy_ratio``), refuses the run
  (`BoardMismatchError`), or leaves the figures as read (``ignore``).

The defaults come from the H200 boards that recorded the shipped TSS profile
(`results/profile_agreement/boards`): fitted per-board offsets reached -6.7 % (fp16) and -4.0 %
(fp32) in energy per image and up to +1.8 % in throughput, while one network re-measured on its
own board agreed to 1-2 % (interquartile range of the paired offsets). An offset beyond
`DEFAULT_TOLERANCE_FRAC` (2 %) is thus more than measurement noise, and 5 of 11 boards exceeded it
in fp16 energy: refusing would stop most runs on a node of 8 boards, so ``normalise`` is the
default (`DEFAULT_BOARD_POLICY`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.meter import Meter
from nasenergy.measurement import Measurement
from search_spaces import SpaceProtocol

BOARD_POLICIES: tuple[str, ...] = ("normalise", "refuse", "ignore")
"""What a run does with boards beyond the tolerance: normalise to the reference board, refuse, or
keep the figures as read (a warning is printed in every case)."""
DEFAULT_BOARD_POLICY = "normalise"
DEFAULT_TOLERANCE_FRAC = 0.02
"""A board whose throughput or energy ratio to the reference board is further than this from 1
differs by more than the re-measurement noise of one board (see the module docstring)."""

#: Reference TSS cells, from a cell that only passes its input on (16 MFLOP per 32x32 image,
#: deployed) to all 3x3 convolutions (440 MFLOP): small and large, pooling and convolutions.
TSS_REFERENCE_ARCHS: tuple[str, ...] = (
    "|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|",
    "|nor_conv_1x1~0|+|skip_connect~0|nor_conv_1x1~1|+|skip_connect~0|nor_conv_1x1~1|nor_conv_1x1~2|",
    "|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_3x3~0|skip_connect~1|avg_pool_3x3~2|",
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|",
)
#: Reference SSS configurations (channels per stage), narrow to wide.
SSS_REFERENCE_ARCHS: tuple[str, ...] = ("8:8:8:8:8", "32:32:32:32:32", "64:64:64:64:64")


def reference_archs(space_name: str) -> tuple[str, ...]:
    """The reference networks of a space (``tss`` or ``sss``)."""
    if space_name == "sss":
        return SSS_REFERENCE_ARCHS
    if space_name == "tss":
        return TSS_REFERENCE_ARCHS
    raise UsageError(f"no reference networks for space {space_name!r}; pass them")


class BoardMismatchError(UsageError):
    """The boards of a run differ by more than the tolerance and the policy is ``refuse``."""


@dataclass(frozen=True)
class Board:
    """The board behind a measurement and its state at the time.

    Attributes:
        gpu_uuid: NVML's UUID; ``None`` where not recorded (the CPU meter, old rows).
        device_name: e.g. ``NVIDIA H200``.
        driver_version: the driver version, if recorded.
        sm_clock_mhz: the SM clock seen during the measurement, MHz.
        power_limit_w: the power limit in force, watts.
    """

    gpu_uuid: str | None
    device_name: str
    driver_version: str | None = None
    sm_clock_mhz: float | None = None
    power_limit_w: float | None = None

    @classmethod
    def of(cls, m: Measurement) -> "Board":
        """The board of a measurement."""
        return cls(m.gpu_uuid, m.device_name, m.driver_version, m.sm_clock_mhz, m.power_limit_w)

    @property
    def label(self) -> str:
        """A short name: the UUID's first 12 characters (``GPU-9f48627a``), else the device name."""
        return self.gpu_uuid[:12] if self.gpu_uuid else self.device_name


def board_label(gpu_uuid: str | None) -> str:
    """The short name of a board by its UUID (``–`` when none is recorded)."""
    return gpu_uuid[:12] if gpu_uuid else "–"


@dataclass(frozen=True)
class BoardRatio:
    """One board against the reference board on the reference networks.

    Attributes:
        board: the board.
        throughput_ratio: geometric mean over the networks of this board's throughput over the
            reference board's.
        energy_ratio: the same for energy per image; ``None`` where a board read no energy.
        throughput_ratios: the per-network ratios, in the networks' order.
        energy_ratios: the per-network energy ratios (empty without energy).
    """

    board: Board
    throughput_ratio: float
    energy_ratio: float | None
    throughput_ratios: tuple[float, ...]
    energy_ratios: tuple[float, ...] = ()

    def deviation_frac(self) -> float:
        """The largest ``|ratio - 1|`` of throughput and energy."""
        devs = [abs(self.throughput_ratio - 1.0)]
        if self.energy_ratio is not None:
            devs.append(abs(self.energy_ratio - 1.0))
        return max(devs)


def _geomean(values: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


@dataclass(frozen=True)
class BoardCalibration:
    """Each board's ratios to the reference board (the first measured).

    Attributes:
        reference_uuid: the reference board's UUID (or label where it has none).
        ratios: one per board, the reference board's first (ratios 1).
        networks: the reference networks, as strings.
        precision: the precision measured at.
        batch_size: the batch size measured at.
        tolerance_frac: the tolerance the boards are checked against.
        cost_s: seconds the calibration's measurements took.
    """

    reference_uuid: str
    ratios: tuple[BoardRatio, ...]
    networks: tuple[str, ...]
    precision: str
    batch_size: int
    tolerance_frac: float = DEFAULT_TOLERANCE_FRAC
    cost_s: float = 0.0

    def ratio_of(self, gpu_uuid: str | None) -> BoardRatio | None:
        """The ratio of the board with this UUID (``None``: not calibrated)."""
        for r in self.ratios:
            if r.board.gpu_uuid == gpu_uuid:
                return r
        return None

    def outside(self) -> list[BoardRatio]:
        """The boards further from the reference than the tolerance."""
        return [r for r in self.ratios if r.deviation_frac() > self.tolerance_frac]

    def summary(self) -> str:
        """One line: each board's throughput and energy ratio to the reference board."""
        parts = []
        for r in self.ratios:
            e = "–" if r.energy_ratio is None else f"{r.energy_ratio:.3f}"
            parts.append(f"{r.board.label} {r.throughput_ratio:.3f}/{e}")
        return (f"{len(self.ratios)} boards, throughput/energy ratio to {board_label(self.reference_uuid)} on "
                f"{len(self.networks)} reference networks: " + ", ".join(parts))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (`from_dict` inverts it)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BoardCalibration":
        """Inverse of `to_dict`.

        Raises:
            UsageError: not a calibration.
        """
        try:
            ratios = tuple(
                BoardRatio(Board(**r["board"]), float(r["throughput_ratio"]),
                           None if r["energy_ratio"] is None else float(r["energy_ratio"]),
                           tuple(float(x) for x in r["throughput_ratios"]),
                           tuple(float(x) for x in r.get("energy_ratios") or ()))
                for r in d["ratios"])
            return cls(str(d["reference_uuid"]), ratios, tuple(str(n) for n in d["networks"]),
                       str(d["precision"]), int(d["batch_size"]), float(d["tolerance_frac"]),
                       float(d.get("cost_s", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"not a board calibration: {exc!r}") from None

    def save(self, path: str | Path) -> Path:
        """Write the calibration as JSON."""
        p = Path(path)
        p.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return p

    @classmethod
    def load(cls, path: str | Path) -> "BoardCalibration":
        """Read a calibration written by `save`.

        Raises:
            UsageError: unreadable or not a calibration.
        """
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read board calibration {path}: {exc}") from None


MeasureFn = Callable[[str], Measurement]
"""Measures one reference network (by its string) on one board."""


def calibrate(boards: Sequence[MeasureFn], networks: Sequence[str], *, repeats: int = 1,
              tolerance_frac: float = DEFAULT_TOLERANCE_FRAC) -> BoardCalibration:
    """Measure every reference network on every board and give each board's ratios to the first.

    Each network is measured `repeats` times per board (the median kept), board after board for
    one network before the next, so slow drifts (warming up) touch every board alike.

    Args:
        boards: one measuring function per board (e.g. ``lambda a: meter.measure_arch(a, ...)``);
            the first is the reference board.
        networks: the reference networks (`reference_archs`).
        repeats: measurements per network and board.
        tolerance_frac: see `DEFAULT_TOLERANCE_FRAC`.

    Raises:
        UsageError: no board or network, two functions measuring one board, or a non-positive
            figure.
    """
    if not boards or not networks or repeats < 1:
        raise UsageError("a calibration needs at least one board, one reference network and one repeat")
    figures: list[list[tuple[float, float | None]]] = [[] for _ in boards]
    settings: tuple[str, int] = ("", 0)
    identities: list[Board | None] = [None] * len(boards)
    cost_s = 0.0
    for net in networks:
        for k, measure in enumerate(boards):
            ms = [measure(net) for _ in range(repeats)]
            cost_s += sum(m.measure_cost_s for m in ms)
            identities[k] = identities[k] or Board.of(ms[0])
            tput = statistics.median(m.throughput_img_per_s for m in ms)
            energies = [m.energy_j_per_img for m in ms if m.energy_j_per_img is not None]
            energy = statistics.median(energies) if len(energies) == len(ms) else None
            if not tput > 0 or (energy is not None and not energy > 0):
                raise UsageError(f"board {k} gave a non-positive figure for {net}")
            figures[k].append((tput, energy))
            settings = (ms[0].precision, ms[0].batch_size)
    boards_ = [b if b.gpu_uuid else dataclasses.replace(b, gpu_uuid=f"board-{k}")
               for k, b in enumerate(identities) if b is not None]
    uuids = [b.gpu_uuid for b in boards_]
    if len(set(uuids)) != len(uuids):
        raise UsageError(f"two calibration meters measured one board ({', '.join(map(str, uuids))})")
    ref = figures[0]
    ratios = []
    for board, figs in zip(boards_, figures):
        t = tuple(f[0] / r[0] for f, r in zip(figs, ref))
        has_energy = all(f[1] is not None and r[1] is not None for f, r in zip(figs, ref))
        e = tuple(f[1] / r[1] for f, r in zip(figs, ref)) if has_energy else ()  # type: ignore[operator]
        ratios.append(BoardRatio(board, _geomean(t), _geomean(e) if e else None, t, e))
    return BoardCalibration(str(uuids[0]), tuple(ratios), tuple(str(n) for n in networks),
                            settings[0], settings[1], tolerance_frac, cost_s)


def calibrate_meters(meters: Sequence[Meter], *, space: SpaceProtocol, precision: str, batch_size: int,
                     dataset: str = "cifar10", networks: Sequence[str] | None = None, repeats: int = 1,
                     tolerance_frac: float = DEFAULT_TOLERANCE_FRAC) -> BoardCalibration:
    """`calibrate` with one meter per board: an `ArchMeter` (``measure_arch``) answers the
    reference architectures itself; a `Meter` measures their deployed networks
    (``space.build_deployed``). `networks` defaults to `reference_archs` of the space."""
    nets = tuple(networks) if networks is not None else reference_archs(space.name)

    def measure_on(meter: Meter) -> MeasureFn:
        def measure(net: str) -> Measurement:
            arch = space.parse(net)
            if hasattr(meter, "measure_arch"):
                return meter.measure_arch(arch, precision=precision, batch_size=batch_size,
                                          dataset=dataset, space=space)
            model = space.build_deployed(arch, dataset)
            return meter.measure(model, space.input_shape(dataset), batch_size=batch_size, precision=precision)
        return measure

    return calibrate([measure_on(m) for m in meters], nets, repeats=repeats, tolerance_frac=tolerance_frac)


def normalise(m: Measurement, calibration: BoardCalibration) -> Measurement:
    """`m` with its throughput and energy per image divided by its board's ratios to the
    calibration's reference board (utilization, latency and power follow), and the ratios and the
    reference board named in the measurement. A measurement of the reference board, or already
    normalised, is returned as it is.

    Raises:
        UsageError: the calibration does not know `m`'s board.
    """
    if m.normalised_to_gpu_uuid is not None or m.gpu_uuid == calibration.reference_uuid:
        return m
    r = calibration.ratio_of(m.gpu_uuid)
    if r is None:
        raise UsageError(f"board {board_label(m.gpu_uuid)} was not calibrated (calibrated: "
                         f"{', '.join(x.board.label for x in calibration.ratios)})")
    tput = m.throughput_img_per_s / r.throughput_ratio
    energy = m.energy_j_per_img
    if energy is not None and r.energy_ratio is not None:
        energy = energy / r.energy_ratio
    return dataclasses.replace(
        m,
        throughput_img_per_s=tput,
        latency_ms_per_batch=1000.0 * m.batch_size / tput,
        utilization=Measurement.utilization_of(m.flops_per_img, tput, m.peak_flops_per_s),
        energy_j_per_img=energy,
        avg_power_w=None if energy is None or m.avg_power_w is None else energy * tput,
        normalised_to_gpu_uuid=calibration.reference_uuid,
        board_throughput_ratio=r.throughput_ratio,
        board_energy_ratio=r.energy_ratio if m.energy_j_per_img is not None else None,
    )


def check_boards(calibration: BoardCalibration, policy: str = DEFAULT_BOARD_POLICY) -> str | None:
    """Check the boards against the tolerance under `policy` (`BOARD_POLICIES`).

    Returns:
        ``None`` when every board is within the tolerance (nothing to do), else the one-line
        warning to print; with ``normalise`` the caller then passes every measurement through
        `normalise`.

    Raises:
        BoardMismatchError: boards beyond the tolerance and ``policy == "refuse"``.
        UsageError: an unknown policy.
    """
    if policy not in BOARD_POLICIES:
        raise UsageError(f"unknown board policy {policy!r}; choose from {', '.join(BOARD_POLICIES)}")
    out = calibration.outside()
    if not out:
        return None
    worst = max(out, key=BoardRatio.deviation_frac)
    e = "–" if worst.energy_ratio is None else f"{worst.energy_ratio:.3f}"
    line = (f"warning: {len(out)} of {len(calibration.ratios)} boards differ from board "
            f"{board_label(calibration.reference_uuid)} by more than {100 * calibration.tolerance_frac:.1f} % "
            f"(worst {worst.board.label}: throughput x{worst.throughput_ratio:.3f}, energy x{e})")
    if policy == "refuse":
        raise BoardMismatchError(line.removeprefix("warning: ") + "; refusing (--boards normalise to "
                                 "normalise every figure to the reference board instead)")
    if policy == "normalise":
        return line + f"; every figure is normalised to board {board_label(calibration.reference_uuid)}"
    return line + "; figures are kept as read (--boards ignore)"


class NormalisingMeasure:
    """Wraps a measuring function (``arch -> Measurement``) so every measurement it returns is
    normalised to the calibration's reference board (`normalise`)."""

    def __init__(self, measure: Callable[[Any], Measurement], calibration: BoardCalibration) -> None:
        self._measure = measure
        self.calibration = calibration

    def __call__(self, arch: Any) -> Measurement:
        return normalise(self._measure(arch), self.calibration)
