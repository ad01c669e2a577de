"""The users a prediction names, run on the profile's model: does the simulator hold them?

Little's law turns C_max into N = C_max (1 + Z / L) users (`stats.capacity`), but it relates
means. N users thinking at random keep a fluctuating count in flight, and they arrive spread
in time, not in a closed loop's waves, so the tail an SLO judges can come out otherwise
(`stats.response_time`). `servecap verify` measures that against a server; this runs the
same load (N users thinking `exp:Z` between one-request turns) on the profile's model in
virtual time (`sim.users_sweep`), judges it on the SLO's statistic as verify judges a level,
and, where N misses, finds the largest N that meets both SLOs with the search `verify
--search` uses (`stats.search.users_search`, bounded by N). Still a prediction: seconds of
CPU, no server.
"""

from __future__ import annotations

import random

from servecap.api.predict.verify import warmup_s
from servecap.core.config import SLO
from servecap.core.users_check import UsersCheck
from servecap.sim import ModelParams, UsersLevel, users_level
from servecap.stats.percentiles import describe
from servecap.stats.search import drive, users_search
from servecap.workload.think_time import parse_think_time

#: virtual seconds measured after the warm-up: five times `servecap verify`'s 60 s, so that
#: the P90 rests on hundreds of requests even for a few dozen users
WINDOW_S = 300.0
#: probes the search below N may make (each a `WINDOW_S` run, under a second for 500 users)
SEARCH_BUDGET = 8


def _judge(level: UsersLevel, slo: SLO) -> tuple[float | None, float | None, bool]:
    """(TTFT ms, TPS) on the SLO's statistic, and whether both meet it."""
    done = level.requests
    if not done:
        return None, None, False
    ttft = describe([1000.0 * r.ttft_s for r in done])[slo.statistic]
    tps = describe([r.tokens / max(r.latency_s, 1e-9) for r in done],
                   higher_is_better=True)[slo.statistic]  # fmt: skip
    ok = ttft is not None and tps is not None and ttft <= slo.ttft_ms and tps >= slo.tps
    return ttft, tps, ok


def check_users(
    params: ModelParams,
    users: int,
    latency_mean_s: float,
    slo: SLO,
    input_tokens: int = 128,
    output_tokens: int = 128,
    seed: int = 0,
    time_scale: float = 1.0,
) -> UsersCheck:
    """Run ``users`` users thinking ``exp:slo.think_time_s`` on the model (warm-up as
    `servecap verify`'s from the C_max level's mean latency), judge them, and search below
    when they miss. ``time_scale`` S: the SLO, the latency and the answer are on the clock
    of a run measured at `servecap sim --time-scale S` (S times faster than the model's)."""
    model_slo = slo.model_copy(update={
        "ttft_ms": slo.ttft_ms * time_scale, "tps": slo.tps / time_scale,
        "think_time_s": slo.think_time_s * time_scale})  # fmt: skip
    law = parse_think_time(f"exp:{model_slo.think_time_s:g}")
    warm = warmup_s(latency_mean_s) * time_scale

    def run(n: int) -> UsersLevel:
        rng = random.Random(seed + n)
        return users_level(params, n, lambda: law.sample(rng), warm, WINDOW_S,
                           input_tokens, output_tokens, seed=seed + n)  # fmt: skip

    level = run(users)
    ttft, tps, holds = _judge(level, model_slo)
    check = UsersCheck(
        users=users, think=f"exp:{slo.think_time_s:g}", warmup_s=warm / time_scale,
        window_s=WINDOW_S / time_scale, statistic=slo.statistic,
        ttft_ms=None if ttft is None else ttft / time_scale,
        tps=None if tps is None else tps * time_scale,
        mean_in_flight=level.mean_in_flight, requests=len(level.requests), holds=holds,
    )  # fmt: skip
    if holds or users <= 1:
        return check
    search = users_search(users, budget=SEARCH_BUDGET + 1, maximum=users)
    search.record(search.next_probe() or users, False)  # its first probe: N, just run
    result = drive(search, lambda n: _judge(run(n), model_slo)[2])
    return check.model_copy(update={"holding_users": result.found, "search": result.message})


__all__ = ["UsersCheck", "check_users"]
