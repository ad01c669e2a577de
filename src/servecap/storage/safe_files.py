"""Small guards every writer and reader shares: safe names, CSV cells, size limits, and the
one way servecap creates files and directories.

Every file servecap writes goes through `write_atomic`, `atomic_file` or `open_append`, and
every directory through `make_dir`: files are created 0600 and directories 0700 (results hold
prompts and server text), a link planted where a file is written is replaced, never followed
(a fresh temporary name made with O_EXCL, then `os.replace`; appends open with O_NOFOLLOW), and
a file is either its old or its new whole self (a full disk leaves no truncated report).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel

from servecap.core import json_input
from servecap.core.bounded_read import read_bounded
from servecap.core.errors import DataFormatError
from servecap.core.text import clean_text

M = TypeVar("M", bound=BaseModel)

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
    """A CSV cell that a spreadsheet will not run as a formula (OWASP CSV injection), with
    no raw control character (every CSV servecap writes passes here)."""
    if isinstance(value, str):
        value = clean_text(value)
        if value.startswith(_FORMULA_START):
            return "'" + value
    return value


def read_text_file(path: Path, what: str, limit: int = MAX_CONFIG_BYTES) -> str:
    """Read a small UTF-8 text file or raise `DataFormatError` naming the problem."""
    try:
        raw = read_bounded(path, limit, what)  # a device or FIFO ends at the limit too
    except OSError as exc:
        raise DataFormatError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if b"\x00" in raw:
        raise DataFormatError(f"{what} {path} is binary, not text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{what} {path} is not UTF-8 text") from exc


FILE_MODE = 0o600
DIR_MODE = 0o700


def make_dir(path: Path) -> Path:
    """`path` as a directory servecap may write into (parents made too, 0700).

    A link at `path` itself is removed and a real directory made in its place: files written
    inside it would otherwise land wherever the link points. (A link the user named as the
    output directory is theirs to choose: callers pass entries they create under it.)"""
    if path.is_symlink():
        path.unlink()
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A binary handle whose content replaces `path` whole when the block ends without error.

    The temporary file is new (O_EXCL, mode 0600) in `path`'s directory; on any error it is
    removed and `path` keeps its old content."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to `path` atomically, never through a link."""
    with atomic_file(path) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def write_model(path: Path, model: BaseModel) -> Path:
    """A model as indented JSON, atomically (an outcome file beside a run)."""
    return write_atomic(path, model.model_dump_json(indent=2) + "\n")


def read_model(path: Path, model: type[M]) -> M | None:
    """A model `write_model` wrote, None when the file is absent or does not read as one."""
    if not path.is_file():
        return None
    try:
        return model.model_validate(json_input.loads(path.read_text()))
    except (ValueError, OSError):
        return None


def open_append(path: Path, buffered: bool = True) -> IO[bytes]:
    """`path` opened to append (created 0600); a link there is refused (ELOOP), not followed.

    Unbuffered, `write` returns how many bytes reached the file (a full disk may take part)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.fdopen(os.open(path, flags, FILE_MODE), "ab", buffering=-1 if buffered else 0)


RESERVE_FILE = ".servecap-reserve"
RESERVE_BYTES = 1024 * 1024


class DiskReserve:
    """Room held on the results' disk for a run's last words.

    A disk that fills mid-run would leave no room for the final run.json and summaries (the
    status, the stop reason, the summary of every level measured). The reserve is written
    (not sparse) when the run starts and released before that final save."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / RESERVE_FILE
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.path, flags, FILE_MODE)
        try:
            block = bytes(64 * 1024)
            for _ in range(RESERVE_BYTES // len(block)):
                os.write(fd, block)
        finally:
            os.close(fd)

    def release(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def hold_reserve(directory: Path) -> DiskReserve | None:
    """A reserve in `directory`, or None when the disk is already too full for one (then
    the final save gets what room there is)."""
    try:
        return DiskReserve(directory)
    except OSError:
        (directory / RESERVE_FILE).unlink(missing_ok=True)
        return None
