"""`servecap run --find-cmax`: the closed grid, then C_max refined by bisection.

After the grid's levels, the first level that misses the SLOs (point verdicts on the chosen
statistic, the rule C_max is defined by) and the passing level below it bracket C_max;
`stats.search.cmax_search` bisects the integer concurrency between them until they are
adjacent or the budget of extra levels is spent. Each probe is an ordinary closed level of
the run (`rounds x c` requests, the same request shape), so `plan`, `show` and the report
read C_max off the run's levels as always: it is then e.g. 45, not 32. A probe always lies
inside the bracket, so the levels below the last passing probe all passed, and plan's C_max
is the search's answer. No failing grid level (C_max is a lower bound) or an adjacent
bracket adds nothing; a run stopped mid-level stops the search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servecap.api.run.plans import Step, Steps
from servecap.api.run.run_config import RunConfig
from servecap.core.config import FindCmax
from servecap.core.summary import LevelSummary
from servecap.kinds.base import LoadKind, LoadPlan
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import judge_level, plan_levels
from servecap.stats.search import BoundarySearch, SearchResult, cmax_search


def grid_bracket(
    levels: Sequence[LevelSummary], options: FindCmax, kind: LoadKind | None = None
) -> tuple[int, int] | None:
    """(last passing, first failing) value of a grid of `kind`'s levels (default: the
    lowest level's kind); the passing one is 0 when the first level fails. None when no
    level fails: there is nothing to refine."""
    if not levels:
        return None
    kind = kind or kind_of(min(lv.key for lv in levels))
    passing = 0
    for level in sorted((lv for lv in levels if kind.owns(lv.key) and not lv.partial),
                        key=lambda lv: lv.key):
        concurrency = int(level.key.value)
        if not judge_level(level, options.slo).ok:
            return passing, concurrency
        passing = concurrency
    return None


@dataclass
class CmaxPlan:
    """The grid's levels, then the bisection's, each decided after the last was measured."""

    grid: LoadPlan
    options: FindCmax
    search: BoundarySearch | None = None

    @classmethod
    def for_config(cls, config: RunConfig) -> CmaxPlan:
        assert config.find_cmax is not None  # RunConfig checked its load can be probed
        return cls(config.load_spec(), config.find_cmax)

    def max_in_flight(self) -> int:
        return self.grid.max_in_flight()  # probes lie below a failing grid level

    def expected_requests(self) -> int:
        """The grid's requests; the probes' are not known before the grid ran."""
        return sum(level.n_requests for level in self.grid.levels())

    def known_levels(self) -> None:
        return None  # the probes are decided as the grid's levels are measured

    def steps(self) -> Steps:
        grid = self.grid.levels()
        measured: list[LevelSummary] = []
        for level in grid:
            summary = yield Step(level)
            if summary is None:
                return  # stopped, or the level recorded nothing
            measured.append(summary)
        bracket = grid_bracket(measured, self.options, kind_of(grid[0].key))
        if bracket is None:
            return
        self.search = cmax_search(*bracket, budget=self.options.budget)
        while (value := self.search.next_probe()) is not None:
            probe = self.grid.probe(value)
            if probe is None:
                return
            summary = yield Step(probe)
            if summary is None:
                return
            self.search.record(value, judge_level(summary, self.options.slo).ok)

    def result(self) -> SearchResult | None:
        """How the refinement ended (None: the grid left nothing to refine)."""
        return self.search.result() if self.search is not None else None


def refined_levels(config: RunConfig, levels: Sequence[LevelSummary]) -> list[int]:
    """The levels `--find-cmax` added to the grid (their values), in the order measured."""
    grid = config.load_spec().levels()
    kind, planned = kind_of(grid[0].key), {level.key for level in grid}
    return [int(lv.key.value) for lv in levels if kind.owns(lv.key) and lv.key not in planned]


def refinement_line(config: RunConfig, levels: Sequence[LevelSummary]) -> str | None:
    """One line for the terminal: the levels the search added and the C_max they give."""
    if config.find_cmax is None:
        return None
    added = refined_levels(config, levels)
    plan = plan_levels(levels, config.find_cmax.slo, kind_of)
    c_max = "none" if plan.c_max is None else str(plan.c_max)
    stat = config.find_cmax.slo.statistic
    if not added:
        return f"--find-cmax: nothing to refine (C_max {c_max} on {stat}: " + (
            "every level passed)" if plan.c_max_lower_bound else "the bracket is adjacent)")
    return (f"--find-cmax: added c={', '.join(map(str, added))} "
            f"({len(added)} of a budget of {config.find_cmax.budget}); C_max {c_max} on {stat}"
            + (f", first miss c={plan.above:g}" if plan.above is not None else ""))
