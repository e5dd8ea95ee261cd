"""A dataset a user registers is a choice of ``--dataset``; what it lacks is said in one line."""

import pytest

from search_spaces import DatasetInfo, _datasets, register_dataset


@pytest.fixture
def tiny_imagenet(monkeypatch):
    monkeypatch.setattr(_datasets, "_INFOS", dict(_datasets._INFOS))
    monkeypatch.setattr(_datasets, "_BY_SPELLING", dict(_datasets._BY_SPELLING))
    register_dataset(DatasetInfo("tiny-imagenet", 200, (3, 64, 64)), aliases=("tinyimagenet",))


def test_a_registered_dataset_is_a_choice_and_the_recorded_profile_says_what_it_lacks(tiny_imagenet, tmp_path, capsys):
    from nasenergy.search.command.cli import main

    code = main(["--dataset", "TinyImageNet", "--budget", "5", "--hardware", "recorded", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("error: the recorded profile holds no measurements at fp16, batch 1024, input 3x64x64")


def test_an_unregistered_dataset_is_refused_by_name(tmp_path, capsys):
    from nasenergy.search.command.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--dataset", "tiny-imagenet", "--budget", "5", "--out", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    assert "unknown dataset 'tiny-imagenet'" in capsys.readouterr().err
