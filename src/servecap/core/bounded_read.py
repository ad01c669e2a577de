"""Reading an input file with a byte limit that holds for every kind of file.

A size from `stat` limits only regular files: `/dev/zero` says 0 bytes and never ends, a
FIFO says 0 and may block. Every reader of a user's file (datasets, traces, rate shapes,
stored runs, imported tables) reads through `read_bounded`: it stops at the limit whatever
the file is, and a FIFO with no writer reads as empty instead of hanging on open.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path

from servecap.core.errors import DataFormatError

STREAM_LIMIT = 256 * 1024 * 1024  # a pipe or device: no size to check, so a tighter bound
_CHUNK = 1024 * 1024


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of `path`; `DataFormatError` past `limit` bytes; `OSError` as raised."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        regular = stat.S_ISREG(info.st_mode)
        if not regular:
            limit = min(limit, STREAM_LIMIT)
            # blocking reads from here: a writer that is there is waited for
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        if regular and info.st_size > limit:
            raise too_large(path, what, limit)
        parts: list[bytes] = []
        size = 0
        while size <= limit:
            part = handle.read(min(_CHUNK, limit + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
    if size > limit:
        raise too_large(path, what, limit)
    return b"".join(parts)


def too_large(path: str | Path, what: str, limit: int) -> DataFormatError:
    return DataFormatError(f"{what} {path} is too large (more than {limit} bytes, the limit)")
