"""``--profile``: replaying a recorded profile other than the shipped one (the deployed-network
profile here, a real file), the one-line refusals, and the profile's content defining the study."""

from __future__ import annotations

import csv
import gzip
import json

import pytest

from nasenergy.hardware.recorded import DEPLOYED_PROFILE
from nasenergy.search.command import cli
from nasenergy.search.command.config import SearchConfig, profile_digest


def _main(tmp_path, *extra: str) -> int:
    return cli.main(["--budget", "4", "--quiet", "--out", str(tmp_path / "run"), *extra])


def test_a_search_replays_the_profile_it_is_given(tmp_path):
    assert _main(tmp_path, "--profile", str(DEPLOYED_PROFILE)) == 0
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["hardware"] == "recorded" and config["profile"] == str(DEPLOYED_PROFILE)
    assert config["profile_sha256"] == profile_digest(str(DEPLOYED_PROFILE))
    assert f"-profile.{config['profile_sha256'][:8]}-" in config["study_name"]
    with (tmp_path / "run" / "candidates.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["outcome"] == "evaluated"]
    assert len(rows) == 4
    # figures of deployed networks: the network key is the deployed structure
    from search_spaces import get_space

    tss = get_space("tss")
    assert all(r["network"] == tss.deployed_key(r["arch"]) for r in rows)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--profile", "absent.csv.gz"], "--profile: absent.csv.gz is not a file"),
        (["--profile", str(DEPLOYED_PROFILE), "--hardware", "cpu"], "goes with --hardware recorded"),
        (["--profile", "{readme}"], "is not a profile: columns missing"),
        (["--profile", str(DEPLOYED_PROFILE), "--space", "sss"], "is not a profile of the sss space"),
        (["--profile", "{truncated}"], "cannot read profile"),
        (["--profile", "{negative}"], "throughput_img_per_s is -"),
        (["--profile", "{nan}"], "energy_j_per_img is nan"),
        (["--profile", "{text}"], "batch_size is 'many', not a number"),
    ],
)
def test_bad_profiles_are_refused_in_one_line(tmp_path, capsys, extra, fragment):
    readme = tmp_path / "README.md"
    readme.write_text("# not a profile\n")
    files = {"readme": readme}
    data = gzip.decompress(DEPLOYED_PROFILE.read_bytes()).decode()
    header, first, *rest = data.splitlines(keepends=True)
    columns = header.rstrip("\n").split(",")

    def with_cell(name: str, column: str, value: str):
        cells = first.rstrip("\n").split(",")
        cells[columns.index(column)] = value
        files[name] = tmp_path / f"{name}.csv"
        files[name].write_text(header + ",".join(cells) + "\n" + "".join(rest))

    with_cell("negative", "throughput_img_per_s", "-" + first.split(",")[columns.index("throughput_img_per_s")])
    with_cell("nan", "energy_j_per_img", "nan")
    with_cell("text", "batch_size", "many")
    files["truncated"] = tmp_path / "truncated.csv.gz"
    files["truncated"].write_bytes(DEPLOYED_PROFILE.read_bytes()[:2000])
    for name, path in files.items():
        extra = [a.replace("{%s}" % name, str(path)) for a in extra]
    before = DEPLOYED_PROFILE.read_bytes()
    code = _main(tmp_path, *extra)
    assert DEPLOYED_PROFILE.read_bytes() == before  # the installed data unchanged
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and fragment in err[0], err


def test_a_changed_profile_does_not_resume_the_study_of_another(tmp_path, capsys):
    copy = tmp_path / "profile.csv.gz"
    copy.write_bytes(DEPLOYED_PROFILE.read_bytes())
    assert _main(tmp_path, "--profile", str(copy), "--study-name", "mine") == 0
    with gzip.open(copy, "rt", newline="") as fh:
        lines = fh.readlines()
    with gzip.open(copy, "wt", newline="") as fh:
        fh.writelines(lines[:-1])  # one row fewer: other figures
    capsys.readouterr()
    assert _main(tmp_path, "--profile", str(copy), "--study-name", "mine", "--budget", "6") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "profile_sha256" in err[0], err


def test_auto_hardware_becomes_recorded_with_a_profile():
    config = SearchConfig(profile=str(DEPLOYED_PROFILE)).validate()
    assert config.hardware == "recorded"
    assert config.study_defining()["profile_sha256"] == profile_digest(str(DEPLOYED_PROFILE))
    # Without --profile the shipped profile's content defines the study where it is replayed ...
    if SearchConfig().replayed_profile() is not None:  # no GPU here: auto replays the shipped profile
        assert SearchConfig().study_defining()["profile_sha256"] == profile_digest(str(DEPLOYED_PROFILE))
    assert SearchConfig(hardware="recorded").study_defining()["profile_sha256"] == profile_digest(str(DEPLOYED_PROFILE))
    # ... and a run that measures has none
    assert "profile_sha256" not in SearchConfig(hardware="cpu", precision="fp32", batch_size=256).study_defining()


def test_a_study_never_resumes_on_another_shipped_profile(tmp_path, monkeypatch, capsys):
    """A study made while the shipped profile held other figures (an older version) is refused."""
    from nasenergy.hardware import recorded

    older = tmp_path / "older.csv.gz"
    with gzip.open(DEPLOYED_PROFILE, "rt", newline="") as fh:
        lines = fh.readlines()
    with gzip.open(older, "wt", newline="") as fh:
        fh.writelines(lines[:-1])
    monkeypatch.setattr(recorded, "DEFAULT_PROFILE", older)
    assert _main(tmp_path, "--hardware", "recorded", "--study-name", "s", "--budget", "4") == 0
    stored = json.loads((tmp_path / "run" / "config.json").read_text())
    assert stored["profile_sha256"] == profile_digest(str(older))  # config.json names the content replayed
    monkeypatch.setattr(recorded, "DEFAULT_PROFILE", DEPLOYED_PROFILE)
    capsys.readouterr()
    assert _main(tmp_path, "--hardware", "recorded", "--study-name", "s", "--budget", "4") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "profile_sha256" in err[0], err


def test_help_states_what_the_shipped_profiles_cover():
    """The ``--help`` lines on the shipped profiles, checked against the files themselves."""
    import re

    from nasenergy.hardware.recorded import RecordedMeter, default_profile
    from nasenergy.search.command.coverage import profile_coverage
    from search_spaces import get_space

    text = " ".join(cli.build_parser().format_help().split())
    space = get_space("tss")
    meter = RecordedMeter(space=space)
    assert meter.network_form == "deployed" and "tss NVIDIA H200, deployed networks:" in text
    for precision, batch, _ in meter.settings:
        cov = profile_coverage(meter, space, SearchConfig(hardware="recorded", precision=precision, batch_size=batch))
        cells = "every cell" if cov.covered_cells == cov.total_cells else f"{cov.covered_cells:,} of {cov.total_cells:,} cells"
        assert re.search(rf"{precision} batch {batch} {cells}", text), (precision, batch, cells)
    measured = {space.deployed_key(r["canonical_arch"]) for r in meter.rows()}
    stated = re.search(r"\(([\d,]+) of ([\d,]+) deployed networks measured so far\)", text)
    if len(measured) < len(list(space.deployed_classes())):
        assert stated and [int(g.replace(",", "")) for g in stated.groups()] == [
            len(measured), len(list(space.deployed_classes()))]
    else:
        assert stated is None
    sss = get_space("sss")
    sss_meter = RecordedMeter(default_profile("sss"), space=sss)
    assert sss_meter.network_form == "deployed" and "sss NVIDIA H200, deployed networks:" in text
    assert sorted({(p, b) for p, b, _ in sss_meter.settings}) == [("fp16", 1024)]
    # ImageNet16-120's input (3x16x16): recorded in parts, the help states how far
    n_tss16 = {p: len({space.deployed_key(r["canonical_arch"]) for r in meter.rows()
                       if r["input_shape"] == "3x16x16" and r["precision"] == p}) for p in ("fp16", "fp32")}
    assert n_tss16["fp16"] == n_tss16["fp32"]
    n_classes = len(list(space.deployed_classes()))
    assert (f"(ImageNet16-120's 3x16x16 input: {n_tss16['fp16']:,} of {n_classes:,} deployed networks so far, "
            "both settings)") in text
    n_sss16 = sum(1 for r in sss_meter.rows() if r["input_shape"] == "3x16x16")
    assert f"ImageNet16-120's 3x16x16 input: the first {n_sss16:,} of them)" in text
    cov = profile_coverage(sss_meter, sss, SearchConfig(space="sss", hardware="recorded"))
    assert f"fp16 batch 1024 {cov.covered_cells:,} of {sss.size:,} configurations" in text
