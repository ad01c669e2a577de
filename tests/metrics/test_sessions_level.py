"""A sessions level's law check counts the client's own delay before a next turn as idle time."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.sessions_summary import session_fields

S = 1_000_000_000


def turn(user: int, n: int, sent_s: float, ended_s: float, think_after_s: float) -> RequestRecord:
    record = RequestRecord.for_level(LevelKey("users", 1), n, user, int(sent_s * S))
    return replace(
        record, sent_at=int(sent_s * S), ended_at=int(ended_s * S), user=user, turn=n,
        think_after_s=think_after_s, first_token_at=int((sent_s + 0.1) * S),
    )


def test_a_lagging_client_is_idle_time_not_law_error() -> None:
    # One user: 1 s answers, 2 s drawn thinks, but each next turn left 0.5 s late:
    # in flight 1 s of every 3.5 s, so the law holds only with Z = 2 + 0.5.
    turns = [turn(0, i + 1, 3.5 * i, 3.5 * i + 1.0, 2.0) for i in range(5)]
    out = session_fields(turns, users=1)
    assert out["think_time_mean_s"] == pytest.approx(2.0)
    assert out["think_lag_mean_s"] == pytest.approx(0.5)
    assert out["law_concurrency"] == pytest.approx(1.0 / 3.5)
    # 5 answers of 1 s over the 14 s from first to last send
    assert out["mean_concurrency"] == pytest.approx(5.0 / 14.0)


def test_a_punctual_client_adds_no_lag() -> None:
    turns = [turn(0, i + 1, 3.0 * i, 3.0 * i + 1.0, 2.0) for i in range(4)]
    out = session_fields(turns, users=1)
    assert out["think_lag_mean_s"] == pytest.approx(0.0, abs=1e-9)
    assert out["law_concurrency"] == pytest.approx(1.0 / 3.0)
