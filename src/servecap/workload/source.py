"""Request sources: what to send next, each request with its own generation parameters.

A scheduler decides *when* to send; a source decides *what*. Each `Request` carries its
text and its own `max_tokens`, so a dataset or a trace (each request with its own lengths)
plugs in as another source without the scheduler or the client changing. The built-in
prompts with one `max_tokens` for every request are the first source.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from servecap.workload.datasets import Message
from servecap.workload.prompts import Prompt, build_prompts
from servecap.workload.sources import PlannedRequest
from servecap.workload.tools import ToolCallLog, ToolTurn


@dataclass(frozen=True, slots=True)
class Request:
    """One request to send: its prompt text and generation parameters."""

    text: str
    max_tokens: int
    input_tokens: int  # the prompt length it was built to hold (the server's usage decides)
    # A chat turn with history (sessions): sent as these messages instead of one user message
    # holding `text`; the client appends the streamed answer's content to `answer` when given.
    history: tuple[Message | ToolTurn, ...] | None = None
    answer: list[str] | None = field(default=None, compare=False)
    # An agent's call (`kinds.agents`): the tool catalogue and `tool_choice` it sends, and
    # where the client collects the tool calls of the streamed answer.
    tools: tuple[dict[str, Any], ...] | None = field(default=None, compare=False)
    tool_choice: str | None = None
    tool_log: ToolCallLog | None = field(default=None, compare=False)

    @property
    def messages(self) -> tuple[Message | ToolTurn, ...]:
        """The prompt as chat turns: the history when there is one, else one user message."""
        return self.history if self.history is not None else (Message("user", self.text),)


# What a backend sends: a built-in prompt, or a planned request of `workload.sources` (a
# dataset row, a synthetic length, a trace row), which may carry several chat turns.
AnyRequest = Request | PlannedRequest


class RequestSource(Protocol):
    """Yields the next request to send; called once per request, by the scheduler."""

    def next_request(self) -> AnyRequest: ...


class PromptCycle:
    """The given prompts in order, round and round, each asking for `max_tokens`.

    From the second round on, each prompt opens with its round ("(2) ...") and gives up as
    many characters at its end, so no request repeats a prompt of an earlier round (from
    about 24 tokens up: shorter ones are mostly the same few words). A repeated prompt
    is served from a prefix cache (vLLM's automatic prefix caching, SGLang's radix cache,
    llama-server's slot cache, all on by default), so a sweep of more than one round of
    prompts would measure the cache rather than prefill from its 121st request on. The mark
    comes first because a prefix cache matches from the start."""

    def __init__(self, prompts: Sequence[Prompt], max_tokens: int) -> None:
        if not prompts:
            raise ValueError("a prompt source needs at least one prompt")
        self._prompts = tuple(prompts)
        self._max_tokens = max_tokens
        self._sent = itertools.count()

    def request(self, index: int) -> Request:
        """The run's request `index` (0 is the first sent)."""
        lap, at = divmod(index, len(self._prompts))
        prompt = self._prompts[at]
        return Request(_in_round(prompt.text, lap), self._max_tokens, prompt.target_tokens)

    def next_request(self) -> Request:
        return self.request(next(self._sent))


def _in_round(text: str, lap: int) -> str:
    """`text` as sent in round `lap + 1`: unchanged in the first, else marked with its round
    and cut back to at most its own length (on a word boundary where there is one)."""
    if lap == 0:
        return text
    mark = f"({lap + 1}) "
    body = text[: max(0, len(text) - len(mark))]
    return mark + (body.rsplit(" ", 1)[0] if " " in body else body)


@runtime_checkable
class IndexedSource(RequestSource, Protocol):
    """A source that builds any request of the run by its index."""

    def request(self, index: int) -> AnyRequest: ...


class Strided:
    """Worker `start` of `step`: the run's requests start, start + step, start + 2 step, ...

    Each worker process builds its own source; without this, every worker would send the
    run's first requests, so N workers sent each prompt N times and a prefix cache served
    all but one. Dealt this way the workers together send what one process sends, each
    request once; an open loop's targets are dealt the same way, so worker k's j-th request
    is the one a single process sends at that target. `request(i)` stays the run's own
    (a replay share asks for its trace rows by their index)."""

    def __init__(self, inner: IndexedSource, start: int, step: int) -> None:
        self._inner = inner
        self._next = itertools.count(start, step)

    def request(self, index: int) -> AnyRequest:
        return self._inner.request(index)

    def next_request(self) -> AnyRequest:
        return self._inner.request(next(self._next))


def for_worker(source: RequestSource, worker: int, workers: int) -> RequestSource:
    """`source` as worker `worker` of `workers` sends it (`Strided`); a source without
    random access (sessions build their own turns) is returned as it is."""
    if workers <= 1 or not isinstance(source, IndexedSource):
        return source
    return Strided(source, worker, workers)


def builtin_source(input_tokens: int, max_tokens: int, seed: int = 0) -> PromptCycle:
    """The 120 built-in prompts at `input_tokens`, shuffled by `seed`."""
    return PromptCycle(build_prompts(input_tokens, seed), max_tokens)
