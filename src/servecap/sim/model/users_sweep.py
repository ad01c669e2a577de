"""N users who think between requests, in virtual time: the load `servecap verify` sends.

Each user thinks (a draw from the caller's sampler), sends one request, waits for its last
token and thinks again, so arrivals are spread in time as a population's are, not sent in
the lock-step waves of a closed loop. The two can differ by far more than the in-flight
count's spread: a model whose waits follow the running batch sees a small batch when a
closed loop's wave arrives (its streams finished together) and a full one when a user does
(stop 37 measured 6 against 15 running, for the same mean in flight).

Every user's first request comes after one think draw, as a steady population's would for
exponential thinking (its residual think time has the same law); the warm-up absorbs the
rest of the start. The requests sent within the window ``[warmup_s, warmup_s + duration_s]``
are the level's, each run to its last token; the mean in flight is time-weighted over the
window, to hold against Little's law. Same engine and metric definitions as ``sweep``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from servecap.sim.model.engines import make_engine
from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import Request


@dataclass(frozen=True, slots=True)
class UsersLevel:
    """The finished requests sent within the window, and the mean in flight over it."""

    requests: list[Request]
    mean_in_flight: float
    window_s: float


def users_level(
    params: ModelParams,
    users: int,
    think: Callable[[], float],
    warmup_s: float,
    duration_s: float,
    prompt_tokens: int = 128,
    output_tokens: int = 128,
    seed: int = 0,
) -> UsersLevel:
    """``users`` users thinking ``think()`` seconds between one-request turns (seeded engine;
    the sampler carries its own seed)."""
    if users < 1 or warmup_s < 0 or duration_s <= 0:
        raise ValueError(f"need users >= 1, warmup_s >= 0, duration_s > 0; got {users}, "
                         f"{warmup_s}, {duration_s}")  # fmt: skip
    engine = make_engine(params, seed=seed)
    start, end = warmup_s, warmup_s + duration_s
    arrivals = [(think(), user) for user in range(users)]
    heapq.heapify(arrivals)
    live: dict[int, Request] = {}
    kept: list[Request] = []
    area = 0.0  # requests in flight x seconds, within the window
    clock = 0.0
    next_id = 0
    while arrivals or live:
        te = engine.next_time()
        t = arrivals[0][0] if arrivals and (te is None or arrivals[0][0] <= te) else te
        if t is None:
            break
        area += len(live) * max(0.0, min(t, end) - max(clock, start))
        clock = max(clock, t)
        if arrivals and arrivals[0][0] == t:
            _, user = heapq.heappop(arrivals)
            live[next_id] = Request(user, t)
            engine.add(next_id, prompt_tokens, output_tokens, t)
            next_id += 1
            continue
        for em in engine.advance(t):
            req = live[em.rid]
            req.receive(t, em.tokens, em.first)
            if em.done:
                del live[em.rid]
                if start <= req.sent <= end:
                    kept.append(req)
                back = t + think()
                if back <= end:
                    heapq.heappush(arrivals, (back, req.stream))
    return UsersLevel(kept, area / duration_s, duration_s)
