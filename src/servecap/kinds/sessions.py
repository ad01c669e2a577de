"""Sessions: N virtual users, each holding a multi-turn chat with think time between turns.

The conversation logic is `workload.sessions` (sans-I/O); this module owns the clock and
the sends. A user waits for its start offset (a steady population's, see
`workload.sessions`), sends a turn (the whole history as chat `messages`), reads the whole
streamed answer, thinks for the drawn time, and goes on; a failed turn ends its conversation
(the state machine's documented rule). Turns sent in the first `ramp_s` are the level's
warm-up: recorded and marked `warmup`, left out of the
level's statistics, so the level measures `duration_s` of the users' steady state. No user
starts a turn after the duration ends; turns in flight then finish and are recorded.

Synthetic turns take their texts and `max_tokens` from the run's request source. With a
`--dataset` the user turns are its conversations' (a multi-turn ShareGPT row's human turns,
in order; `DatasetSource.conversations`), capped by `--turns` unless that is `all` (its
default then); every turn asks for the run's `--output-tokens`.

Over worker processes every worker builds the same seeded users and runs user u if
u % N == k (`Share.part`), so each user's start offset, turns and think times are what one
process would draw. A sessions level's own summary columns (the response-time law, think
time, TTFT by turn) are `kinds.sessions_summary`'s.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator

from servecap.core.clock import now_ns
from servecap.core.config import parse_levels
from servecap.core.errors import SettingError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.workload_spec import WorkloadSpec
from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO, in_task_group
from servecap.kinds.sessions_summary import session_fields
from servecap.workload.datasets import Message
from servecap.workload.sessions import SessionPlan, TurnRequest, VirtualUser, build_users
from servecap.workload.source import IndexedSource, Request, RequestSource
from servecap.workload.sources import DatasetSource
from servecap.workload.think_time import parse_think_time, parse_turn_cap, parse_turns

NS_PER_S = 1_000_000_000
# Synthetic turns are requests of the run's source from their own stretch of it, one per
# level: a `verify` run after its sweep (the same --seed, the same server) would otherwise
# open with the sweep's own prompts, which a prefix cache still holds, and one level with
# the previous level's. A level's users send at most LEVEL_STRETCH turns.
SESSIONS_FIRST_REQUEST = 1 << 32
LEVEL_STRETCH = 1 << 26


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionsLevel(LevelSpec):
    """N virtual users holding conversations for `ramp_s + duration_s` seconds.

    `n_requests` is a lower bound (each user's first turn): a sessions level sends as many
    turns as its users' think times fit into the duration.
    """

    users: int
    think: str  # a think-time spec (`workload.think_time`), parsed by the scheduler
    turns: str  # a turn-count spec
    ramp_s: float
    duration_s: float
    seed: int

    WIRE = "SessionsLevel"

    def demand(self) -> int:
        return self.users

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        return [Share(k, self, part=(k, workers)) for k in range(min(workers, self.users))]

    async def run(self, io: LevelIO) -> None:
        await run_sessions_level(self, io)


def _plan(level: SessionsLevel, io: LevelIO) -> tuple[SessionPlan, int]:
    think = parse_think_time(level.think, "think_time")
    if isinstance(io.source, DatasetSource):  # the dataset's conversations, user turn by turn
        plan = SessionPlan(
            users=level.users, think=think, turns=parse_turn_cap(level.turns, "turns"),
            seed=level.seed, conversations=io.source.conversations(),
        )
        return plan, io.source.max_tokens
    source = io.source
    if not isinstance(source, IndexedSource):
        raise TypeError("synthetic sessions need a source with request(i)")
    first = SESSIONS_FIRST_REQUEST + level.users * LEVEL_STRETCH  # every turn its own request
    plan = SessionPlan(
        users=level.users, think=think, turns=parse_turns(level.turns, "turns"),
        seed=level.seed, prompt_at=lambda i: source.request(first + i).text,
    )
    return plan, source.request(first).max_tokens


def _record(level: SessionsLevel, io: LevelIO, turn: TurnRequest, warmup: bool) -> RequestRecord:
    record = RequestRecord.for_level(
        level.key, next(io.ids), turn.user, now_ns(), warmup=warmup or level.warmup
    )
    record.user, record.conversation, record.turn = turn.user, turn.conversation, turn.turn
    record.think_before_s = turn.think_before_s
    return record


async def _think_until(target_ns: int) -> None:
    """A plain sleep: a user's start and think time need no sub-millisecond precision, and
    `core.clock.sleep_until`'s last-millisecond yield would cost CPU for every user."""
    await asyncio.sleep(max(0, target_ns - now_ns()) / NS_PER_S)


async def _send(
    io: LevelIO, user: VirtualUser, request: Request, record: RequestRecord, answer: list[str]
) -> float:
    """Send one turn; the record is sunk however it ends, with the think time drawn after it
    (so the level's Z counts thinks the level's end cut short, not only completed ones)."""
    try:
        await io.backend.send(request, record)
        think_s = user.complete("".join(answer)) if record.ok else user.fail()
        record.think_after_s = think_s
        return think_s
    finally:
        io.sink(record)


async def run_sessions_level(level: SessionsLevel, io: LevelIO) -> None:
    """Run every user of the level until the warm-up plus the duration has passed."""
    plan, max_tokens = _plan(level, io)
    t0 = now_ns()
    steady_from = t0 + round(level.ramp_s * NS_PER_S)
    end = steady_from + round(level.duration_s * NS_PER_S)

    async def user_loop(user: VirtualUser) -> None:
        # a steady population's first turns spread past the level's end (exponential
        # residuals): those users never send, and the level must not wait for them
        await _think_until(min(end, t0 + round(user.start_offset_s * NS_PER_S)))
        while not io.stopped and now_ns() < end:
            turn = user.next_request()
            record = _record(level, io, turn, warmup=now_ns() < steady_from)
            answer: list[str] = []
            text = "\n".join(m["content"] for m in turn.messages)
            history = tuple(Message(m["role"], m["content"]) for m in turn.messages)
            request = Request(text, max_tokens, 0, history=history, answer=answer)
            think_s = await _send(io, user, request, record, answer)
            await _think_until(min(end, now_ns() + round(think_s * NS_PER_S)))

    async def start(group: asyncio.TaskGroup) -> None:
        for user in build_users(plan):
            if io.runs_user(user.user):  # a worker process runs its part of the users
                group.create_task(user_loop(user))

    await in_task_group(start)


class SessionsLoad(LoadPlan):
    """Levels of virtual users (`users=100`): each holds a multi-turn chat, thinks between
    turns, and opens a new conversation after its last turn.

    Users start as a steady population would send (each after a draw of the think time's
    residual, `workload.sessions`); requests sent in the first `ramp_s` are the level's
    warm-up (recorded, marked `warmup`, left out of its statistics), so the level measures
    the `duration_s` after it. Specs are kept as text; the front end checks they parse.
    """


    kind: Literal["sessions"] = "sessions"
    users: list[int] = Field(min_length=1)
    think: str = "exp:45"
    turns: str = "uniform:2:8"
    ramp_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    duration_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    seed: int = 0

    @field_validator("users")
    @classmethod
    def _check_users(cls, value: list[int]) -> list[int]:
        if min(value) < 1:
            raise ValueError("user counts are integers >= 1")
        return value

    def levels(self) -> list[SessionsLevel]:
        return [
            SessionsLevel(
                key=KIND.key(n), n_requests=n, users=n, think=self.think,
                turns=self.turns, ramp_s=self.ramp_s, duration_s=self.duration_s,
                seed=self.seed,
            )
            for n in sorted(set(self.users))
        ]

    def max_in_flight(self) -> int:
        return max(self.users)

    @classmethod
    def from_text(cls, spec: str, seed: int) -> SessionsLoad:
        return cls(users=parse_levels(spec, "load"), seed=seed)

    def worker_source(
        self, source: RequestSource, worker: int, workers: int
    ) -> RequestSource:
        """Every worker builds the same seeded users (a user's turns are the same in every
        worker) and runs its own part of them."""
        return source

    def check_source(self, source: RequestSource, workload: WorkloadSpec | None) -> None:
        """Users of a dataset send its conversations' user turns: it must have some."""
        if isinstance(source, DatasetSource) and not source.conversations():
            raise SettingError(f"{workload.dataset if workload else ''}: "
                               "no row has a user turn for {users} to send", "users")


class SessionsKind(LoadKind):
    def summary_fields(self, key: LevelKey, records: list[RequestRecord]) -> dict[str, Any]:
        return session_fields(records, int(key.value))


KIND = SessionsKind(
    "sessions",
    KindText(
        prefix="users",
        unit="",
        quantity="users",
        axis_title="virtual users (N)",
        mode="sessions",
        methodology=(
            "sessions: N virtual users, each sends a chat turn with its conversation's "
            "history, reads the whole answer, thinks, and sends the next turn"
        ),
        example="users=50,100,200",
    ),
    SessionsLoad,
    [SessionsLevel],
)
