"""What a prediction's users did on a simulator profile's model (`api.predict.predict_users`).

Data only, shared by the api layer, which runs them, and the report and CLI, which show them.
Times and rates are on the clock of whoever asked (a run measured at a simulator time scale
gets them on its own clock).
"""

from __future__ import annotations

from pydantic import BaseModel


class UsersCheck(BaseModel):
    """N predicted users run on the model: their TTFT and TPS on the SLO's statistic."""

    users: int
    think: str  # "exp:45"
    warmup_s: float
    window_s: float
    statistic: str
    ttft_ms: float | None
    tps: float | None
    mean_in_flight: float
    requests: int
    holds: bool
    # where N misses: the largest N the model holds (None: not even the smallest probed)
    # and how the search ended
    holding_users: int | None = None
    search: str | None = None

    def _stat(self) -> str:
        return "mean" if self.statistic == "mean" else self.statistic.upper()

    def line(self) -> str:
        """``"In the model, 434 users thinking exp:45 s hold: P90 TTFT 652 ms, P90 TPS 31.0
        (35.9 in flight on average, 2760 requests over 300 s)."``"""
        stat = self._stat()
        seen = (f"{stat} TTFT {_num(self.ttft_ms)} ms, {stat} TPS {_num(self.tps, 1)} "
                f"({self.mean_in_flight:.1f} in flight on average, {self.requests} requests "
                f"over {self.window_s:g} s)")  # fmt: skip
        lead = f"In the model, {self.users} users thinking {self.think} s"
        if self.holds:
            return f"{lead} hold: {seen}."
        if self.holding_users is None:
            return f"{lead} miss the SLOs: {seen}; no smaller count the search tried holds."
        return f"{lead} miss the SLOs: {seen}; {self.holding_users} users hold ({self.search})."

    def cell(self) -> str:
        """A table cell: ``"432 hold (P90 TTFT 696 ms)"``, ``"260 miss (P90 TTFT 1203 ms, P90
        TPS 3.6); 60 hold"``."""
        stat = self._stat()
        if self.holds:
            return f"{self.users} hold ({stat} TTFT {_num(self.ttft_ms)} ms)"
        held = "none held" if self.holding_users is None else f"{self.holding_users} hold"
        return (f"{self.users} miss ({stat} TTFT {_num(self.ttft_ms)} ms, {stat} TPS "
                f"{_num(self.tps, 1)}); {held}")  # fmt: skip


def _num(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


__all__ = ["UsersCheck"]
