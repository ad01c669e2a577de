"""Read every artifact a run or report left behind, ZIP members included."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path


def artifact_texts(root: Path) -> Iterator[tuple[str, bytes]]:
    """(name, raw bytes) of every file under `root` and every member of every ZIP there."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield str(path), data
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as bundle:
                for member in bundle.namelist():
                    yield f"{path}!{member}", bundle.read(member)


def find_secret(root: Path, secrets: list[str], extra: dict[str, str]) -> list[str]:
    """Where any of `secrets` appears: artifacts under `root` and the texts in `extra`."""
    hits = []
    for name, data in artifact_texts(root):
        hits += [f"{name}: {s}" for s in secrets if s.encode() in data]
    for name, text in extra.items():
        hits += [f"{name}: {s}" for s in secrets if s in text]
    return hits
