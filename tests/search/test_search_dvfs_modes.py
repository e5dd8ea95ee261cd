"""The DVFS mode registry (`nasenergy.search.command.dvfs_modes`): every ``--dvfs`` choice is a registered
mode, and a mode a user registers is accepted by `SearchConfig` and the command line and builds the
run's DVFS step in the default parts."""

from __future__ import annotations

import dataclasses

import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware.registry import METERS, MeterKind, register_meter
from nasenergy.search.command.cli import build_parser, config_from_args
from nasenergy.search.command.components import build_components, make_dvfs
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.dvfs_modes import DVFS_MODES, DvfsMode, register_dvfs_mode
from nasenergy.search.loop.dvfs_steps import default_energy_bound, modelled_step, no_step
from nasenergy.testing import FakeMeter


def _dvfs_choices() -> tuple[str, ...]:
    (action,) = [a for a in build_parser()._actions if "--dvfs" in a.option_strings]
    return tuple(action.choices)


def test_the_built_in_modes_are_the_command_line_choices():
    assert DVFS_MODES.names() == ("auto", "modelled", "measured", "recorded", "none")
    assert _dvfs_choices() == DVFS_MODES.names()
    assert [m for m in DVFS_MODES.names() if DVFS_MODES.get(m).changes_clocks] == ["measured"]


class Recorder:
    """A user's DVFS mode: the modelled step under its own label; remembers what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, config, meter, space):
        self.calls.append((config, meter, space))
        step = modelled_step(config, meter, space)
        return dataclasses.replace(step, label="toy clocks")


@pytest.fixture
def toy_mode():
    recorder = Recorder()
    register_dvfs_mode(DvfsMode("toy-clocks", recorder))
    register_dvfs_mode(DvfsMode("toy-locks", recorder, changes_clocks=True))
    register_meter(MeterKind("toy-h200", lambda: FakeMeter(device_name="fake H200"), takes_options=False))
    yield recorder
    DVFS_MODES.unregister("toy-clocks")
    DVFS_MODES.unregister("toy-locks")
    METERS.unregister("toy-h200")


def test_a_registered_mode_is_accepted_by_the_config_and_the_command_line(toy_mode):
    assert SearchConfig(dvfs="toy-clocks").validate().dvfs == "toy-clocks"
    assert "toy-clocks" in _dvfs_choices()
    args = build_parser().parse_args(["--dvfs", "toy-clocks", "--hardware", "toy-h200"])
    assert config_from_args(args).validate().dvfs == "toy-clocks"


def test_a_mode_that_changes_clocks_needs_the_opt_in(toy_mode):
    with pytest.raises(UsageError, match="--dvfs toy-locks changes the GPU clocks; add --allow-clock-control"):
        SearchConfig(dvfs="toy-locks").validate()
    assert SearchConfig(dvfs="toy-locks", allow_clock_control=True).validate().dvfs == "toy-locks"


def test_make_dvfs_asks_the_registered_mode(toy_mode):
    from search_spaces import get_space

    config, meter, space = SearchConfig(dvfs="toy-clocks"), FakeMeter(device_name="fake H200"), get_space("tss")
    step = make_dvfs(config, meter, space)
    assert toy_mode.calls == [(config, meter, space)]
    assert step.label == "toy clocks" and step.source == "modelled"


def test_the_default_parts_build_the_registered_step(toy_mode, table_path, tmp_path):
    config = SearchConfig(dvfs="toy-clocks", hardware="toy-h200", benchmark=str(table_path), budget=3,
                          out=str(tmp_path / "run"), quiet=True).validate()
    parts = build_components(config)
    assert len(toy_mode.calls) == 1 and toy_mode.calls[0][0] is config
    assert parts.describe["dvfs"] == "toy clocks" and parts.optimal_clock is not None


def test_an_unknown_mode_is_refused_in_one_line():
    with pytest.raises(UsageError, match=r"--dvfs: 'sometimes' is not one of auto, modelled") as info:
        SearchConfig(dvfs="sometimes").validate()
    assert "\n" not in str(info.value)


def test_a_registered_mode_that_keeps_the_default_clock_gets_the_bound_of_none():
    register_dvfs_mode(DvfsMode("toy-default-clock", no_step, default_clock_only=True))
    register_dvfs_mode(DvfsMode("toy-other-clock", no_step))
    try:
        assert [m for m in DVFS_MODES.names() if DVFS_MODES.get(m).default_clock_only] == ["none", "toy-default-clock"]
        none, mine, other = (default_energy_bound(SearchConfig(dvfs=d)) for d in
                             ("none", "toy-default-clock", "toy-other-clock"))
        assert mine.label == none.label and mine.bound == none.bound
        assert mine.bound.energy_factor == 1.0 and mine.bound.noise_sigmas == 0.0  # the measurement itself
        assert other.label != none.label and other.bound.energy_factor < 1.0  # optimism for a clock not measured
        for dvfs in ("none", "toy-default-clock"):
            parts = build_components(SearchConfig(dvfs=dvfs, hardware="recorded", quiet=True))
            assert parts.describe["filter energy bound"] == none.label and parts.optimal_clock is None
    finally:
        DVFS_MODES.unregister("toy-default-clock")
        DVFS_MODES.unregister("toy-other-clock")
