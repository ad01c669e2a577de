"""Numbers as every front end shows them: fixed digits, and one text for a missing value.

The terminal tables, the report's tables, the findings' sentences and the app all print
through here, so a missing measurement reads the same everywhere (`n/a`, as the report's
live script writes it too) and an integer count is never shown with decimals.
"""

from __future__ import annotations

import math

MISSING = "n/a"


def fmt_number(value: float | None, digits: int = 2) -> str:
    """`value` with `digits` decimals (integers as they are); `n/a` when missing or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def rounded(value: object, digits: int) -> object:
    """A float rounded for a table that keeps numbers sortable (the app's); others as they are."""
    if isinstance(value, float):
        return round(value, digits) if digits else round(value)
    return value
