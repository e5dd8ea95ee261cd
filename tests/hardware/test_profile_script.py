"""The space-profiling script's order, resume and merge logic (no GPU needed)."""

from __future__ import annotations

import json

import pytest

from nasenergy.hardware.recorded import read_profile, row_busy_fraction
from nasenergy.testing import write_fake_profile


@pytest.fixture(scope="module")
def script(load_experiment):
    return load_experiment("profile_tss_space")


def test_class_order_is_every_deployed_class_once_and_seeded(script, tss):
    order = script.class_order(tss, seed=0)
    assert len(order) == len(set(order)) == len({tss.deployed_key(a) for a in order}) == 6040
    smallest = {tss.deployed_key(a): a for a in reversed(list(tss.enumerate()))}
    assert all(smallest[tss.deployed_key(a)] == a for a in order[:50])  # the member of smallest index
    assert script.class_order(tss, seed=0)[:20] == order[:20]
    assert script.class_order(tss, seed=1)[:20] != order[:20]


def test_merge_is_idempotent_and_drops_partial_rows(script, tss, tmp_path):
    archs = [tss.arch_at(i) for i in range(0, 60, 5)]
    a = write_fake_profile(tmp_path / "chunk_a.csv", archs[:7], space=tss)
    b = write_fake_profile(tmp_path / "chunk_b.csv", archs[4:], space=tss)
    with open(b, "a") as f:
        f.write("|nor_conv_3x3~0|+|partial")          # a run killed mid-write
    profile = tmp_path / "profile.csv.gz"
    assert script.main(["merge", str(a), str(b), "--profile", str(profile)]) == 0
    first = profile.read_bytes()
    assert script.main(["merge", str(a), str(b), "--profile", str(profile)]) == 0
    assert profile.read_bytes() == first
    rows = read_profile(profile)
    keys = [r["canonical_arch"] for r in rows]
    assert len(keys) == len(set(keys)) == len({tss.deployed_key(x) for x in archs})
    assert [int(r["arch_index"]) for r in rows] == sorted(int(r["arch_index"]) for r in rows)
    assert len(script.complete_rows(b)) == len(archs) - 4


def test_merge_leaves_out_rows_whose_energy_window_was_starved(script, tss, tmp_path, capsys):
    from nasenergy.hardware.recorded import write_profile

    archs = [tss.arch_at(i) for i in range(0, 40, 5)]
    rows = read_profile(write_fake_profile(tmp_path / "c.csv", archs, space=tss))
    assert all(row_busy_fraction(r) == pytest.approx(1.0, rel=1e-3) for r in rows)
    starved = dict(rows[2], energy_j_per_img=str(3 * float(rows[2]["energy_j_per_img"])))  # idle 2/3 of it
    write_profile([*rows[:2], starved, *rows[3:]], tmp_path / "chunk.csv")
    profile = tmp_path / "profile.csv.gz"
    assert script.main(["merge", str(tmp_path / "chunk.csv"), "--profile", str(profile)]) == 0
    kept = read_profile(profile)
    assert len(kept) == len(rows) - 1 and starved["canonical_arch"] not in {r["canonical_arch"] for r in kept}
    assert "left out 1 rows whose energy window ran below 95%" in capsys.readouterr().out
    assert script.main(["merge", "--profile", str(profile)]) == 0  # re-checking alone changes nothing
    assert read_profile(profile) == kept


def test_existing_profile_rows_win(script, tss, tmp_path):
    from nasenergy.testing import FakeMeter

    arch = [tss.arch_at(3)]
    profile = write_fake_profile(tmp_path / "p.csv.gz", arch, space=tss)
    chunk = write_fake_profile(tmp_path / "chunk_x.csv", arch, space=tss,
                               meter=FakeMeter(idle_power_w=99.0))
    before = profile.read_bytes()
    assert script.main(["merge", str(chunk), "--profile", str(profile)]) == 0
    assert profile.read_bytes() == before


def test_missing_settings_are_per_deployed_class(script, tss):
    key = tss.deployed_key(tss.arch_at(7))
    settings = [script.SETTINGS_FP16, script.SETTINGS_FP32]
    assert script.missing_settings(key, settings, set()) == settings
    assert script.missing_settings(key, settings, {(key, "fp16", 1024)}) == [script.SETTINGS_FP32]
    assert script.missing_settings(key, settings, {("other", "fp16", 1024)}) == settings
    assert script.missing_settings(key, settings, {(key, "fp16", 1024), (key, "fp32", 256)}) == []


def test_a_resumed_sample_stays_the_same_sample(script):
    from search_spaces import get_space

    sss = get_space("sss")
    settings = [script.SETTINGS_FP16]
    first = script.classes_to_measure(sss, 0, settings, set(), max_classes=100)
    assert len(first) == 100 == len(set(first))
    done = {(sss.deployed_key(a), "fp16", 1024) for a in first[:60]}
    assert script.classes_to_measure(sss, 0, settings, done, max_classes=100) == first[60:]
    halves = [script.classes_to_measure(sss, 0, settings, done, max_classes=100, shard=(k, 2)) for k in (0, 1)]
    assert sorted(map(str, halves[0] + halves[1])) == sorted(map(str, first[60:]))
    assert not set(halves[0]) & set(halves[1])


@pytest.mark.parametrize("text, expected", [("0/1", (0, 1)), ("1/2", (1, 2)), ("7/8", (7, 8))])
def test_parse_shard(script, text, expected):
    assert script.parse_shard(text) == expected


@pytest.mark.parametrize("text", ["2/2", "-1/2", "1", "a/b", "0/0"])
def test_parse_shard_rejects_bad_shards(script, text):
    with pytest.raises(Exception, match="shard"):
        script.parse_shard(text)


def test_bad_shard_flag_is_one_line_and_exit_2(script, capsys):
    with pytest.raises(SystemExit) as exc:
        script.main(["measure", "--shard", "3/2"])
    assert exc.value.code == 2
    assert "shard" in capsys.readouterr().err


def test_merge_fill_sets_only_empty_optional_columns(script, tss, tmp_path):
    archs = [tss.arch_at(i) for i in (0, 5)]
    chunk = write_fake_profile(tmp_path / "chunk_a.csv", archs, space=tss)
    rows = read_profile(chunk)
    assert all(r["energy_window_s"] == "" for r in rows)   # optional columns read as empty
    profile = tmp_path / "p.csv.gz"
    assert script.main(["merge", str(chunk), "--profile", str(profile),
                        "--fill", "energy_window_s=0.3", "--fill", "energy_windows=1"]) == 0
    merged = read_profile(profile)
    assert {(r["energy_window_s"], r["energy_windows"]) for r in merged} == {("0.3", "1")}
    kept = script.fill_empty([{"energy_window_s": "0.28"}], {"energy_window_s": "0.3"})
    assert kept == [{"energy_window_s": "0.28"}]


def test_merge_fill_rejects_unknown_columns(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        script.main(["merge", str(tmp_path / "x.csv"), "--fill", "throughput_img_per_s=1"])
    assert exc.value.code == 2
    assert "--fill" in capsys.readouterr().err


def test_reference_classes_are_the_profiles_earliest_in_measuring_order(script, tss, tmp_path):
    order = script.class_order(tss, 0)
    held = [order[i] for i in (3, 0, 7, 12, 5)]
    profile = write_fake_profile(tmp_path / "profile.csv", held, space=tss)
    refs = script.reference_classes(tss, profile, 0, 3)
    assert [tss.deployed_key(a) for a in refs] == [tss.deployed_key(order[i]) for i in (0, 3, 5)]
    assert script.reference_classes(tss, tmp_path / "absent.csv", 0, 3) == []


def test_prepare_makes_host_copies_per_setting(script, tss):
    prepared = script.prepare(tss, tss.arch_at(123), [script.SETTINGS_FP16, script.SETTINGS_FP32])
    assert set(prepared.copies) == {"fp16", "fp32"}
    assert prepared.copies["fp16"].model is prepared.model
    assert script.prepare(tss, tss.arch_at(123)).copies == {}


class _FakeCudaMeter:
    """What `measure` asks of a `CudaMeter`, answered by the synthetic `FakeMeter` on the CPU."""

    def __init__(self, **options):
        from nasenergy.testing import FakeMeter

        self._fake = FakeMeter(device_name="fake H200")
        self.energy_window_s = options.get("energy_window_s", 0.28)
        self.energy_repeats = options.get("energy_repeats", 3)
        self.nvml_device = None
        self.driver_version = "fake-driver"
        self.last_phases_s: dict[str, float] = {}

    def idle_power_w(self) -> float:
        return self._fake.idle_power_w

    def measure(self, model, input_shape, **kw):
        return self._fake.measure(getattr(model, "model", model), input_shape, **kw)

    def close(self) -> None:
        pass


def test_an_sss_sample_is_measured_merged_resumed_and_replayed(script, tmp_path, monkeypatch, capsys):
    """The SSS path end to end on the CPU, with a fake meter standing in for the GPU one: a seeded
    sample measured into a chunk, merged into a profile that the recorded meter and
    ``python -m nasenergy.profile`` replay, and a resumed call that finds the sample done."""
    import torch

    from nasenergy import profile as profile_cli
    from nasenergy.hardware.recorded import RecordedMeter
    from search_spaces import get_space

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(script, "CudaMeter", _FakeCudaMeter)
    profile, chunks = tmp_path / "sss.csv.gz", tmp_path / "chunks"
    measure = ["measure", "--space", "sss", "--max-classes", "5", "--chunk-dir", str(chunks),
               "--profile", str(profile), "--time-limit-s", "600"]
    assert script.main(measure) == 0
    (chunk,) = chunks.glob("chunk_*.csv")
    assert script.main(["merge", "--space", "sss", "--profile", str(profile), str(chunk)]) == 0
    rows = read_profile(profile)
    sss = get_space("sss")
    assert len(rows) == 5 and {r["precision"] for r in rows} == {"fp16"}
    assert {r["network_form"] for r in rows} == {"deployed"}
    expected = {sss.deployed_key(a) for a in script.classes_to_measure(sss, 0, [script.SETTINGS_FP16], set(),
                                                                          max_classes=5)}
    assert {sss.deployed_key(r["canonical_arch"]) for r in rows} == expected
    meter = RecordedMeter(profile, space=sss)
    arch = rows[0]["canonical_arch"]
    assert meter.measure_arch(arch, precision="fp16", batch_size=1024).source == "recorded"
    chunk.unlink()
    capsys.readouterr()
    assert script.main(measure) == 0  # the sample is done: nothing left to measure
    assert "0 classes to measure" in capsys.readouterr().out
    assert profile_cli.main(["--space", "sss", "--hardware", "recorded", "--profile", str(profile),
                             "--arch", arch, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    (shown_m,) = shown["measurements"]
    assert shown_m["source"] == "recorded" and shown_m["device_name"] == "fake H200"


def test_compare_reports_the_differences_of_the_networks_both_hold(script, tss, tmp_path, capsys):
    import csv

    from nasenergy.hardware.recorded import write_profile

    archs = [tss.arch_at(i) for i in range(0, 50, 5)]
    earlier = read_profile(write_fake_profile(tmp_path / "a.csv", archs[:6], space=tss))
    later = [dict(r, throughput_img_per_s=str(1.02 * float(r["throughput_img_per_s"])),
                  energy_j_per_img=str(0.9 * float(r["energy_j_per_img"]))) for r in earlier[2:]]
    extra = read_profile(write_fake_profile(tmp_path / "x.csv", archs[6:], space=tss))
    write_profile([*later, *extra], tmp_path / "b.csv")
    out = tmp_path / "agree"
    assert script.main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "agreement.csv")))
    assert [r["canonical_arch"] for r in rows] == [r["canonical_arch"] for r in later]
    assert all(float(r["throughput_rel_diff"]) == pytest.approx(0.02) for r in rows)
    assert all(float(r["energy_rel_diff"]) == pytest.approx(-0.1) for r in rows)
    assert "| fp16 energy | 4 | 10.00 % | 10.00 % | 1.0000 |" in (out / "README.md").read_text()
    capsys.readouterr()
    assert script.main(["compare", str(tmp_path / "a.csv"), str(tmp_path / "x.csv"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == "error: no network is in both measurements"


def test_compare_pairs_rows_of_the_same_input_only(script, tss, tmp_path):
    import csv

    from nasenergy.hardware.recorded import write_profile

    archs = [tss.arch_at(i) for i in range(0, 20, 5)]
    big = read_profile(write_fake_profile(tmp_path / "a.csv", archs, space=tss))
    small = [dict(r, input_shape="3x16x16", throughput_img_per_s=str(3 * float(r["throughput_img_per_s"])))
             for r in big]
    write_profile([*small, *big], tmp_path / "both.csv")  # the 32x32 rows last
    later = [dict(r, throughput_img_per_s=str(1.01 * float(r["throughput_img_per_s"]))) for r in small]
    write_profile(later, tmp_path / "later.csv")
    out = tmp_path / "agree"
    assert script.main(["compare", str(tmp_path / "both.csv"), str(tmp_path / "later.csv"), "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "agreement.csv")))
    assert len(rows) == len(later)
    assert all(float(r["throughput_rel_diff"]) == pytest.approx(0.01) for r in rows)


def test_with_formats_fixes_only_fp32(script):
    settings = [script.SETTINGS_FP16, script.SETTINGS_FP32]
    assert script.with_formats(settings, "faster") == settings
    assert script.with_formats(settings, "contiguous") == [script.SETTINGS_FP16, ("fp32", 256, False)]
    assert script.with_formats(settings, "channels_last")[1] == ("fp32", 256, True)


@pytest.mark.slow
def test_a_builder_process_hands_over_networks_with_their_counts(script, tmp_path, monkeypatch):
    """``--builder process``: the networks come from a spawned process, measured as a thread's
    would be; the FLOPs count made there seeds the meter's cache; fp32 fixed to contiguous."""
    import sys

    import torch

    from nasenergy.hardware.flops import count_model

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    seen = []

    class Meter(_FakeCudaMeter):
        def measure(self, model, input_shape, **kw):
            seen.append((kw["precision"], kw["channels_last"], model.formats, type(model.model).__name__))
            return super().measure(model, input_shape, **kw)

    monkeypatch.setattr(script, "CudaMeter", Meter)
    # a spawned process finds the script by the name it has when run (experiments/ is on its path)
    monkeypatch.setitem(sys.modules, "profile_tss_space", script)
    for fn in (script.prepare_named, script._builder_init):
        monkeypatch.setattr(fn, "__module__", "profile_tss_space")
    got = []
    real = script.Prepared.remember

    def remember(self):
        got.append(self)
        return real(self)

    monkeypatch.setattr(script.Prepared, "remember", remember)
    argv = ["measure", "--max-classes", "3", "--fp32", "--fp32-format", "contiguous", "--builder", "process",
            "--chunk-dir", str(tmp_path / "c"), "--profile", str(tmp_path / "none.csv"), "--time-limit-s", "600"]
    assert script.main(argv) == 0
    assert [(p, cl, f) for p, cl, f, _ in seen] == [("fp16", None, [True, False]), ("fp32", False, [False])] * 3
    assert len(got) == 3  # two builders, two networks ahead
    for prepared in got:
        assert prepared.count is not None
        assert count_model(prepared.model, prepared.input_shape) is prepared.count  # no recount
    (chunk,) = (tmp_path / "c").glob("chunk_*.csv")
    assert len(read_profile(chunk)) == 6


def test_class_seconds_leave_out_the_first_class_and_give_phase_medians(script, tmp_path, capsys):
    lines = ["3 classes to measure in shard 0/1 (0 rows already done)",
             "  fp16: prepare 2.000, throughput 0.100, energy 0.300 s",
             "0 |a| 9.000 s",
             "  fp16: prepare 0.100, throughput 0.040, energy 0.120 s",
             "1 |b| 0.500 s",
             "  fp16: prepare 0.300, throughput 0.060, energy 0.200 s",
             "2 |c| 0.700 s"]
    stats = script.class_seconds(lines)
    assert stats["classes"] == 3
    assert stats["median_s"] == pytest.approx(0.6) and stats["mean_s"] == pytest.approx(0.6)
    assert stats["fp16 prepare median_s"] == pytest.approx(0.2)
    assert stats["fp16 energy median_s"] == pytest.approx(0.16)
    log = tmp_path / "a.log"
    log.write_text("\n".join(lines))
    assert script.main(["class-seconds", str(log)]) == 0
    assert "median_s 0.600" in capsys.readouterr().out


def test_unpacking_ahead_keeps_the_order_and_the_fast_options_reach_the_meter(script, tmp_path, monkeypatch):
    """``--unpack-ahead``: networks are unpacked on a thread, measured in the measuring order; the
    window, release and throughput options are passed to the meter."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    options = []

    class Meter(_FakeCudaMeter):
        def __init__(self, **kw):
            options.append(kw)
            super().__init__(**kw)

    monkeypatch.setattr(script, "CudaMeter", Meter)
    argv = ["measure", "--max-classes", "4", "--unpack-ahead", "--throughput-from-energy", "--release-every", "8",
            "--energy-source", "samples", "--energy-max-window-s", "0.3", "--energy-target-rel-se", "0.01",
            "--chunk-dir", str(tmp_path / "c"), "--profile", str(tmp_path / "none.csv"), "--time-limit-s", "600"]
    assert script.main(argv) == 0
    assert options == [{"energy_source": "samples", "energy_max_window_s": 0.3, "energy_target_rel_se": 0.01,
                        "throughput_from_energy": True, "release_every": 8}]
    (chunk,) = (tmp_path / "c").glob("chunk_*.csv")
    from search_spaces import get_space

    tss = get_space("tss")
    order = [tss.deployed_key(a) for a in script.class_order(tss, 0)[:4]]
    assert [tss.deployed_key(r["canonical_arch"]) for r in read_profile(chunk)] == order
    assert script.main(argv[:3] + ["--release-every", "0"] + argv[7:]) == 2


def test_imagenet16_rows_are_measured_at_16x16_beside_the_32x32_rows_and_replayed(script, tmp_path, monkeypatch,
                                                                                  capsys):
    """``--dataset ImageNet16-120`` measures the 16x16, 120-class deployed networks: rows of the
    32x32 input already in the profile do not count as done, the merged profile keeps both, a
    resumed call finds its sample done, and the recorded meter answers each dataset from its rows."""
    import torch

    from nasenergy.hardware.recorded import RecordedMeter
    from search_spaces import get_space

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(script, "CudaMeter", _FakeCudaMeter)
    tss = get_space("tss")
    profile, chunks = tmp_path / "tss.csv.gz", tmp_path / "chunks"
    common = ["--max-classes", "3", "--profile", str(profile), "--time-limit-s", "600"]
    assert script.main(["measure", "--chunk-dir", str(chunks / "a"), *common]) == 0
    assert script.main(["merge", "--profile", str(profile), *map(str, (chunks / "a").glob("chunk_*.csv"))]) == 0
    capsys.readouterr()
    im16 = ["measure", "--dataset", "ImageNet16-120", "--chunk-dir", str(chunks / "b"), *common]
    assert script.main(im16) == 0
    assert "3 classes to measure" in capsys.readouterr().out  # the 32x32 rows are not the 16x16 ones
    assert script.main(["merge", "--profile", str(profile), *map(str, (chunks / "b").glob("chunk_*.csv"))]) == 0
    rows = read_profile(profile)
    assert sorted(r["input_shape"] for r in rows) == ["3x16x16"] * 3 + ["3x32x32"] * 3
    small = {r["canonical_arch"]: r for r in rows if r["input_shape"] == "3x16x16"}
    large = {r["canonical_arch"]: r for r in rows if r["input_shape"] == "3x32x32"}
    assert set(small) == set(large)
    arch = next(iter(small))
    assert float(small[arch]["flops_per_img"]) < float(large[arch]["flops_per_img"])
    assert (float(small[arch]["flops_per_img_official"])
            == pytest.approx(tss.count(tss.parse(arch), "ImageNet16-120").flops, rel=1e-6))
    capsys.readouterr()
    assert script.main(im16) == 0
    assert "0 classes to measure" in capsys.readouterr().out
    meter = RecordedMeter(profile, space=tss)
    m16 = meter.measure_arch(arch, precision="fp16", batch_size=1024, dataset="ImageNet16-120")
    m32 = meter.measure_arch(arch, precision="fp16", batch_size=1024, dataset="cifar10")
    assert m16.input_shape == (3, 16, 16) and m32.input_shape == (3, 32, 32)


def test_reference_again_measures_the_reference_classes_once_more_at_the_end(script, tmp_path, monkeypatch,
                                                                              capsys):
    """``--reference 2 --reference-again`` writes the same reference networks twice: first into
    reference_*.csv, then, after the chunk, into late_reference_*.csv; without the flag, no late file."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(script, "CudaMeter", _FakeCudaMeter)
    profile, chunks = tmp_path / "tss.csv.gz", tmp_path / "chunks"
    common = ["--profile", str(profile), "--time-limit-s", "600"]
    assert script.main(["measure", "--max-classes", "3", "--chunk-dir", str(chunks / "a"), *common]) == 0
    assert script.main(["merge", "--profile", str(profile), *map(str, (chunks / "a").glob("chunk_*.csv"))]) == 0
    more = ["measure", "--max-classes", "5", "--reference", "2", *common]
    assert script.main([*more, "--chunk-dir", str(chunks / "b"), "--reference-again"]) == 0
    (early,) = (chunks / "b").glob("reference_*.csv")
    (late,) = (chunks / "b").glob("late_reference_*.csv")
    (chunk,) = (chunks / "b").glob("chunk_*.csv")
    archs = [[r["canonical_arch"] for r in read_profile(p)] for p in (early, late, chunk)]
    assert archs[0] == archs[1] and len(archs[0]) == 2 and len(archs[2]) == 2  # 2 new classes, fp16 each
    assert not set(archs[0]) & set(archs[2])
    assert "again, in the same process" in capsys.readouterr().out
    assert script.main([*more, "--chunk-dir", str(chunks / "c")]) == 0
    assert not list((chunks / "c").glob("late_reference_*.csv"))
    capsys.readouterr()
    assert script.main(["measure", "--chunk-dir", str(chunks / "d"), "--reference-again", *common]) == 2
    err = capsys.readouterr().err
    assert "--reference-again needs --reference N" in err and "Traceback" not in err


@pytest.mark.parametrize("flags, message", [
    (["--builders", "0"], "--builders, --repeats and --release-every must be at least 1"),
    (["--reference-again"], "--reference-again needs --reference N"),
])
def test_a_bad_flag_is_reported_as_such_without_a_gpu(script, tmp_path, monkeypatch, capsys, flags, message) -> None:
    """On a machine without a GPU a bad flag is named (exit 2), not hidden behind the missing GPU;
    good flags there get the one-line GPU error (exit 2)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    common = ["measure", "--profile", str(tmp_path / "p.csv.gz"), "--chunk-dir", str(tmp_path / "c")]
    assert script.main([*common, *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "CUDA" not in err and "Traceback" not in err
    assert script.main(common) == 2
    err = capsys.readouterr().err
    assert "measuring needs a CUDA GPU" in err and "Traceback" not in err
