"""BR v0.2.1 `results.session_performance` from the records of users' conversations.

A session is one conversation of one simulated user (`user`, `conversation` on each record,
which only a sessions load fills). What servecap can vouch for is what the level's counted
records show: how many sessions had requests in it, their events (requests) and tokens.
Left out (docs/formats/benchmark-report.md): `succeeded`/`failed` (a conversation the level's
end cut short is neither), `session_duration` and `session_rate` (a level's window cuts
sessions, so their spans inside it are not the sessions' durations).
"""

from __future__ import annotations

from typing import Any

from servecap.core.records import RequestRecord
from servecap.storage.formats.br_stats import statistics


def _sessions(rows: list[RequestRecord]) -> dict[tuple[int, int], list[RequestRecord]]:
    by_session: dict[tuple[int, int], list[RequestRecord]] = {}
    for record in rows:
        if record.user is not None:
            session = (record.user, record.conversation or 0)
            by_session.setdefault(session, []).append(record)
    return by_session


def _tokens(records: list[RequestRecord], field: str) -> int | None:
    """A session's total of a token count over its successes; None when one is unknown."""
    values = [getattr(r, field) for r in records if r.ok]
    if any(v is None for v in values):
        return None
    return sum(values)


def _per_session_tokens(groups: list[list[RequestRecord]], field: str) -> dict[str, Any] | None:
    if not all(r.token_source == "usage" for g in groups for r in g if r.ok):
        return None  # counted from chunks, not the server's: not servecap's to vouch for
    totals = [_tokens(g, field) for g in groups]
    if any(t is None for t in totals):
        return None
    return statistics([t for t in totals if t is not None], "count")


def session_performance(rows: list[RequestRecord]) -> dict[str, Any] | None:
    """The block for a level whose records belong to sessions; None for any other."""
    groups = list(_sessions(rows).values())
    if not groups:
        return None
    events = [r for g in groups for r in g]
    return {"sessions": {
        "total": len(groups),
        "total_events": len(events),
        "total_events_completed": sum(1 for r in events if r.ok),
        "total_events_cancelled": sum(1 for r in events if r.status == "cancelled"),
        "events_per_session": statistics([len(g) for g in groups], "count"),
        "events_cancelled_per_session": statistics(
            [sum(1 for r in g if r.status == "cancelled") for g in groups], "count"),
        "input_tokens_per_session": _per_session_tokens(groups, "prompt_tokens"),
        "output_tokens_per_session": _per_session_tokens(groups, "completion_tokens"),
    }}
