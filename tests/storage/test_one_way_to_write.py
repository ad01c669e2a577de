"""Every file servecap writes goes through `storage/safe_files.py` (atomic, 0600, never
through a link): a scan of the source for any other way to write, so a new writer cannot
bypass it unnoticed. The simulator island writes only its own profiles and is left out."""

from __future__ import annotations

import re
from pathlib import Path

import servecap

SRC = Path(servecap.__file__).parent
ALLOWED = {"storage/safe_files.py"}
WRITES = re.compile(
    r"\.write_text\(|\.write_bytes\(|os\.replace\(|os\.chmod\(|\.symlink_to\("
    r"|open\([^)]*[\"'][wax]b?\+?[\"']"
)
MKDIR = re.compile(r"\.mkdir\((?![^)]*mode=DIR_MODE)")


def test_no_writer_bypasses_safe_files() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name.startswith("sim/") or name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WRITES.search(line) or MKDIR.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []
