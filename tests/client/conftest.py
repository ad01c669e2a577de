"""Client tests see the pool's reuse rules without its probation (a released connection
rests PROBATION_S before reuse until the origin is known), unless a test asks for it with
the `probation` marker: most tests here count connections and skips exactly."""

from __future__ import annotations

import pytest

from servecap.client import pool


@pytest.fixture(autouse=True)
def _no_probation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("probation") is None:
        monkeypatch.setattr(pool, "PROBATION_S", 0.0)
