"""`servecap capacity --target A=URL --target B=URL ...`: every deployment's boundary searched
with the probes interleaved between them, then each target's users, then the deltas.

1. The targets (`targets_from`): `compare`'s own `NAME=BASE_URL` / `NAME=sim:PROFILE`
   parsing and checks (two or more, unique names), and each name usable as a folder.
2. The searches: each target's `CapacitySearch` runs in a thread of its own with its own run
   directory (`OUT/NAME/runs/`), turn by turn (`turns`): the first target's warm-up and
   probe, the second's, ..., then the first's next probe. The searches share one deadline:
   the time budget less every target's users level.
3. The users: each target's predicted users verified against its own server, one target
   after the other (after every search, so no users level overlaps a probe).
4. The answers: each target's in `OUT/NAME/capacity.json`, as a single-target run writes it;
   all of them with the deltas against the first target in `OUT/capacity.json`. An
   interrupt stops every search, keeps what was measured, and writes both, marked
   incomplete.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from servecap.api.capacity.capacity import (
    MIN_SEARCH_S,
    USERS_RESERVE_S,
    CapacityOptions,
    SearchWatch,
    search_answer,
    verify_answer,
)
from servecap.api.capacity.cost import price_answer
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.search_plan import CapacitySearch
from servecap.api.capacity.turns import TurnPlan, Turns
from servecap.api.comparison.run import servers
from servecap.api.comparison.targets import Target, build_targets
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import Secrets, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.errors import SettingError, bad_setting
from servecap.core.urls import public_url
from servecap.load.event_loop import loop_factory
from servecap.storage.capacity_answer import CapacityAnswer, write_answer
from servecap.storage.capacity_targets import (
    CapacityTargetsAnswer,
    capacity_delta,
    winner,
    write_targets_answer,
)

ProgressFor = Callable[[str], ProgressSink]
_FOLDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def targets_from(specs: Sequence[str]) -> list[Target]:
    """The `NAME=URL` targets, checked before any load: two or more, unique, each name a
    folder of the output."""
    targets = build_targets(specs, command="capacity")
    for target in targets:
        if not _FOLDER_NAME.match(target.name):
            raise bad_setting("target", f"name {target.name!r}: use letters, digits, '.', "
                              "'_' or '-' (it names the target's folder)", "invalid ")
    return targets


def search_budget_s(options: CapacityOptions, n_targets: int) -> float:
    """The time every search may take together: the rest is each target's users level.
    Only the concurrency search runs per target: another load would silently be ignored."""
    if options.load != "concurrency":
        raise SettingError(f"{{target}} compares concurrency searches; {{load}} "
                           f"{options.load} searches one server at a time", "target", "load")
    users = options.users_duration_s + USERS_RESERVE_S if options.verify else 0.0
    budget = options.max_time_s - n_targets * users
    if budget < MIN_SEARCH_S:
        raise SettingError(
            f"{{max_time}} {options.max_time_s:g} s leaves no time for the searches after "
            f"{n_targets} targets' users levels: give at least "
            f"{n_targets * users + MIN_SEARCH_S:g} s", "max_time")
    return budget


@dataclass
class _Arm:
    """One target's search in its thread: its config, plan, watch and how it ended."""

    name: str
    config: RunConfig
    search: CapacitySearch
    watch: SearchWatch
    plan: TurnPlan
    error: BaseException | None = None
    loop: asyncio.AbstractEventLoop | None = None
    stop: asyncio.Event | None = None


class _Searches:
    """Every target's search, each in a thread, one probe at a time (see the module)."""

    def __init__(self, arms: list[_Arm], turns: Turns, secrets: Secrets | None) -> None:
        self.arms, self.turns, self.secrets = arms, turns, secrets
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(arm,), daemon=True,
                                         name=f"servecap-capacity-{arm.name}")
                        for arm in arms]

    def run(self) -> None:
        """Run them all; an interrupt stops them all and is raised once they have stopped."""
        for thread in self.threads:
            thread.start()
        try:
            for thread in self.threads:
                thread.join()
        except KeyboardInterrupt:
            self.stop_all()
            for thread in self.threads:
                thread.join()
            raise
        errors = [arm.error for arm in self.arms if arm.error is not None]
        if errors:
            raise errors[0]

    def _run(self, arm: _Arm) -> None:
        try:
            with asyncio.Runner(loop_factory=loop_factory()) as runner:
                runner.run(self._search(arm))
        except BaseException as exc:  # raised by the caller once every search has stopped
            arm.error = exc
            self.stop_all()
        finally:
            self.turns.leave(arm.name)

    async def _search(self, arm: _Arm) -> None:
        with self._lock:
            arm.loop, arm.stop = asyncio.get_running_loop(), asyncio.Event()
            if self.turns.stopped:  # another target failed before this one's loop began
                arm.stop.set()
        await run_benchmark_async(arm.config, self.secrets, arm.watch, arm.stop, arm.plan)

    def stop_all(self) -> None:
        """Every search ends its probe early (what it measured is kept) and starts no other."""
        self.turns.stop()
        with self._lock:
            for arm in self.arms:
                if arm.loop is not None and arm.stop is not None and not arm.loop.is_closed():
                    arm.loop.call_soon_threadsafe(arm.stop.set)


@dataclass
class _TurnWatch(SearchWatch):
    """Takes the target's first turn before its warm-up: no two targets warm up at once."""

    turns: Turns | None = None
    name: str = ""

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        super().started(total_requests, run_dir, model)
        if self.turns is not None:
            self.turns.take(self.name)


def _arm(target: Target, url: str, base: RunConfig, options: CapacityOptions, out: Path,
         turns: Turns, deadline: float, progress: ProgressSink) -> _Arm:
    client = base.client.model_copy(update={"base_url": url})
    config = base.model_copy(update={
        "name": target.name, "client": client, "model": target.model or base.model,
        "out_dir": str(out / target.name / "runs"),
    })
    settings = ProbeSettings(options.confidence, options.first_look)
    search = CapacitySearch(options.slo(), settings, deadline - time.monotonic(),
                            options.max_concurrency)
    watch = _TurnWatch(progress, search, turns=turns, name=target.name)
    return _Arm(target.name, config, search, watch,
                TurnPlan(search, turns, target.name, deadline))


def find_capacities(
    base: RunConfig, targets: list[Target], options: CapacityOptions, out: Path,
    secrets: Secrets | None = None, progress_for: ProgressFor | None = None,
) -> CapacityTargetsAnswer:
    """Search every target in turn, verify each one's users, answer with the deltas;
    `base` gives the request shape (its server and output folder are each target's)."""
    started = time.monotonic()
    deadline = started + search_budget_s(options, len(targets))
    sink = progress_for or (lambda name: NullProgress())
    turns = Turns([t.name for t in targets])
    with servers(targets) as urls:
        arms = [_arm(t, urls[t.name], base, options, out, turns, deadline, sink(t.name))
                for t in targets]
        try:
            _Searches(arms, turns, secrets).run()
        except KeyboardInterrupt:
            _write(out, arms, options, turns, urls, started, complete=False)
            raise
        answers = [search_answer(a.config, options, options.slo(), a.search, a.watch, started)
                   for a in arms]
        if options.verify:  # every target's users, each against its own server
            answers = [verify_answer(answer, options, secrets, sink(f"{answer.deployment} "
                                                                    "users"))
                       for answer in answers]
    return _finish(out, arms, answers, options, turns, urls, started)


def _write(out: Path, arms: list[_Arm], options: CapacityOptions, turns: Turns,
           urls: dict[str, str], started: float, complete: bool) -> CapacityTargetsAnswer:
    answers = [search_answer(a.config, options, options.slo(), a.search, a.watch, started)
               for a in arms]
    answers = [a.model_copy(update={"complete": complete}) for a in answers]
    return _finish(out, arms, answers, options, turns, urls, started, complete)


def _finish(
    out: Path, arms: list[_Arm], answers: list[CapacityAnswer], options: CapacityOptions,
    turns: Turns, urls: dict[str, str], started: float, complete: bool = True,
) -> CapacityTargetsAnswer:
    """Each target's answer in its folder, and all of them with the deltas at the top."""
    priced = [price_answer(answer, arm.config.cost) for arm, answer in zip(arms, answers,
                                                                            strict=True)]
    for answer in priced:
        write_answer(out / answer.deployment, answer)
    first = priced[0]
    result = CapacityTargetsAnswer(
        complete=complete, targets=priced, urls=_public(arms, urls), order=turns.order,
        deltas=[capacity_delta(first, other) for other in priced[1:]],
        winner=winner(priced),
        verified="every target with a C_max" if options.verify and complete else "none",
        requests=sum(a.requests for a in priced),
        elapsed_s=time.monotonic() - started,
    )
    write_targets_answer(out, result)
    return result


def _public(arms: list[_Arm], urls: dict[str, str]) -> dict[str, str]:
    return {arm.name: public_url(urls[arm.name]) for arm in arms}
