"""A closed-loop sweep in virtual time: c streams x rounds, no sockets.

Each stream sends its next request when the previous one ends (plus a small seeded client
gap, like a real client's turnaround). The same engine code drives the HTTP server, so the
means here are what a client sees from the server (up to the client's own overhead).

Metrics follow the project's definitions: TTFT = first token - send; ITL =
(last - first) / (N - n_first); TPS = N / latency; latency = last token - send.

A row's workload is its ``prompt_tokens`` and ``output_tokens`` (128/128, the seed's, where a
row does not say): a sweep's rows carry theirs, and ``fit_errors`` compares a level only with
the prediction of the same workload, so one fit can see several workloads. A measurement
whose prompts were not all of the row's length (the seed tool's 100 prompts of 54-166
tokens, see sim/seed_prompts.py) is swept with ``prompt_lengths``: the k-th request of a
level is sent the k-th length, cycled, and the rows keep their nominal workload.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from servecap.sim.model.engines import make_engine
from servecap.sim.model.params import ModelParams

SEED_LEVELS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
METRICS: tuple[str, ...] = ("ttft_mean_ms", "itl_mean_ms", "tps_mean", "latency_mean_s")
#: the tail the capacity answer at P90 rests on (TTFT's 90th percentile, linear, as servecap's)
TAIL_METRICS: tuple[str, ...] = ("ttft_p90_ms",)
#: prompt and output tokens of a row that does not say (the seed report's fixed lengths)
DEFAULT_WORKLOAD: tuple[int, int] = (128, 128)
Workload = tuple[int, int]


def workload_of(row: dict[str, float]) -> Workload:
    """(prompt tokens, output tokens) of a level row; 128/128 where it does not say."""
    prompt = row.get("prompt_tokens", DEFAULT_WORKLOAD[0])
    output = row.get("output_tokens", DEFAULT_WORKLOAD[1])
    return max(1, round(prompt)), max(1, round(output))


def by_workload(rows: Sequence[dict[str, float]]) -> dict[Workload, list[dict[str, float]]]:
    """Rows grouped by workload, in the order each workload first appears."""
    out: dict[Workload, list[dict[str, float]]] = {}
    for row in rows:
        out.setdefault(workload_of(row), []).append(row)
    return out


def workload_label(workload: Workload) -> str:
    """``"512/32"``: prompt / output tokens."""
    return f"{workload[0]}/{workload[1]}"


@dataclass
class Request:
    """One request of a sweep, in virtual seconds."""

    stream: int
    sent: float
    first: float = math.nan
    last: float = math.nan
    n_first: int = 0
    tokens: int = 0

    def receive(self, t: float, tokens: int, first: bool) -> None:
        """``tokens`` arrived at ``t`` (``first``: the reply's first chunk)."""
        if first:
            self.first, self.n_first = t, tokens
        self.tokens += tokens
        self.last = t

    @property
    def ttft_s(self) -> float:
        return self.first - self.sent

    @property
    def latency_s(self) -> float:
        return self.last - self.sent

    @property
    def itl_s(self) -> float | None:
        """Mean gap between tokens after the first chunk; None for a one-chunk reply."""
        if self.tokens <= self.n_first:
            return None
        return (self.last - self.first) / (self.tokens - self.n_first)


def _means(done: list[Request], concurrency: int) -> dict[str, float]:
    ttft = [r.first - r.sent for r in done]
    itl = [(r.last - r.first) / (r.tokens - r.n_first) for r in done if r.tokens > r.n_first]
    lat = [r.last - r.sent for r in done]
    return {
        "concurrency": float(concurrency),
        "ttft_mean_ms": 1000.0 * float(np.mean(ttft)),
        "ttft_p90_ms": 1000.0 * float(np.percentile(ttft, 90.0, method="linear")),
        "itl_mean_ms": 1000.0 * float(np.mean(itl)) if itl else 0.0,
        "tps_mean": float(np.mean([r.tokens / max(r.last - r.sent, 1e-9) for r in done])),
        "latency_mean_s": float(np.mean(lat)),
        "n": float(len(done)),
    }


def closed_loop_requests(
    params: ModelParams,
    concurrency: int,
    rounds: int = 10,
    prompt_tokens: int = 128,
    output_tokens: int = 128,
    seed: int = 0,
    client_gap_ms: float = 0.5,
    client_delay_ms: float = 0.0,
    prompt_lengths: Sequence[int] = (),
) -> list[Request]:
    """The finished requests of one closed-loop level, in virtual seconds (see
    ``closed_loop_level``)."""
    rng = np.random.default_rng(seed)
    engine = make_engine(params, seed=seed)
    gap = client_gap_ms / 1000.0
    delay = client_delay_ms / 1000.0
    arrivals = [(float(rng.uniform(0, gap)), s) for s in range(concurrency)]
    heapq.heapify(arrivals)
    lengths = list(prompt_lengths) or [prompt_tokens]  # the k-th request's prompt, cycled
    sent_count = [0] * concurrency
    live: dict[int, Request] = {}
    done: list[Request] = []
    next_id = 0
    while arrivals or live:
        te = engine.next_time()
        if arrivals and (te is None or arrivals[0][0] <= te):
            t, stream = heapq.heappop(arrivals)
            live[next_id] = Request(stream, t)
            sent_count[stream] += 1
            engine.add(next_id, lengths[next_id % len(lengths)], output_tokens, t)
            next_id += 1
            continue
        if te is None:
            break
        for em in engine.advance(te):
            req = live[em.rid]
            req.receive(te, em.tokens, em.first)
            if em.done:
                done.append(live.pop(em.rid))
                if sent_count[req.stream] < rounds:
                    back = te + delay + float(rng.uniform(0, 2 * gap))
                    heapq.heappush(arrivals, (back, req.stream))
    return done


def closed_loop_level(
    params: ModelParams,
    concurrency: int,
    rounds: int = 10,
    prompt_tokens: int = 128,
    output_tokens: int = 128,
    seed: int = 0,
    client_gap_ms: float = 0.5,
    client_delay_ms: float = 0.0,
    prompt_lengths: Sequence[int] = (),
) -> dict[str, float]:
    """Means of one closed-loop level: ``concurrency`` streams of ``rounds`` requests each.

    A stream's next request is sent ``client_delay_ms`` plus a uniform ``[0, 2 *
    client_gap_ms]`` after its previous one ends. With ``prompt_lengths`` the requests carry
    those prompts (cycled, in the order sent); the row still says ``prompt_tokens``."""
    done = closed_loop_requests(
        params, concurrency, rounds, prompt_tokens, output_tokens, seed, client_gap_ms,
        client_delay_ms, prompt_lengths,
    )  # fmt: skip
    return {**_means(done, concurrency), "prompt_tokens": float(prompt_tokens),
            "output_tokens": float(output_tokens)}  # fmt: skip


def closed_loop_sweep(
    params: ModelParams,
    levels: tuple[int, ...] | list[int] = SEED_LEVELS,
    rounds: int = 10,
    prompt_tokens: int = 128,
    output_tokens: int = 128,
    seed: int = 0,
    prompt_lengths: Sequence[int] = (),
) -> list[dict[str, float]]:
    """One row of means per level (keys: concurrency, ttft_mean_ms, ttft_p90_ms, itl_mean_ms,
    tps_mean, latency_mean_s, n, prompt_tokens, output_tokens)."""
    return [
        closed_loop_level(
            params,
            c,
            rounds,
            prompt_tokens,
            output_tokens,
            seed=seed + c,
            prompt_lengths=prompt_lengths,
        )
        for c in levels
    ]


def sweep_like(
    params: ModelParams, rows: Sequence[dict[str, float]], rounds: int = 10, seed: int = 0,
    prompt_lengths: Sequence[int] = (),
) -> list[dict[str, float]]:  # fmt: skip
    """The sweep that predicts ``rows``: each workload's levels at its own lengths, or, for
    the default 128/128 workload where ``prompt_lengths`` are given, with those prompts (the
    seed tool's: what its "128/128" sent)."""
    out: list[dict[str, float]] = []
    for (prompt, output), group in by_workload(rows).items():
        levels = sorted({int(row["concurrency"]) for row in group})
        lengths = prompt_lengths if (prompt, output) == DEFAULT_WORKLOAD else ()
        out += closed_loop_sweep(params, levels, rounds, prompt, output, seed, lengths)
    return out


def fit_errors(
    predicted: list[dict[str, float]],
    target: list[dict[str, float]],
    metrics: Sequence[str] = METRICS,
) -> dict[str, float]:
    """Absolute percentage errors per cell (``"c=8 ttft_mean_ms"``; ``"512/32 c=8 ..."`` for a
    workload other than 128/128) plus ``mape`` and ``max``, over ``metrics`` (the four means by
    default: the published fit error). A level is compared with the prediction of the same
    concurrency and workload."""
    by_level = {(int(row["concurrency"]), workload_of(row)): row for row in predicted}
    cells: dict[str, float] = {}
    for row in target:
        level = (int(row["concurrency"]), workload_of(row))
        pred = by_level.get(level)
        if pred is None:
            continue
        where = f"c={level[0]}"
        if level[1] != DEFAULT_WORKLOAD:
            where = f"{workload_label(level[1])} {where}"
        for key in metrics:
            want = row.get(key)
            if want is None or not math.isfinite(want) or want == 0:
                continue
            cells[f"{where} {key}"] = abs(pred[key] - want) / abs(want)
    values = list(cells.values()) or [math.inf]
    return {**cells, "mape": float(np.mean(values)), "max": float(np.max(values))}
