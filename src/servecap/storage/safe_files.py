"""Small guards every writer and reader shares: safe names, CSV cells, size limits."""

from __future__ import annotations

import os
import re
from pathlib import Path

from servecap.core.errors import DataFormatError

MAX_CONFIG_BYTES = 16 * 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_name(text: str, fallback: str = "run") -> str:
    """A file-name-safe slug of `text`: no separators, no `..`, at most 80 characters.

    Model ids like `../../etc/x` come from servers; they must not escape the output directory.
    """
    slug = _UNSAFE.sub("-", text).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)[:80].strip("-.")
    return slug or fallback


def neutralise_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not run as a formula (OWASP CSV injection)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def read_text_file(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """Read a small UTF-8 text file or raise `DataFormatError` naming the problem."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise DataFormatError(f"{what} {path} is too large ({size} bytes, limit {limit})")
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFormatError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if b"\x00" in raw:
        raise DataFormatError(f"{what} {path} is binary, not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{what} {path} is not UTF-8 text") from exc


def restrict_tree(root: Path, file_mode: int = 0o644, dir_mode: int = 0o755) -> None:
    """Make everything under `root` (written by servecap) readable but not world-writable,
    whatever the process umask was."""
    os.chmod(root, dir_mode)
    for path in root.rglob("*"):
        if path.is_symlink():
            continue
        os.chmod(path, dir_mode if path.is_dir() else file_mode)
