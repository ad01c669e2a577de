"""Server-supplied text made safe to print: no control character reaches a terminal or file.

A model id, run name or error body can carry ESC/OSC sequences (which recolour, retitle or
rewrite a terminal) or other C0/C1 controls. Each one is shown as a visible escape
(`\\x1b`) instead, so the text stays readable and nothing is interpreted. Markup (Rich's
`[bold]`, Markdown) is escaped by each renderer on top of this.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators and the
# bidirectional overrides that reorder what is shown.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SPACES = frozenset("\t\n\r")  # callers print one line: these become a space


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SPACES:
        return " "
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_KEPT = frozenset("\t\n\r")  # stored text keeps its lines; JSON, HTML and CSV carry them


def _escape_kept(match: re.Match[str]) -> str:
    return match.group() if match.group() in _KEPT else _escape(match)


def clean_text(text: str) -> str:
    """`text` as servecap stores or writes it: every control character but tab and line
    ends escaped (`\\x1b`, `\\u202e`). Server text passes here before any file holds it
    (through `Secrets.redact`), and every CSV cell and HTML value on the way out."""
    return _CONTROL.sub(_escape_kept, text) if _CONTROL.search(text) else text


def clean_tree(data: Any) -> Any:
    """JSON-like `data` with every string (keys included) passed through `clean_text`."""
    if isinstance(data, str):
        return clean_text(data)
    if isinstance(data, dict):
        return {clean_tree(k): clean_tree(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [clean_tree(v) for v in data]
    return data


def printable(text: object) -> str:
    """`text` as one line: tabs and line ends as spaces, every other control character
    escaped (`\\x1b`, `\\u202e`)."""
    return _CONTROL.sub(_escape, str(text))
