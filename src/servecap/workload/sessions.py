"""Sessions of virtual users: the conversation state machine, sans-I/O.

A virtual user holds one conversation at a time. It sends a turn (its own message after the
whole history so far, as OpenAI chat messages), the caller streams the answer and reports
its text, the user thinks for a drawn think time, then sends the next turn. After its last
turn it thinks once more and opens a new conversation with an empty history. The caller owns
the clock and the sockets; a user only says what to send next and how long to wait first:

    request = user.next_request()      # READY or THINKING -> WAITING
    think_s = user.complete(answer)    # WAITING -> THINKING (or user.fail() on a failed turn)
    ... wait think_s, then next_request() again

Rule for a failed turn: the conversation ends there. The user thinks (a normal draw) and
then opens a new conversation. Re-sending the turn would be a silent retry, which DESIGN
forbids, and going on without the answer would send a history the user never saw.

Users start as a population in its steady state would send: each user's first turn comes
after a draw of the think time's equilibrium residual (`ThinkTime.sample_residual`, seeded
per user), so the arrival rate is the steady one from the first second. Spreading first turns
evenly over a ramp shorter than a think cycle instead sends N turns in the ramp on top of the
returning users: with 45 s think times and a 30 s ramp that is 1.6x the steady rate, and in
virtual time (vllm-direct's profile, 434 users) it lifted the next 30 s's P90 TTFT from about
650 ms to 920-1230 ms with up to 205 requests in flight against a steady 32. The one
transient left is that every user starts thinking, none in service: R / (R + Z) of the
steady load (8% there) is missing for the first response times, which is what the load's
warm-up (`ramp_s`) is for.
Their turns come from `SessionPlan.conversations` (user-turn texts per conversation, e.g.
multi-turn ShareGPT), else from `prompt_at(i)`, the source's request i, where user u's n-th
turn text is request u + n * users: no two users send the same turn, so a prefix cache
reuses only a user's own history, as with real users (else from a seeded choice among the
synthetic `prompts`). With conversations, a conversation
has its own number of user turns, capped by `turns` when given; user u's k-th conversation
is the (u + k * users)-th of a seeded shuffle, so users spread over the dataset.

Contract: each request records its user, the user's conversation number (from 0), the turn
(1 for a conversation's first) and the think time drawn before it (None for the user's first
request, which follows its start offset instead). Randomness is per user and per purpose
(think, turns, prompts), seeded from the plan, so a user's think times do not depend on how
its conversations went. Calls out of order raise `RuntimeError`; a bad plan `ValueError`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from servecap.workload.think_time import ThinkTime, TurnCount

Message = dict[str, str]


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """What the users of one sessions level do."""

    users: int
    think: ThinkTime
    turns: TurnCount | None = None
    seed: int = 0
    conversations: tuple[tuple[str, ...], ...] | None = None
    prompts: tuple[str, ...] = field(default=())
    prompt_at: Callable[[int], str] | None = None

    def __post_init__(self) -> None:
        if self.users < 1:
            raise ValueError(f"a sessions level needs at least 1 user, got {self.users}")
        if self.conversations is not None:
            if not self.conversations or not all(self.conversations):
                raise ValueError("every conversation needs at least one user turn")
        elif not (self.prompts or self.prompt_at) or self.turns is None:
            raise ValueError("synthetic sessions need prompts and a turn count")


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One chat request a user sends, with what the records need about it."""

    user: int
    conversation: int
    turn: int
    think_before_s: float | None
    messages: tuple[Message, ...]


class UserState(StrEnum):
    READY = "ready"
    WAITING = "waiting"
    THINKING = "thinking"


def start_offset(plan: SessionPlan, user: int) -> float:
    """Seconds after the level's start at which `user` sends its first turn (see above)."""
    return plan.think.sample_residual(_rng(plan.seed, "start", user))


def _rng(seed: int, purpose: str, user: int) -> random.Random:
    # String seeds hash with SHA-512 inside `random`: stable across runs and processes.
    return random.Random(f"servecap/{seed}/{purpose}/{user}")


class VirtualUser:
    """One user's conversations, turn by turn."""

    def __init__(self, user: int, plan: SessionPlan, order: Sequence[int] = ()) -> None:
        if not 0 <= user < plan.users:
            raise ValueError(f"user {user} is not one of the plan's {plan.users} users")
        self.user = user
        self.start_offset_s = start_offset(plan, user)
        self._plan = plan
        self._order = order
        self._think_rng = _rng(plan.seed, "think", user)
        self._turns_rng = _rng(plan.seed, "turns", user)
        self._prompt_rng = _rng(plan.seed, "prompts", user)
        self.state = UserState.READY
        self._conversation = -1
        self._texts: tuple[str, ...] = ()
        self._drawn = 0  # synthetic turn texts drawn so far
        self._history: list[Message] = []
        self._turn = 0
        self._think_before: float | None = None

    @property
    def conversations_started(self) -> int:
        return self._conversation + 1

    def next_request(self) -> TurnRequest:
        """The next turn to send (opening a new conversation when the last one ended)."""
        if self.state is UserState.WAITING:
            raise RuntimeError(f"user {self.user} is still waiting for an answer")
        if self._turn >= len(self._texts):
            self._open_conversation()
        message: Message = {"role": "user", "content": self._texts[self._turn]}
        self._history.append(message)
        self._turn += 1
        self.state = UserState.WAITING
        return TurnRequest(
            user=self.user,
            conversation=self._conversation,
            turn=self._turn,
            think_before_s=self._think_before,
            messages=tuple(dict(m) for m in self._history),
        )

    def complete(self, answer: str) -> float:
        """Report the whole streamed answer; returns the think time before the next turn."""
        self._expect_waiting()
        self._history.append({"role": "assistant", "content": answer})
        return self._think()

    def fail(self) -> float:
        """Report a failed turn: the conversation ends; returns the think time before a new one."""
        self._expect_waiting()
        self._texts, self._turn = (), 0
        return self._think()

    def _expect_waiting(self) -> None:
        if self.state is not UserState.WAITING:
            raise RuntimeError(f"user {self.user} has no turn in flight")

    def _think(self) -> float:
        self.state = UserState.THINKING
        self._think_before = self._plan.think.sample(self._think_rng)
        return self._think_before

    def _open_conversation(self) -> None:
        self._conversation += 1
        self._history = []
        self._turn = 0
        self._texts = self._conversation_texts()

    def _conversation_texts(self) -> tuple[str, ...]:
        plan = self._plan
        if plan.conversations is None:
            assert plan.turns is not None
            count = plan.turns.sample(self._turns_rng)
            if plan.prompt_at is None:
                return tuple(self._prompt_rng.choice(plan.prompts) for _ in range(count))
            first, self._drawn = self._drawn, self._drawn + count
            at = plan.prompt_at
            return tuple(at(self.user + n * plan.users) for n in range(first, first + count))
        pick = (self.user + self._conversation * plan.users) % len(plan.conversations)
        texts = plan.conversations[self._order[pick] if self._order else pick]
        if plan.turns is None:
            return texts
        return texts[: plan.turns.sample(self._turns_rng)]


def build_users(plan: SessionPlan) -> list[VirtualUser]:
    """The plan's users, 0 to users - 1, each with its start offset and seeded streams."""
    order: list[int] = []
    if plan.conversations is not None:
        order = list(range(len(plan.conversations)))
        random.Random(f"servecap/{plan.seed}/conversations").shuffle(order)
    return [VirtualUser(user, plan, order) for user in range(plan.users)]
