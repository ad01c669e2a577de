"""Outside `servecap/kinds/`, no code branches on which load kind a level is.

A kind owns its meaning (`kinds.base`); everything else asks it. This scans the source's
syntax trees for the forms such a branch takes: a kind or key prefix compared with a
kind's name or prefix (or tested for membership in a collection of them), `isinstance`
with a kind's level or load class, the retired `is_closed`/`is_open`/`LEVEL_KINDS`, and a
key's or level's `kind`. A class comparing its *own* `kind` field (`self.kind == "fixed"`:
a length distribution's kind) is not a load kind and is left alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from servecap.kinds.planned import PlannedLevel
from servecap.kinds.registry import KINDS

SRC = Path(__file__).resolve().parents[2] / "src" / "servecap"
KIND_NAMES = frozenset(KINDS) | {kind.text.prefix for kind in KINDS.values()}
KIND_CLASSES = frozenset(
    {cls.__name__ for kind in KINDS.values() for cls in (kind.load, *kind.levels)}
    | {PlannedLevel.__name__}
)
RETIRED = frozenset({"is_closed", "is_open", "LEVEL_KINDS"})


def _kind_names(node: ast.expr) -> bool:
    """A kind's name, or a literal collection holding one."""
    if isinstance(node, ast.Constant):
        return node.value in KIND_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_kind_names(item) for item in node.elts)
    return False


def _names_a_kind(node: ast.expr) -> bool:
    """An expression that reads a kind or a key prefix (not a class's own `self.kind`)."""
    text = ast.unparse(node)
    return ("kind" in text or "prefix" in text) and text != "self.kind"


def _type_names(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Tuple):
        return {name for item in node.elts for name in _type_names(item)}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    return {node.id} if isinstance(node, ast.Name) else set()


def _branch(node: ast.AST) -> str | None:
    """Why `node` branches on a load kind, or None."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        if any(_kind_names(s) for s in sides) and any(_names_a_kind(s) for s in sides):
            return "compares with a load kind's name"
    if (isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance"
            and len(node.args) == 2 and _type_names(node.args[1]) & KIND_CLASSES):
        return "isinstance with a load kind's class"
    if isinstance(node, ast.Attribute) and node.attr in RETIRED | {"kind"}:
        owner = ast.unparse(node.value)
        if owner.endswith(("key", "level")):
            return f"asks `{ast.unparse(node)}`"
    if isinstance(node, ast.Name) and node.id in RETIRED:
        return f"uses {node.id}"
    return None


def branches(source: str, where: str) -> list[str]:
    """One finding per line that branches on a kind, in line order."""
    found: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        why = _branch(node)
        if why is not None and getattr(node, "lineno", 0) not in found:
            found[node.lineno] = f"{where}:{node.lineno}: {why}: {ast.unparse(node)[:80]}"
    return [found[line] for line in sorted(found)]


@pytest.mark.slow
def test_no_code_outside_kinds_branches_on_a_kind() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if "kinds" in path.relative_to(SRC).parts:
            continue
        found += branches(path.read_text(), str(path.relative_to(SRC)))
    assert found == []


def test_the_scan_sees_every_form_of_a_branch() -> None:
    """The check itself: each form below is one finding, and a distribution's own kind none."""
    code = "\n".join([
        'if key.kind == "open": pass',
        'if key.prefix == "rate": pass',
        'if "sessions" != plan.kind: pass',
        'x = load.kind in ("closed", "replay")',
        "y = isinstance(level, OpenLevel)",
        "z = isinstance(spec, (int, kinds.ReplayLoad))",
        "w = level.key.is_closed",
        "v = LEVEL_KINDS['closed']",
        "u = level.kind",
        'ok = self.kind == "fixed"',  # a length distribution's own kind: not a load kind
        "fine = isinstance(x, int)",
        'also = command == "open"',  # a string that happens to be a kind's name
        "loop_closed = loop.is_closed()",
    ])
    found = branches(code, "snippet")
    assert [int(line.split(":")[1]) for line in found] == list(range(1, 10))
