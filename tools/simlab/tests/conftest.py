"""The seed lab's tests import its modules by name (``seed_bases``, ``refit``); they run with
``PYTHONPATH=src:. pytest tools/simlab/tests`` from the repository root, not in CI."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
