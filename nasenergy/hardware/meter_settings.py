"""Named settings of the live GPU measurement: how much work one candidate's cheap measurement does.

A search measures every candidate once, so the cost of one measurement multiplies with the number
of candidates (and with screening). Two settings, chosen with ``--meter-setting``:

* ``fast`` (the search's default): one energy window of at least 0.28 s (three updates of an H200's
  100-ms energy counter) started at the first counter update, with no warm-up of its own; the
  throughput comes from the same window's passes, each timed by CUDA events
  (`nasenergy.hardware.busy_windows.steady_throughput`), so there is no separate timed phase; the
  FLOPs and parameters of a deployed network come from the space's analytic count
  (`nasenergy.hardware.deployed.deployed_count`), equal to PyTorch's count.
* ``full`` (the search's earlier default, `CudaMeter`'s own defaults): five timed throughput
  repeats, then three energy windows of at least 0.28 s after 0.05 s of warm-up, the energy per
  image their median; FLOPs counted by PyTorch on the GPU while the timed repeats run.

Both probe the memory format as a deployer would and never change clocks or settings.
`parse_setting` also reads ``NAME:KEY=VALUE,...`` (e.g. ``fast:energy_window_s=0.38``) so that a
benchmark can measure variants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from nasenergy.errors import UsageError


@dataclass(frozen=True)
class MeterSetting:
    """A named measurement setting.

    Attributes:
        name: the setting's name (``fast``, ``full`` or a parsed variant's spec).
        meter_options: keyword arguments of `nasenergy.hardware.cuda_meter.CudaMeter`.
        analytic_counts: take FLOPs and parameters of a deployed network from the space's analytic
            count instead of counting them with PyTorch.
        summary: one line saying what the setting does.
    """

    name: str
    meter_options: Mapping[str, Any] = field(default_factory=dict)
    analytic_counts: bool = False
    summary: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "meter_options", MappingProxyType(dict(self.meter_options)))


FAST = MeterSetting(
    "fast",
    {"energy_repeats": 1, "energy_window_s": 0.28, "energy_warmup_s": 0.0, "throughput_from_energy": True},
    analytic_counts=True,
    summary="one energy window >= 0.28 s, no warm-up, throughput from the window's own timed passes, "
            "analytic FLOP count",
)
FULL = MeterSetting(
    "full",
    {},
    analytic_counts=False,
    summary="5 timed throughput repeats, then 3 energy windows >= 0.28 s after 0.05 s warm-up, "
            "FLOPs counted by PyTorch",
)
METER_SETTINGS: Mapping[str, MeterSetting] = MappingProxyType({s.name: s for s in (FAST, FULL)})
"""The named settings by ``--meter-setting`` name."""
DEFAULT_METER_SETTING = "fast"
"""The setting a live search measures with unless told otherwise."""


def _flag(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a yes/no value: {text!r}")


TUNABLE: Mapping[str, Callable[[str], Any]] = MappingProxyType({
    "n_repeats": int,
    "min_repeat_s": float,
    "energy_repeats": int,
    "energy_window_s": float,
    "energy_warmup_s": float,
    "energy_source": str,
    "energy_max_window_s": float,
    "format_probe_s": float,
    "throughput_from_energy": _flag,
    "release_every": int,
    "cuda_graphs": _flag,
    "analytic_counts": _flag,
})
"""The options a setting spec may change (`parse_setting`), each with its parser."""


def get_setting(name: str) -> MeterSetting:
    """The named setting.

    Raises:
        UsageError: an unknown name (one line naming the choices).
    """
    try:
        return METER_SETTINGS[name]
    except KeyError:
        raise UsageError(f"unknown meter setting {name!r}; choose from {', '.join(METER_SETTINGS)}") from None


def parse_setting(spec: str) -> MeterSetting:
    """A setting from ``NAME`` or ``NAME:KEY=VALUE[,KEY=VALUE...]`` (keys: `TUNABLE`); a variant is
    named by its spec.

    Raises:
        UsageError: an unknown name or key, or a value its parser refuses.
    """
    name, _, rest = spec.strip().partition(":")
    base = get_setting(name.strip())
    if not rest.strip():
        return base
    options = dict(base.meter_options)
    analytic = base.analytic_counts
    for item in rest.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or key not in TUNABLE:
            raise UsageError(f"meter setting {spec!r}: expected KEY=VALUE with KEY one of {', '.join(TUNABLE)}; "
                             f"got {item.strip()!r}")
        try:
            parsed = TUNABLE[key](value)
        except ValueError:
            raise UsageError(f"meter setting {spec!r}: bad value for {key}: {value!r}") from None
        if key == "analytic_counts":
            analytic = parsed
        else:
            options[key] = parsed
    return MeterSetting(spec.strip(), options, analytic, f"{base.summary}; changed: {rest.strip()}")
