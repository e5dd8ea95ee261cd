"""Whose a run folder is: ``--out`` names a new or empty folder, or one that holds a run of
nasenergy. A folder of someone's own files, the root of the file system or a system folder is
refused in one line before anything in it is touched (a run writes a dozen files into its folder
and replaces those of the same names).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from nasenergy.errors import UsageError
from nasenergy.run.files import CONFIG_JSON
from nasenergy.search.storage.locks import LOCK_FILE
from nasenergy.search.storage.storages import CLAIMS_FILE, JOURNAL_FILE

RUN_MARKERS: tuple[str, ...] = (LOCK_FILE, JOURNAL_FILE, CLAIMS_FILE)
"""Files only a run of nasenergy leaves in its folder (besides a ``config.json`` naming a study)."""
SYSTEM_FOLDERS: frozenset[str] = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
})
"""Folders no run may take, resolved (their subfolders may)."""


def check_folder_name(folder: Path) -> None:
    """Refuse a run folder name that is not valid UTF-8 (the run's files name their folder as
    text), that the system cannot look up (too long, a loop of links), or that names a file.

    Raises:
        UsageError: the name holds bytes that are not UTF-8, cannot be looked up, or is a file's.
    """
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(folder).decode("utf-8", "backslashreplace")
        raise UsageError(f"--out: {shown} is not a valid UTF-8 name; name a folder in UTF-8") from None
    try:
        is_folder = stat.S_ISDIR(folder.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return  # created later (a file on the way is refused then, in one line)
    except OSError as exc:
        raise UsageError(f"--out: {folder}: {exc.strerror or exc}") from None
    if not is_folder:
        raise UsageError(f"--out: {folder} exists and is not a folder")


def _names_a_study(config_file: Path) -> bool:
    try:
        stored = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stored, dict) and bool(stored.get("study_name")) and "budget" in stored


def holds_a_run(folder: Path) -> bool:
    """Whether ``folder`` holds a run of nasenergy (a file of `RUN_MARKERS`, or a ``config.json``
    naming a study and its budget)."""
    return any((folder / name).exists() for name in RUN_MARKERS) or _names_a_study(folder / CONFIG_JSON)


def check_folder_is_ours(folder: Path) -> None:
    """Refuse a run folder that is not new, not empty and holds no run of nasenergy, or that is a
    system folder. Hidden entries (``.name``) alone leave a folder empty.

    Raises:
        UsageError: the folder is taken by other files, or is a system folder; nothing in it is touched.
    """
    resolved = folder.expanduser().resolve()
    if str(resolved) in SYSTEM_FOLDERS or resolved == Path.home().resolve():
        raise UsageError(f"--out {folder}: a system or home folder is no run folder; name a folder of its own, "
                         "e.g. --out runs/try")
    if not resolved.is_dir():
        return
    try:
        entries = sorted(p.name for p in resolved.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise UsageError(f"--out {folder}: cannot be read: {exc.strerror or exc}") from None
    if not entries or holds_a_run(resolved):
        return
    shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
    raise UsageError(f"--out {folder} holds files of no nasenergy run ({shown}); name a new or empty folder, "
                     "so that none of them is replaced")
