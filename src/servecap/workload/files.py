"""Reading workload input files: whole text with the line of any bad byte, GC paused.

Contract: `read_text(name, what)` returns a file's text (UTF-8, a BOM dropped) or raises
`UserInputError` (unreadable: says what the file was for) / `DataFormatError` (not UTF-8,
naming the line). `json_line(where, line)` decodes one JSONL line, or raises
`DataFormatError` naming `where` and the column. `mapped_bytes(name, what)` maps a file
instead of copying it. `json_lines(name, data)` yields
`(line number, value)` for every non-blank line of a file's bytes, parsed by orjson straight
from the bytes (no decoded copy of the text, no string per line: a 100k-row file's load time
was mostly those); a line orjson refuses is re-read by `json_line`, so the message names the
file, the line and the column as before. `gc_paused()` holds off the cyclic collector while
many rows are built.
"""

from __future__ import annotations

import gc
import json
import mmap
import os
import re
from collections.abc import Generator, Iterator
from contextlib import contextmanager

import orjson

from servecap.core import json_input
from servecap.core.bounded_read import read_bounded, too_large
from servecap.core.errors import DataFormatError, UserInputError

BOM = b"\xef\xbb\xbf"
_LEADING_SPACE = re.compile(rb"\s*")


MAX_INPUT_BYTES = 4 * 1024 * 1024 * 1024  # a dataset or trace; pipes and devices: less


def read_bytes(name: str, what: str) -> bytes:
    """The bytes of `name`, the `what` ("trace", "dataset") named in any error; read with a
    byte limit whatever the file is (`/dev/zero` ends)."""
    try:
        return read_bounded(name, MAX_INPUT_BYTES, what)
    except OSError as exc:
        raise UserInputError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None


@contextmanager
def mapped_bytes(name: str, what: str) -> Iterator[bytes | mmap.mmap]:
    """The file's bytes mapped read-only rather than copied (copying a 245 MB dataset was a
    tenth of its load); an empty or unmappable file is read. Every view of the map must be
    released before the block ends (`json_lines` releases its own)."""
    try:
        # O_NONBLOCK: a FIFO with no writer must not hang the open (read_bytes reads it)
        handle = os.fdopen(os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb")
    except OSError as exc:
        raise UserInputError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None
    with handle:
        if os.fstat(handle.fileno()).st_size > MAX_INPUT_BYTES:
            raise too_large(name, what, MAX_INPUT_BYTES)
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # empty, or not a regular file
            yield read_bytes(name, what)
            return
        try:
            yield data
        finally:
            data.close()


def first_byte(data: bytes | mmap.mmap) -> bytes:
    """The first byte after a BOM and whitespace (b"" for a blank file), without copying."""
    start = len(BOM) if data[: len(BOM)] == BOM else 0
    match = _LEADING_SPACE.match(data, start)
    end = match.end() if match else start
    return data[end : end + 1]


def decode(name: str, data: bytes) -> str:
    """`data` as UTF-8 text (a BOM dropped); `DataFormatError` naming the line if it is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataFormatError(f"{name}:{line}: not UTF-8 text (a binary file?)") from None


def read_text(name: str, what: str) -> str:
    """The text of `name`, the `what` ("trace", "dataset") named in any error."""
    data = read_bytes(name, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataFormatError(f"{name}:{line}: not UTF-8 text (a binary file?)") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic GC while a file loads: rows hold no cycles, and the collector's repeated
    passes over hundreds of thousands of fresh objects cost as much as the parsing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# raw_decode skips json.loads' per-call checks and whitespace regexes (about 40% of a
# 100k-row load); the caller strips the line and rejects trailing data itself. Strict and
# bounded (no NaN, no RecursionError): see core.json_input.
_raw_decode = json_input.raw_decode


def json_line(where: str, line: str) -> object:
    """The JSON value on one line; `where` (`file:line`) and the column name any error."""
    body = line.strip()
    indent = len(line) - len(line.lstrip())
    try:
        value, end = _raw_decode(body)
    except json.JSONDecodeError as exc:
        raise DataFormatError(
            f"{where}: column {indent + exc.colno}: not JSON ({exc.msg})"
        ) from None
    if end != len(body):
        rest = body[end:]
        column = indent + end + len(rest) - len(rest.lstrip()) + 1
        raise DataFormatError(f"{where}: column {column}: not JSON (data after the value)")
    return value


def json_lines(
    name: str, data: bytes | mmap.mmap
) -> Generator[tuple[int, object], None, None]:
    """`(line number, value)` of every non-blank line of JSONL bytes (lines end at `\\n`).
    Close the generator before closing a map it reads (its view is released then)."""
    find, size = data.find, len(data)
    start = len(BOM) if data[: len(BOM)] == BOM else 0
    number = 0
    with memoryview(data) as view:
        while start < size:
            end = find(b"\n", start)
            if end < 0:
                end = size
            number += 1
            try:
                value = orjson.loads(view[start:end])
            except orjson.JSONDecodeError:
                value = _slow_line(name, number, data[start:end])
            if value is not _BLANK:
                yield number, value
            start = end + 1


_BLANK = object()


def _slow_line(name: str, number: int, raw: bytes) -> object:
    """A line orjson refused: blank, not UTF-8, or bad JSON (`json_line` says where); a value
    only `json` reads (an integer over 64 bits) is kept."""
    if not raw.strip():
        return _BLANK
    where = f"{name}:{number}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataFormatError(f"{where}: not UTF-8 text (a binary file?)") from None
    return json_line(where, text)
