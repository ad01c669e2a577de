"""mkdocs hooks: fill the reference pages' `<!-- generated: NAME -->` markers from the code.

mkdocs loads this file by path (`hooks:` in mkdocs.yml), so the generator beside it and the
package's `src/` are put on the import path here: the site builds from a plain checkout, and
the checkout's own code (not an installed copy) is what the reference describes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
for _path in (_ROOT / "scripts", _ROOT / "src"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# mkdocs restores sys.path once this file is loaded, so the checkout's package is imported
# now: an installed servecap (an editable install of another checkout) would otherwise
# answer the generator's later imports, and the reference would describe other code.
import docs_reference  # noqa: E402 - needs the paths above

import servecap  # noqa: E402, F401 - needs the paths above


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return docs_reference.expand(markdown)
