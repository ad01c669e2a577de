"""Make text safe for Streamlit elements that render Markdown (alerts, captions)."""

from __future__ import annotations

import re

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping them
# all leaves no link, image, emphasis, HTML, directive (`:red[...]`) or math (`$`) syntax.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def plain(text: str) -> str:
    """`text` shown literally by a Markdown renderer (server text, run names, paths)."""
    return _PUNCTUATION.sub(r"\\\1", text)
