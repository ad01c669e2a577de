"""`servecap verify`: run the users a concurrency sweep predicts, and say how far off it was.

The sweep's plan predicts N = C_max x (1 + Z / L) users (Little's law). Verify runs N
virtual users (the `sessions` load kind) against the same server with the same request
shape (model, endpoint, prompt and output lengths, extra body) and reports the measured
TTFT/TPS at N against the SLOs, the measured mean concurrency against the C_max the
prediction assumed and against N x R / (R + Z) from the verify level's own R and Z, and the
prediction error. With `search`, it then finds the largest N whose verdict is `pass` (an
undecided level counts as a miss) by bracketing and bisection (`stats.search`), to within
`tolerance`; with `search_on_miss` only when the predicted N did not pass (the demo's way:
a prediction that holds costs one level, one that does not is followed by the users that
hold). Every level it measured is a level of the verify run; `verification.json` in
that run holds the outcome, which `plan` and the report show beside the prediction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from servecap.api.run.plans import Step, Steps
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import RunOutcome, Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import SLO
from servecap.core.errors import SettingError, UserInputError
from servecap.core.summary import LevelSummary
from servecap.kinds.base import LoadPlan
from servecap.kinds.registry import kind_of
from servecap.kinds.sessions import SessionsLevel, SessionsLoad
from servecap.stats.capacity import plan_levels
from servecap.stats.level_verdicts import level_verdicts
from servecap.stats.response_time import relative_error
from servecap.stats.search import (
    DEFAULT_BUDGET,
    DEFAULT_FACTOR,
    DEFAULT_TOLERANCE,
    BoundarySearch,
    users_search,
)
from servecap.stats.verdict import Verdict
from servecap.storage.runs import Run, load_runs
from servecap.storage.verification import (
    LevelCheck,
    Verification,
    load_verification,
    write_verification,
)
from servecap.workload.think_time import parse_think_time, parse_turns

WARMUP_RESPONSE_TIMES = 5
SLO_DEFAULTS = SLO()


class VerifyOptions(BaseModel):
    """What to verify against, and how the users behave."""

    statistic: str = SLO_DEFAULTS.statistic
    ttft_slo_ms: float = SLO_DEFAULTS.ttft_ms
    tps_slo: float = SLO_DEFAULTS.tps
    think: str = f"exp:{SLO_DEFAULTS.think_time_s:g}"  # the SLO's mean, exponential
    turns: str = "uniform:2:8"
    ramp_s: float | None = None  # warm-up; default: `warmup_s` of the sweep's latency
    duration_s: float = 60.0
    search: bool = False
    search_on_miss: bool = False  # search only when the predicted N does not pass
    tolerance: float = DEFAULT_TOLERANCE
    budget: int = DEFAULT_BUDGET
    factor: float = DEFAULT_FACTOR  # the search's bracketing step
    out_dir: str | None = None  # default: beside the sweep


def _sweep_plan(run: Run, slo: SLO) -> tuple[int, float, int]:
    # the levels that hold a fixed number of streams (a closed loop's): C_max is theirs
    closed = [lv for lv in run.levels if kind_of(lv.key).streams(lv.key) is not None]
    if not closed:
        raise UserInputError(f"{run.path}: verify needs a concurrency sweep (closed-loop levels)")
    plan = plan_levels(closed, slo, kind_of)
    if plan.c_max is None or plan.latency_mean_s is None or plan.users is None:
        raise UserInputError(
            f"{run.path}: no level meets the SLOs ({slo.statistic}), so there is no "
            "predicted user count to verify"
        )
    return plan.c_max, plan.latency_mean_s, plan.users


def warmup_s(latency_mean_s: float) -> float:
    """A verify level's default warm-up: users start as a steady population would send
    (`workload.sessions`), so only the in-service share is missing at first, and that fills
    within a few response times; five of them, at least 1 s and at most 60 s."""
    return min(max(WARMUP_RESPONSE_TIMES * latency_mean_s, 1.0), 60.0)


def _check(level: LevelSummary, options: VerifyOptions) -> LevelCheck:
    judged = level_verdicts(level, options.statistic, options.ttft_slo_ms, options.tps_slo)
    return LevelCheck(
        users=int(level.key.value), ttft=level.value("ttft", options.statistic),
        tps=level.value("tps", options.statistic), verdict=judged.verdict.value,
        mean_concurrency=level.mean_concurrency, law_concurrency=level.law_concurrency,
        law_error=level.law_error,
    )


@dataclass
class UsersPlan:
    """Levels of users decided one at a time: the predicted N, then the search's probes.

    `summaries` keeps each measured level's summary, in order, as the engine hands them."""

    load: SessionsLoad
    predicted: int
    options: VerifyOptions
    search: BoundarySearch | None = None
    summaries: list[LevelSummary] = field(default_factory=list)

    def max_in_flight(self) -> int:
        return max(self.predicted * 4, 1)  # the search grows by 2x at most twice in a row

    def expected_requests(self) -> int:
        return self.predicted

    def known_levels(self) -> None:
        return None

    def _level(self, users: int) -> SessionsLevel:
        spec = self.load.model_copy(update={"users": [users]})
        return spec.levels()[0]

    def _passed(self, level: LevelSummary) -> bool:
        return _check(level, self.options).verdict == Verdict.PASS.value

    def steps(self) -> Steps:
        """Each level is decided after the one before it was measured and summarised."""
        users: int | None = self.predicted
        if self.search is not None:
            users = self.search.next_probe()  # the search starts at the predicted N
        while users is not None:
            summary = yield Step(self._level(users))
            if summary is None:
                return  # the level recorded nothing (stopped)
            self.summaries.append(summary)
            if self.search is None:
                return
            passed = self._passed(summary)
            if self.options.search_on_miss and passed and len(self.summaries) == 1:
                return  # the prediction held: nothing to search for
            self.search.record(users, passed)
            users = self.search.next_probe()


def verify_config(run: Run, load: LoadPlan, out_dir: str, what: str = "multi-turn") -> RunConfig:
    """The sweep's request shape and server with `load` as the plan (users or agents, which
    both send `what` chat)."""
    stored = dict(run.info.config)
    stored.pop("load", None)
    stored.pop("find_cmax", None)  # the levels are verify's own plan
    if stored.get("endpoint") not in (None, "chat"):
        raise SettingError(f"{run.path}: verify sends {what} chat; the sweep used "
                           f"{{endpoint}} {stored.get('endpoint')}", "endpoint")
    stored.update(name=f"{run.info.name}-verify", out_dir=out_dir, warmup=0, load=load)
    return RunConfig.model_validate(stored)


def sweep_run(paths: list[Path]) -> Run:
    """The one run `paths` name (verify takes one)."""
    runs = load_runs(paths)
    if len(runs) != 1:
        raise UserInputError(f"verify takes one run directory; {len(runs)} runs found")
    return runs[0]


def verify(
    path: Path, options: VerifyOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> tuple[Verification, RunOutcome]:
    """Predict from the sweep, run the users, optionally search; bad input raises first."""
    run = sweep_run([path])
    prediction = _sweep_plan(run, _slo(options))
    return verify_users(run, options, prediction, secrets, progress)


def _slo(options: VerifyOptions) -> SLO:
    think = parse_think_time(options.think, "think_time")
    return SLO(ttft_ms=options.ttft_slo_ms, tps=options.tps_slo,
               statistic=options.statistic, think_time_s=think.mean_s)  # type: ignore[arg-type]


def verify_users(
    run: Run, options: VerifyOptions, prediction: tuple[int, float, int],
    secrets: Secrets | None = None, progress: ProgressSink | None = None,
) -> tuple[Verification, RunOutcome]:
    """Run the users `prediction` (C_max, mean latency in s, users) says `run`'s server
    holds, with `run`'s request shape; optionally search; write `verification.json`."""
    slo = _slo(options)
    think = parse_think_time(options.think, "think_time")
    turns = parse_turns(options.turns, "turns")
    _, latency, predicted = prediction
    ramp = options.ramp_s if options.ramp_s is not None else warmup_s(latency)
    load = SessionsLoad(users=[predicted], think=str(think), turns=str(turns), ramp_s=ramp,
                        duration_s=options.duration_s, seed=int(run.info.config.get("seed", 0)))
    config = verify_config(run, load, options.out_dir or str(run.path.parent))
    searching = options.search or options.search_on_miss
    search = users_search(predicted, tolerance=options.tolerance, budget=options.budget,
                          factor=options.factor, maximum=predicted * 4) if searching else None
    plan = UsersPlan(load, predicted, options, search)
    outcome = run_benchmark(config, secrets, progress or NullProgress(), plan=plan)
    if search is not None and not search.result().probes:
        search = None  # on a miss only, and the predicted N passed
    result = _verification(run, options, slo, prediction, plan.summaries, search)
    write_verification(outcome.run_dir, result)
    return result, outcome


def _verification(
    run: Run, options: VerifyOptions, slo: SLO, predicted: tuple[int, float, int],
    summaries: list[LevelSummary], search: BoundarySearch | None,
) -> Verification:
    c_max, latency, users = predicted
    if not summaries:
        raise UserInputError("the verify run measured no level")
    checks = [_check(level, options) for level in summaries]
    first = checks[0]
    conc = first.mean_concurrency
    result = Verification(
        source_run=str(run.path), statistic=options.statistic, slo=slo, think=options.think,
        c_max=c_max, latency_mean_s=latency, predicted_users=users, at_predicted=first,
        concurrency_vs_c_max=(conc - c_max) / c_max if conc is not None else None,
        levels=checks,
    )
    if search is not None:
        found = search.result()
        result.search_status, result.search_message = found.status.value, found.message
        result.verified_users = found.found
    elif first.verdict == Verdict.PASS.value:
        result.verified_users = users
    if result.verified_users:
        result.prediction_error = relative_error(users, result.verified_users)
    return result


__all__ = ["Verification", "VerifyOptions", "load_verification", "verify"]


def summary_line(result: Verification) -> str:
    """One paragraph for the terminal: predicted against verified, and the law check."""
    at = result.at_predicted
    parts = [
        f"predicted users (Little's law on C_max {result.c_max}, L_mean "
        f"{result.latency_mean_s:.2f} s, think {result.think}): {result.predicted_users}",
        f"at {at.users} users: {result.statistic} TTFT {_f(at.ttft)} ms, TPS {_f(at.tps)} "
        f"tok/s -> {at.verdict}",
        f"measured mean concurrency {_f(at.mean_concurrency, 2)} (C_max assumed "
        f"{result.c_max}; N*R/(R+Z) from this run {_f(at.law_concurrency, 2)}, "
        f"law error {_pct(at.law_error)})",
    ]
    if result.search_message:
        parts.append(f"search: {result.search_message}")
    parts.append(_verified_line(result))
    return "\n".join(parts)


def _verified_line(result: Verification) -> str:
    """The outcome, and when the predicted N was not verified, why and what to run next."""
    verified = result.verified_users
    if verified:
        return f"verified users: {verified} (prediction error {_pct(result.prediction_error)})"
    if result.search_status is not None:
        return "verified users: none (no N the search measured passed the SLOs)"
    why = ("a confidence interval spans an SLO threshold: neither a pass nor a miss"
           if result.at_predicted.verdict == Verdict.UNDECIDED.value else "it missed the SLOs")
    return (f"verified users: none yet: the predicted {result.predicted_users} did not pass "
            f"({why}); `servecap verify {result.source_run} --search` finds the largest N "
            "that does")


def _f(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}%"
