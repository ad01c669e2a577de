"""Bracketing and bisection for an SLO boundary over integer load levels, sans-I/O.

One search object serves both of issue 16's searches:

- a continuous C_max (`cmax_search`): start from the grid's last passing and first failing
  concurrency and bisect on the integers until they are adjacent;
- verified users (`users_search`): start from the predicted N, bracket the boundary by
  multiplying (passes) or dividing (fails) by `factor`, then bisect until the gap between
  the largest passing and smallest failing N is within `tolerance` of the passing one.

The caller measures; the search only proposes. Drive it with a callback (`drive`) or, from
async code, with the same two calls:

    while (level := search.next_probe()) is not None:
        search.record(level, await measure(level))

`record` takes a bool: whether the level met the SLOs. For a *verified* count record
`verdict is Verdict.PASS`, so an undecided level counts as a miss. Every probe is inside the
current bracket, so the recorded passes always lie below the recorded failures and the
answer never rests on a level above a measured miss.

Contract: `budget` caps the probes (levels measured) this search adds. When it is spent, or
the levels run out, the search stops and `result()` says how it ended: `converged`,
`budget_spent` (a bracket, not yet tight), `not_found` (no bracket within the budget: the
probes all passed, or all failed above `minimum`) or `nothing_passes` (the minimum level
failed). These are results, never exceptions; bad arguments raise `ValueError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

DEFAULT_TOLERANCE = 0.05
DEFAULT_BUDGET = 8
DEFAULT_FACTOR = 2.0


class SearchStatus(StrEnum):
    """How a search ended."""

    CONVERGED = "converged"
    BUDGET_SPENT = "budget_spent"
    NOT_FOUND = "not_found"
    NOTHING_PASSES = "nothing_passes"


@dataclass(frozen=True, slots=True)
class Probe:
    """One level the search asked for and whether it met the SLOs."""

    level: int
    passed: bool


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The bracket a search ended with and every probe it made, in order."""

    status: SearchStatus
    lower: int | None
    upper: int | None
    probes: tuple[Probe, ...]

    @property
    def found(self) -> int | None:
        """The largest passing level when a bracket was found, else None."""
        bracketed = self.status in (SearchStatus.CONVERGED, SearchStatus.BUDGET_SPENT)
        return self.lower if bracketed else None

    @property
    def message(self) -> str:
        """One line for the reader, saying how the search ended."""
        if self.status is SearchStatus.CONVERGED:
            return f"boundary found: {self.lower} meets the SLOs, {self.upper} does not"
        if self.status is SearchStatus.BUDGET_SPENT:
            return (
                f"budget spent: {self.lower} meets the SLOs, {self.upper} does not; "
                "the boundary lies between"
            )
        if self.status is SearchStatus.NOTHING_PASSES:
            return f"no level meets the SLOs, not even {self.upper}"
        if self.lower is not None:
            return f"not found within budget: every level up to {self.lower} met the SLOs"
        return f"not found within budget: every level down to {self.upper} missed the SLOs"


class BoundarySearch:
    """The largest integer level that passes, between `minimum` and an optional `maximum`.

    Give a known bracket (`lower` passing and/or `upper` failing) or a `start` to probe
    first. `lower` may be `minimum - 1` to say "nothing below is known to pass".
    """

    def __init__(
        self,
        *,
        start: int | None = None,
        lower: int | None = None,
        upper: int | None = None,
        tolerance: float = 0.0,
        budget: int = DEFAULT_BUDGET,
        factor: float = DEFAULT_FACTOR,
        minimum: int = 1,
        maximum: int | None = None,
    ) -> None:
        _validate(start, lower, upper, tolerance, budget, factor, minimum, maximum)
        self._start, self._lower, self._upper = start, lower, upper
        self._tolerance, self._budget, self._factor = tolerance, budget, factor
        self._minimum, self._maximum = minimum, maximum
        self._probes: list[Probe] = []
        self._pending: int | None = None

    def next_probe(self) -> int | None:
        """The next level to measure, or None when the search is over (idempotent)."""
        if self._pending is None and len(self._probes) < self._budget:
            self._pending = self._propose()
        return self._pending

    def record(self, level: int, passed: bool) -> None:
        """Report the pending probe's outcome."""
        if level != self._pending:
            raise ValueError(f"level {level} was not the pending probe ({self._pending})")
        self._pending = None
        self._probes.append(Probe(level, passed))
        if passed:
            self._lower = level
        else:
            self._upper = level

    def result(self) -> SearchResult:
        """Where the search stands (final once `next_probe` returns None)."""
        lower = self._lower if self._passed_any() else None
        return SearchResult(self._status(), lower, self._upper, tuple(self._probes))

    def _passed_any(self) -> bool:
        return self._lower is not None and self._lower >= self._minimum

    def _status(self) -> SearchStatus:
        if self._upper is not None and self._upper <= self._minimum and not self._passed_any():
            return SearchStatus.NOTHING_PASSES
        if self._upper is None or not self._passed_any():
            return SearchStatus.NOT_FOUND
        return SearchStatus.CONVERGED if self._tight() else SearchStatus.BUDGET_SPENT

    def _tight(self) -> bool:
        assert self._lower is not None and self._upper is not None
        gap = self._upper - self._lower
        return gap <= 1 or gap <= self._tolerance * self._lower

    def _propose(self) -> int | None:
        lower, upper = self._lower, self._upper
        if lower is None and upper is None:
            return self._start
        if lower is not None and upper is not None:
            return None if self._tight() else (lower + upper) // 2
        if lower is not None:
            return self._grow(lower)
        assert upper is not None
        return self._shrink(upper)

    def _grow(self, lower: int) -> int | None:
        if self._maximum is not None and lower >= self._maximum:
            return None
        level = max(lower + 1, math.ceil(lower * self._factor))
        return level if self._maximum is None else min(level, self._maximum)

    def _shrink(self, upper: int) -> int | None:
        if upper <= self._minimum:
            return None
        return max(self._minimum, min(upper - 1, math.floor(upper / self._factor)))


def _validate(
    start: int | None,
    lower: int | None,
    upper: int | None,
    tolerance: float,
    budget: int,
    factor: float,
    minimum: int,
    maximum: int | None,
) -> None:
    if start is None and lower is None and upper is None:
        raise ValueError("give a start level or a known bracket")
    if lower is not None and upper is not None and lower >= upper:
        raise ValueError(f"passing level {lower} must lie below failing level {upper}")
    if start is not None and (start < minimum or (maximum is not None and start > maximum)):
        raise ValueError(f"start {start} lies outside [{minimum}, {maximum}]")
    if lower is not None and lower < minimum - 1:
        raise ValueError(f"passing level {lower} lies below the minimum {minimum}")
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be non-negative, got {tolerance}")
    if budget < 0:
        raise ValueError(f"budget must be non-negative, got {budget}")
    if not factor > 1.0:
        raise ValueError(f"factor must exceed 1, got {factor}")


def cmax_search(passing: int, failing: int, budget: int) -> BoundarySearch:
    """Refine C_max between the grid's last passing and first failing concurrency.

    `passing` may be 0 when even the grid's first level failed.
    """
    return BoundarySearch(lower=passing, upper=failing, tolerance=0.0, budget=budget)


def users_search(
    predicted: int,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    budget: int = DEFAULT_BUDGET,
    factor: float = DEFAULT_FACTOR,
    maximum: int | None = None,
) -> BoundarySearch:
    """The largest N users meeting the SLOs, starting from the predicted N."""
    return BoundarySearch(
        start=max(1, predicted), tolerance=tolerance, budget=budget, factor=factor,
        maximum=maximum,
    )


def drive(search: BoundarySearch, measure: Callable[[int], bool]) -> SearchResult:
    """Run a search to its end with a synchronous `measure(level) -> passed` callback."""
    while (level := search.next_probe()) is not None:
        search.record(level, measure(level))
    return search.result()
