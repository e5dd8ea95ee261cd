"""Two searches on one run folder: the second is refused in one line that names the holder and the
right fixes, and the first finishes untouched."""

from __future__ import annotations

import time

from fake_parts import DELAY_ENV, start_search


def test_a_second_search_on_a_busy_run_folder_is_refused_with_the_right_fix(tmp_path, fake_env):
    out = tmp_path / "run"
    args = ["--budget", "4", "--dvfs", "none", "--filter", "none", "--quiet", "--out", str(out)]
    first = start_search(args, {**fake_env, DELAY_ENV: "1.5"})
    try:
        deadline = time.monotonic() + 240
        while not (out / "study.journal").exists():  # the first one holds the folder
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        second = start_search(args, fake_env)
        _, err = second.communicate(timeout=240)
        _, first_err = first.communicate(timeout=240)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    lines = err.strip().splitlines()
    assert second.returncode == 2 and len(lines) == 1, err
    assert f"pid {first.pid}" in lines[0] and "another --out" in lines[0] and "--workers N" in lines[0]
    assert "--storage" in lines[0] and "--study-name" not in lines[0]  # another name does not free the folder
    assert first.returncode == 0, first_err
