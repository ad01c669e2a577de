"""Failed requests, diagnosed: the dominant failure in the server's own words, and what to change.

Counting failures says that something went wrong; a user needs to know what. The failures
are grouped by HTTP status and the server's message (numbers masked, so "1,031 tokens" and
"1,104 tokens" are one group); the largest group is named with its count, the levels it
hit, and a hint for the causes a user can fix from the command line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from servecap.core.records import RequestRecord
from servecap.core.text import printable

_DIGITS = re.compile(r"\d[\d,.]*")
_HINTS = (
    (re.compile(r"context|too long|maximum.*length|exceeds", re.I),
     "the requests do not fit the server's context: lower --input-tokens/--output-tokens "
     "(or the users' turns), or raise the server's context length"),
    (re.compile(r"rate.?limit|too many requests|\b429\b", re.I),
     "the server rate-limits: raise its limits or lower the load"),
    (re.compile(r"timeout|timed out|stall", re.I),
     "requests time out: raise --timeout/--stall-timeout or check the server's queue"),
    (re.compile(r"refused|reset|unreachable", re.I),
     "the server dropped connections: check that it is up and its connection limits"),
)


def _group(record: RequestRecord) -> str:
    status = f"HTTP {record.http_status}" if record.http_status else (record.reason or "failed")
    detail = printable(record.detail or record.reason or "")[:160]
    return f"{status}: {_DIGITS.sub('N', detail)}" if detail else status


def diagnose(records: Iterable[RequestRecord]) -> str | None:
    """One sentence on the dominant failure (None when every request succeeded)."""
    rows = list(records)
    failed = [r for r in rows if r.status == "failed"]
    if not failed:
        return None
    groups = Counter(_group(r) for r in failed)
    group, count = groups.most_common(1)[0]
    sample = next(r for r in failed if _group(r) == group)
    levels = sorted({r.key for r in failed if _group(r) == group})
    where = ", ".join(map(str, levels[:6])) + (" ..." if len(levels) > 6 else "")
    message = printable(sample.detail or sample.reason or "")[:200]
    status = f"HTTP {sample.http_status}" if sample.http_status else (sample.reason or "failed")
    text = (f"{count} of {len(rows)} requests failed with {status}"
            + (f" ({message})" if message else "") + f" at {where}")
    hint = next((h for pattern, h in _HINTS if pattern.search(f"{status} {message}")), None)
    return text + (f"; {hint}" if hint else "")
