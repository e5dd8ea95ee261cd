"""The `python -m nasenergy.profile` command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nasenergy import profile

search_spaces = pytest.importorskip("search_spaces")


@pytest.fixture()
def small_profile(tmp_path):
    from nasenergy.testing import write_fake_profile

    space = search_spaces.get_space("tss")
    canons = [space.canonical(space.arch_at(i)) for i in (11, 5000)]
    return write_fake_profile(tmp_path / "p.csv.gz", canons, space=space), canons


@pytest.fixture()
def recorded_args(small_profile):
    path, canons = small_profile
    return ["--hardware", "recorded", "--profile", str(path), "--arch", str(canons[1])], canons


def test_table_output(recorded_args, capsys):
    args, _ = recorded_args
    assert profile.main(args) == 0
    out = capsys.readouterr().out
    for text in ("fp16, batch size 1024, input 3x32x32", "source", "recorded", "img/s",
                 "TFLOP/s", "mJ (total", "W", "MHz", "utilization"):
        assert text in out


def test_json_output(recorded_args, capsys):
    args, canons = recorded_args
    assert profile.main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["arch"] == str(canons[1]) and data["hardware"] == "recorded"
    (m,) = data["measurements"]
    assert m["source"] == "recorded" and m["precision"] == "fp16" and m["input_shape"] == [3, 32, 32]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--precision", "fp8"], "invalid choice"),
        (["--batch-size", "0"], "--batch-size must be a positive integer"),
        (["--batch-size", "x"], "invalid int value"),
        (["--png", "a.png"], "--png needs --dvfs"),
        (["--precision", "fp32"], "no record of"),
        (["--dvfs-mode", "fastest"], "invalid choice"),
        (["--dvfs", "--max-slowdown", "2"], "--max-slowdown must be a fraction"),
        (["--dvfs", "--png", ""], "expected a file name ending in .png"),  # was: '.png' in the current folder
        (["--dvfs", "--png", "curve.svg"], "expected a file name ending in .png"),
        (["--dvfs", "--png", "/nonexistent-folder/c.png"], "is not a folder"),
    ],
)
def test_bad_input_exits_2_with_one_line(recorded_args, capsys, extra, needle):
    args, _ = recorded_args
    assert _exit_status(args + extra) == 2
    err = capsys.readouterr().err
    assert needle in err and err.startswith("error:") and err.count("\n") == 1


def test_bad_arch_and_missing_profile(small_profile, tmp_path, capsys):
    assert profile.main(["--hardware", "recorded", "--profile", str(small_profile[0]),
                         "--arch", "|conv~0|"]) == 2
    assert capsys.readouterr().err.startswith("error:")
    assert profile.main(["--hardware", "recorded", "--profile", str(tmp_path / "no.csv"),
                         "--arch", str(small_profile[1][0])]) == 2
    assert "profile not found" in capsys.readouterr().err


def test_dvfs_hook_is_called(recorded_args, capsys, monkeypatch, tmp_path):
    calls = []

    def show_curve(measurement, device=None, png_path=None, mode="min-energy", **kw):
        calls.append((measurement.precision, device, png_path, mode, kw))
        return "DVFS CURVE TEXT"

    monkeypatch.setattr(profile, "show_curve", show_curve)
    args, _ = recorded_args
    png = tmp_path / "c.png"
    assert profile.main(args + ["--dvfs", "--dvfs-mode", "min-edp", "--png", str(png)]) == 0
    assert "DVFS CURVE TEXT" in capsys.readouterr().out
    assert profile.main(args + ["--dvfs", "--dvfs-mode", "bounded-slowdown",
                                "--max-slowdown", "0.1"]) == 0
    net = str(args[-1])
    assert calls == [("fp16", None, png, "min-edp", {"network": net}),
                     ("fp16", None, None, "bounded-slowdown", {"max_slowdown": 0.1, "network": net})]


def test_dvfs_curve_from_the_real_model(tmp_path, capsys):
    pytest.importorskip("numpy")
    from nasenergy.testing import FakeMeter, write_fake_profile

    space = search_spaces.get_space("tss")
    arch = space.canonical(space.arch_at(99))
    path = write_fake_profile(tmp_path / "h.csv", [arch], space=space,
                              meter=FakeMeter(device_name="NVIDIA H200 (synthetic)"))
    assert profile.main(["--hardware", "recorded", "--profile", str(path), "--arch", str(arch),
                         "--dvfs"]) == 0
    out = capsys.readouterr().out
    assert "MHz" in out and "*" in out


def test_dvfs_curve_of_a_gpu_without_parameters_is_generic(tmp_path, capsys, monkeypatch):
    """A GPU no parameter set matches: the fake NVML's facts give a curve labelled generic."""
    pytest.importorskip("matplotlib")
    from nasenergy.hardware import nvml
    from nasenergy.testing import FakeGpu, FakeMeter, FakeNvml, write_fake_profile

    name = "NVIDIA L4 (fake)"
    fake = FakeNvml([FakeGpu(name=name, graphics_clocks_mhz=tuple(range(210, 2041, 15)),
                             default_sm_clock_mhz=2040, idle_power_w=16.0, power_limit_w=72.0,
                             power_limit_range_w=(40.0, 72.0))])
    monkeypatch.setattr(nvml, "load_nvml", lambda lib=None: fake)
    space = search_spaces.get_space("tss")
    arch = space.canonical(space.arch_at(99))
    path = write_fake_profile(tmp_path / "l4.csv", [arch], space=space,
                              meter=FakeMeter(device_name=name, idle_power_w=16.0, max_power_w=70.0,
                                              sm_clock_mhz=2040.0))
    png = tmp_path / "curve.png"
    assert profile.main(["--hardware", "recorded", "--profile", str(path), "--arch", str(arch),
                         "--dvfs", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "modelled (generic)" in out and "GENERIC" in out and str(arch) in out
    assert "band" in out and png.stat().st_size > 0
    best = [line for line in out.splitlines() if line.startswith("mode min-energy: best")]
    assert best and "saved vs default" in best[0]


def test_cpu_hardware_reports_no_energy(capsys):
    pytest.importorskip("torch")
    space = search_spaces.get_space("tss")
    arch = str(space.arch_at(0))
    assert profile.main(["--hardware", "cpu", "--arch", arch, "--precision", "fp32",
                         "--batch-size", "2", "--json"]) == 0
    (m,) = json.loads(capsys.readouterr().out)["measurements"]
    assert m["source"] == "measured" and m["energy_j_per_img"] is None
    assert m["energy_basis"] == "unavailable" and m["throughput_img_per_s"] > 0


def test_module_entry_point_exits_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "nasenergy.profile", "--arch", "nonsense",
                           "--hardware", "cpu"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error:") and "Traceback" not in proc.stderr


def _exit_status(argv: list[str]) -> int:
    """main()'s return value, or the status argparse exits with."""
    try:
        return profile.main(argv)
    except SystemExit as exc:
        return int(exc.code)


@pytest.fixture()
def two_setting_profile(tmp_path):
    """fp16 batch 1024 rows for two classes, an fp32 batch 256 row for the first only."""
    from nasenergy.hardware.recorded import read_profile, write_profile
    from nasenergy.testing import write_fake_profile

    space = search_spaces.get_space("tss")
    canons = [space.canonical(space.arch_at(i)) for i in (11, 5000)]
    fp16 = write_fake_profile(tmp_path / "a.csv", canons, space=space)
    fp32 = write_fake_profile(tmp_path / "b.csv", canons[:1], space=space, precisions=("fp32",), batch_size=256)
    path = tmp_path / "both.csv.gz"
    write_profile(read_profile(fp16) + read_profile(fp32), path)
    return path, canons


def _recorded_json(path, arch, *extra):
    return ["--hardware", "recorded", "--profile", str(path), "--arch", str(arch), "--json", *extra]


def test_each_precision_replays_at_its_recorded_batch_size(two_setting_profile, capsys):
    path, canons = two_setting_profile
    assert profile.main(_recorded_json(path, canons[0], "--precision", "all")) == 0
    settings = [(m["precision"], m["batch_size"]) for m in json.loads(capsys.readouterr().out)["measurements"]]
    assert settings == [("fp16", 1024), ("fp32", 256)]
    assert profile.main(_recorded_json(path, canons[0], "--precision", "fp32")) == 0
    assert json.loads(capsys.readouterr().out)["measurements"][0]["batch_size"] == 256


def test_all_skips_settings_the_class_lacks_and_says_so(two_setting_profile, capsys):
    path, canons = two_setting_profile
    assert profile.main(_recorded_json(path, canons[1], "--precision", "all")) == 0
    captured = capsys.readouterr()
    assert [m["precision"] for m in json.loads(captured.out)["measurements"]] == ["fp16"]
    assert "no fp32 batch-256 record" in captured.err


def test_an_explicit_unrecorded_setting_is_an_error(two_setting_profile, capsys):
    path, canons = two_setting_profile
    assert _exit_status(_recorded_json(path, canons[0], "--precision", "fp32", "--batch-size", "1024")) == 2
    assert "no record of" in capsys.readouterr().err
    assert _exit_status(_recorded_json(path, canons[1], "--precision", "fp32")) == 2
    assert "no record of" in capsys.readouterr().err


def _curve_rows(block: str) -> dict[str, list[float]]:
    """The marked rows (``*`` chosen, ``d`` default) of a printed DVFS table: mark -> figures."""
    rows = {}
    for line in block.splitlines():
        mark, rest = line[:2].strip(), line[2:].split()
        if mark and len(rest) == 6 and rest[0].replace(".", "").isdigit():
            rows[mark] = [float(v) for v in rest]
    return rows


@pytest.mark.parametrize("arch_index", [0, 9425])
def test_printed_dvfs_figures_agree_with_the_table_and_with_each_other(capsys, arch_index):
    """On the shipped profile (whose energy window's average power is not exactly energy x
    throughput), the default-clock row shows the table's energy per image, and every saving is
    printed with one sign convention: positive when energy falls, in the summary and the rows."""
    import re

    space = search_spaces.get_space("tss")
    arch = str(space.arch_at(arch_index))
    assert profile.main(["--hardware", "recorded", "--arch", arch, "--precision", "all", "--dvfs"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("\n\n")[1:]
    # each precision: its table with the curve's summary lines, then the curve's rows
    heads = [b for b in blocks if b.startswith(("fp16", "fp32"))]
    curves = [_curve_rows(b) for b in blocks if "clock_mhz" in b]
    assert len(heads) == len(curves) == 2
    for head, rows in zip(heads, curves):
        energy_mj = float(re.search(r"energy per image\s+([0-9.]+) mJ", head).group(1))
        assert rows["d"][4] == pytest.approx(energy_mj, rel=2e-4)   # the default-clock row
        assert rows["d"][5] == 0.0
        line = next(s for s in head.splitlines() if s.startswith("mode min-energy"))
        saved = float(re.search(r"\(([-0-9.]+) % saved vs default", line).group(1))
        assert saved > 0 and rows["*"][5] == pytest.approx(saved, abs=0.051)
    assert "-0.0" not in out


class _ArchOnlyMeter:
    """A user's meter answering architectures only (the fake meter's synthetic figures)."""

    device_name = "toy-arch"

    def __init__(self) -> None:
        from nasenergy.testing import FakeMeter

        self._fake = FakeMeter(device_name="toy-arch")

    def measure_arch(self, arch, *, precision, batch_size, dataset="cifar10", space=None):
        return self._fake.measure_arch(arch, precision=precision, batch_size=batch_size, dataset=dataset,
                                       space=space)


class _ModuleOnlyMeter:
    """A user's meter measuring built networks only (the fake meter's synthetic figures)."""

    device_name = "toy-module"

    def __init__(self) -> None:
        from nasenergy.testing import FakeMeter

        self._fake = FakeMeter(device_name="toy-module")

    def measure(self, model, input_shape, *, batch_size, precision, channels_last=None):
        return self._fake.measure(model, input_shape, batch_size=batch_size, precision=precision,
                                  channels_last=channels_last)


@pytest.fixture()
def toy_meters():
    """Two meters registered by a user, removed again afterwards."""
    from nasenergy.hardware.registry import METERS, MeterKind, register_meter

    register_meter(MeterKind("toy-arch", _ArchOnlyMeter, takes_options=False))
    register_meter(MeterKind("toy-module", _ModuleOnlyMeter, takes_options=False))
    yield ("toy-arch", "toy-module")
    METERS.unregister("toy-arch")
    METERS.unregister("toy-module")


@pytest.mark.parametrize("name", ["toy-arch", "toy-module"])
def test_a_registered_meter_is_a_hardware_choice(toy_meters, name, capsys):
    pytest.importorskip("torch")
    space = search_spaces.get_space("tss")
    arch = space.arch_at(11)
    assert profile.main(["--hardware", name, "--arch", str(arch), "--precision", "fp16", "--precision", "fp32",
                         "--batch-size", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hardware"] == name
    assert [(m["device_name"], m["precision"], m["batch_size"]) for m in data["measurements"]] == [
        (name, "fp16", 8), (name, "fp32", 8)]
    from nasenergy.testing import FakeMeter

    want = FakeMeter(device_name=name).measure_arch(arch, precision="fp16", batch_size=8, space=space)
    assert data["measurements"][0]["throughput_img_per_s"] == pytest.approx(want.throughput_img_per_s)


def test_profile_is_only_for_a_meter_that_reads_one(toy_meters, tmp_path, capsys):
    assert _exit_status(["--hardware", "toy-arch", "--profile", str(tmp_path / "p.csv"), "--arch",
                         str(search_spaces.get_space("tss").arch_at(0))]) == 2
    assert "--profile is for --hardware recorded" in capsys.readouterr().err


def test_a_png_that_cannot_be_written_is_one_line(tmp_path, capsys, monkeypatch):
    """A read-only place or a full disk: ``cannot write <png>: <reason>``, exit 2, no traceback."""
    import errno

    from matplotlib.figure import Figure

    from nasenergy.testing import FakeMeter, write_fake_profile

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full_disk)
    space = search_spaces.get_space("tss")
    arch = space.canonical(space.arch_at(99))
    path = write_fake_profile(tmp_path / "h.csv", [arch], space=space,
                              meter=FakeMeter(device_name="NVIDIA H200 (synthetic)"))
    png = tmp_path / "curve.png"
    assert profile.main(["--hardware", "recorded", "--profile", str(path), "--arch", str(arch), "--dvfs",
                         "--png", str(png)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: cannot write {png}: No space left on device\n"
