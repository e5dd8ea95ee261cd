"""Passwords in storage URLs: masked wherever a URL is written or printed.

A ``--storage`` URL such as ``postgresql://user:PW@host/db`` carries a password. nasenergy never
writes or prints it: config.json, env.json, report.md, the resume command and every message show
``postgresql://user:***@host/db``. The URL may come from the environment variable
`STORAGE_ENV` instead of the command line, so it shows in neither the shell history nor ``ps``.
A run whose storage carries a password keeps its folder private (`PRIVATE_DIR_MODE`,
`PRIVATE_FILE_MODE`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote

from nasenergy.run.files import PRIVATE_FILE_MODE

STORAGE_ENV = "NASENERGY_STORAGE"
"""Environment variable holding the storage URL when ``--storage`` is not given."""

MASK = "***"
PRIVATE_DIR_MODE = 0o700

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+")


def password_of(url: str | None) -> str | None:
    """The password a URL carries (as written, not decoded), or ``None``."""
    if not url or "://" not in url:
        return None
    rest = url.split("://", 1)[1]
    at = rest.rfind("@")
    if at < 0 or ":" not in rest[:at]:
        return None
    password = rest[:at].split(":", 1)[1]
    return password or None


def has_password(url: str | None) -> bool:
    """Whether ``url`` carries a password."""
    return password_of(url) is not None


def _mask_one(url: str) -> str:
    scheme, rest = url.split("://", 1)
    at = rest.rfind("@")  # the last '@': a password may hold an unescaped one
    if at < 0 or ":" not in rest[:at]:
        return url
    user = rest[:at].split(":", 1)[0]
    return f"{scheme}://{user}:{MASK}{rest[at:]}"


MIN_SECRET_CHARS = 4
"""Shorter secrets are not searched for by value (they would mask ordinary words); the URLs that
carry them are still masked."""


def mask_text(text: str, *, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with the password of every URL in it replaced by ``***``, and every one of
    ``secrets`` (and its URL-decoded form) replaced too (for a password quoted oddly)."""
    masked = _URL.sub(lambda m: _mask_one(m.group(0)), text)
    for secret in secrets:
        if not secret or secret == MASK:
            continue
        for form in {secret, unquote(secret)}:
            if len(form) >= MIN_SECRET_CHARS:
                masked = masked.replace(form, MASK)
    return masked


def mask_argv(argv: Iterable[str]) -> list[str]:
    """Command-line arguments with the password of any URL among them masked, each argument
    taken whole (a password holding a space or a quote is masked too)."""
    return [_mask_one(arg) if "://" in arg else arg for arg in argv]


def mask_url(url: str | None) -> str | None:
    """``url`` with its password masked (``None`` stays ``None``)."""
    return None if url is None else mask_text(url, secrets=[password_of(url)])


def make_private(run_dir: Path, files: Iterable[Path] = ()) -> None:
    """Make ``run_dir`` readable by its owner only, with every file in it (and ``files``)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, PRIVATE_DIR_MODE)
    for path in [*run_dir.iterdir(), *files]:
        if path.is_file() and not path.is_symlink():
            os.chmod(path, PRIVATE_FILE_MODE)
