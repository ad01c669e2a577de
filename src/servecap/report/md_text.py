"""`md`: server and user text escaped for Markdown, used by `markdown` and `comparison_md`.

The text is escaped twice over: HTML special characters become entities (so a renderer that
allows inline HTML shows them as text) and Markdown punctuation is backslash-escaped (so no
link, image or emphasis can be formed from it).
"""

from __future__ import annotations

import re

from servecap.core.text import printable

# Enough to stop emphasis, code spans, links, images and table breaks; `<`/`>`/`&` become
# entities first. Text only ever follows "- ", "| " or "**", never starts a line.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#|~!])")


def md(text: object) -> str:
    """Text that renders as itself in Markdown (CommonMark/GFM) and cannot become HTML."""
    # no ESC/OSC or other control character reaches a viewer or a terminal (`cat report.md`)
    s = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace('"', "&quot;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return " ".join(s.splitlines())
