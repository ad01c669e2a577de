"""The performance model as pure code: step times, admission, KV budget, speculation."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.sim.model.emissions import Emission
from servecap.sim.model.fixed_engine import FixedEngine
from servecap.sim.model.params import ModelParams
from servecap.sim.model.step_cost import step_ms
from servecap.sim.model.step_engine import (
    StepEngine,
    accepted_drafts,
    expected_tokens_per_step,
)


def run(engine: StepEngine | FixedEngine, limit: int = 100_000) -> list[tuple[float, Emission]]:
    """Advance an engine until it has nothing left; (time, emission) pairs."""
    out: list[tuple[float, Emission]] = []
    for _ in range(limit):
        t = engine.next_time()
        if t is None:
            return out
        out += [(t, e) for e in engine.advance(t)]
    raise AssertionError("engine did not finish")


def times_of(events: list[tuple[float, Emission]], rid: int) -> list[float]:
    return [t for t, e in events if e.rid == rid]


SIMPLE = ModelParams(
    frontend_ms=20.0,
    idle_window_ms=0.0,
    step_base_ms=10.0,
    decode_ms_per_seq=1.0,
    prefill_ms_per_token=0.1,
)


def test_single_request_step_times() -> None:
    eng = StepEngine(SIMPLE)
    eng.add(0, prompt_tokens=100, max_tokens=4, now=0.0)
    ev = run(eng)
    t = times_of(ev, 0)
    # ready at 20 ms; prefill step 10 + 0.1*100 = 20 ms -> first token at 40 ms
    assert t[0] == pytest.approx(0.040)
    # decode steps: 10 + 1*1 + 0 = 11 ms each
    assert np.diff(t) == pytest.approx([0.011] * 3)
    assert [e.tokens for _, e in ev] == [1, 1, 1, 1]
    assert ev[0][1].first and ev[-1][1].done
    assert eng.counters.generation_tokens == 4 and eng.counters.prompt_tokens == 100


def test_decode_cost_grows_with_batch_and_context() -> None:
    p = SIMPLE.model_copy(update={"ctx_ms_per_ktoken": 1.0})
    eng = StepEngine(p)
    for rid in range(4):
        eng.add(rid, 100, 3, 0.0)
    t = times_of(run(eng), 0)
    # prefill of 400 tokens: 10 + 40 + ctx(400 tokens after planning: 0.4) -> first token
    assert t[0] == pytest.approx(0.020 + 0.0504)
    # a decode step with 4 seqs and 4 * 101 context tokens: 10 + 4 + 0.404
    assert t[1] - t[0] == pytest.approx(0.014404)


def test_decode_cost_stops_growing_past_the_batch_cap() -> None:
    """``decode_batch_cap``: past it a step costs what the cap's batch does (llama.cpp on a
    CPU); 0 is no cap, and a step keeps growing."""
    from servecap.sim.model.step_cost import step_ms

    capped = SIMPLE.model_copy(update={"decode_exp": 1.5, "decode_batch_cap": 4.0})
    costs = [step_ms(capped, n, 0, 0, False) for n in (1, 2, 4, 6, 8)]
    assert costs[:3] == pytest.approx([11.0, 10.0 + 2**1.5, 18.0])
    assert costs[2:] == pytest.approx([18.0] * 3)
    grows = [step_ms(SIMPLE, n, 0, 0, False) for n in (4, 8)]
    assert grows == pytest.approx([14.0, 18.0])


def test_chunked_prefill_spreads_prompts_over_steps() -> None:
    p = SIMPLE.model_copy(update={"prefill_budget_tokens": 150})
    eng = StepEngine(p)
    eng.add(0, 100, 2, 0.0)
    eng.add(1, 100, 2, 0.0)
    ev = run(eng)
    first0, first1 = times_of(ev, 0)[0], times_of(ev, 1)[0]
    # step 1: seq0 100 tokens + seq1 50 tokens (25 ms); step 2: seq1 50 more + 1 decode
    assert first0 == pytest.approx(0.045)
    assert first1 == pytest.approx(0.045 + 0.010 + 0.001 + 0.005)


def test_max_num_seqs_makes_requests_wait() -> None:
    p = SIMPLE.model_copy(update={"max_num_seqs": 1})
    eng = StepEngine(p)
    eng.add(0, 10, 3, 0.0)
    eng.add(1, 10, 3, 0.0)
    ev = run(eng)
    assert times_of(ev, 1)[0] > times_of(ev, 0)[-1]


def test_kv_budget_holds_requests_until_space_frees() -> None:
    # each request reserves prompt + max_tokens = 20 tokens; the budget fits two
    p = SIMPLE.model_copy(update={"kv_budget_tokens": 40})
    eng = StepEngine(p)
    for rid in range(3):
        eng.add(rid, 10, 10, 0.0)
    eng.advance(eng.next_time() or 0.0)
    assert eng.counters.running == 2 and eng.counters.waiting == 1
    assert eng.counters.kv_usage == pytest.approx(1.0)
    ev = run(eng)
    assert times_of(ev, 2)[0] > max(times_of(ev, 0)[-1], times_of(ev, 1)[-1])


def test_cancel_frees_the_reservation() -> None:
    p = SIMPLE.model_copy(update={"kv_budget_tokens": 20})
    eng = StepEngine(p)
    eng.add(0, 10, 10, 0.0)
    eng.add(1, 10, 10, 0.0)
    eng.advance(eng.next_time() or 0.0)
    assert eng.counters.waiting == 1
    eng.cancel(0)
    ev = run(eng)
    assert {e.rid for _, e in ev} == {1}


def test_admit_ratio_gathers_new_requests() -> None:
    p = SIMPLE.model_copy(update={"admission": "hold_ms", "admit_ratio": 2.0})
    eng = StepEngine(p)
    eng.add(0, 10, 50, 0.0)
    eng.advance(eng.next_time() or 0.0)  # 0 starts alone (nothing running)
    eng.add(1, 10, 5, 0.0)
    eng.advance(eng.next_time() or 0.0)
    # one waiting < 2.0 * one running: held back
    assert eng.counters.waiting == 1 and eng.counters.running == 1


def test_speculative_full_acceptance_emits_k_plus_one() -> None:
    p = SIMPLE.model_copy(update={"num_spec_tokens": 3, "acceptance": 1.0})
    eng = StepEngine(p)
    eng.add(0, 10, 9, 0.0)
    ev = run(eng)
    assert [e.tokens for _, e in ev] == [1, 4, 4]
    assert eng.counters.draft_tokens == 6 and eng.counters.accepted_tokens == 6


def test_speculative_zero_acceptance_is_one_token_a_step() -> None:
    p = SIMPLE.model_copy(update={"num_spec_tokens": 3, "acceptance": 0.0})
    eng = StepEngine(p)
    eng.add(0, 10, 4, 0.0)
    assert [e.tokens for _, e in run(eng)] == [1, 1, 1, 1]


def test_verification_cost_makes_spec_lose_at_high_batch() -> None:
    base = SIMPLE.model_copy(update={"decode_ms_per_seq": 0.2})
    spec = base.model_copy(
        update={"num_spec_tokens": 4, "acceptance": 0.7, "verify_ms_per_token": 0.3}
    )

    def itl(p: ModelParams, batch: int) -> float:
        eng = StepEngine(p, seed=1)
        for rid in range(batch):
            eng.add(rid, 10, 64, 0.0)
        t = times_of(run(eng), 0)
        return (t[-1] - t[0]) / 63

    assert itl(spec, 1) < itl(base, 1)
    assert itl(spec, 64) > itl(base, 64)


def test_an_eager_speculative_step_costs_the_same_whatever_the_batch() -> None:
    """Above the captured graphs' batch a speculative step is launch-bound: the seed's
    sglang-spec ITL is 61 and 67 ms at c=16 and 32. Within the graphs it grows as verify
    does; a step with speculation off (memory pressure) is priced as plain decoding."""
    p = SIMPLE.model_copy(update={
        "num_spec_tokens": 7, "acceptance": 0.7, "verify_ms_per_token": 0.3,
        "decode_ms_per_seq": 2.0, "spec_graph_max_batch": 8, "spec_eager_step_ms": 70.0,
    })  # fmt: skip
    base = p.step_base_ms
    assert step_ms(p, 16, 0, 0, True) == step_ms(p, 32, 0, 0, True) == base + 70.0
    assert step_ms(p, 4, 0, 0, True) < step_ms(p, 8, 0, 0, True) < base + 70.0
    assert step_ms(p, 32, 0, 0, False) == base + 2.0 * 32


def test_accepted_drafts_mean_matches_formula() -> None:
    rng = np.random.default_rng(0)
    k, a = 7, 0.6
    draws = accepted_drafts(rng, k, a, 20_000)
    assert 1 + np.mean(draws) == pytest.approx(expected_tokens_per_step(k, a), rel=0.02)
    assert max(draws) <= k and min(draws) == 0


def test_jitter_is_seeded() -> None:
    p = SIMPLE.model_copy(update={"jitter": 0.2})

    def schedule(seed: int) -> list[float]:
        eng = StepEngine(p, seed=seed)
        eng.add(0, 10, 20, 0.0)
        return [t for t, _ in run(eng)]

    assert schedule(3) == schedule(3)
    assert schedule(3) != schedule(4)


def test_fixed_engine_exact_schedule_with_chunks() -> None:
    p = ModelParams(fixed_ttft_ms=50.0, fixed_itl_ms=10.0, tokens_per_chunk=3)
    eng = FixedEngine(p)
    eng.add(0, 5, 10, 1.0)
    ev = run(eng)
    assert [round(t - 1.0, 6) for t, _ in ev] == [0.05, 0.08, 0.11, 0.14]
    assert [e.tokens for _, e in ev] == [3, 3, 3, 1]
    assert ev[0][1].first and not ev[1][1].first and ev[-1][1].done


def _first_token_wait(params: ModelParams, seed: int, arrive: float) -> float:
    """TTFT of a request that reaches a busy engine ``arrive`` s after a long one began."""
    eng = StepEngine(params, seed=seed)
    eng.add(0, 10, 10_000, 0.0)
    ev: list[tuple[float, Emission]] = []
    added = False
    while True:
        t = eng.next_time()
        assert t is not None
        if not added and t >= arrive:
            eng.add(1, 10, 1, arrive)
            added = True
            continue
        ev += [(t, e) for e in eng.advance(t)]
        if added and any(e.rid == 1 for _, e in ev):
            return times_of(ev, 1)[0] - arrive


SGLANG = SIMPLE.model_copy(update={"frontend_ms": 0.0, "prefill_alone": True})


def test_prefill_alone_pauses_the_running_streams() -> None:
    events = {}
    for alone in (True, False):
        eng = StepEngine(SGLANG.model_copy(update={"prefill_alone": alone}))
        eng.add(0, 10, 5, 0.0)
        ev = [(t, e) for t, e in run_until(eng, 0.012)]
        eng.add(1, 100, 2, 0.012)
        events[alone] = ev + run(eng)
    # 0: prefill 11 ms, decode 11 ms; then 1's prefill of 100 tokens: alone, 20 ms and no
    # token for 0; mixed, 21 ms (its decode rides along) and 0's token with 1's first
    first1 = {alone: times_of(ev, 1)[0] for alone, ev in events.items()}
    assert first1[True] == pytest.approx(0.042)
    assert first1[False] == pytest.approx(0.043)
    assert first1[True] not in times_of(events[True], 0)
    assert first1[False] in times_of(events[False], 0)


def test_output_lag_holds_a_step_until_the_next_prefill_ends() -> None:
    firsts = {}
    for lag in (True, False):
        eng = StepEngine(SGLANG.model_copy(update={"output_lag": lag}))
        eng.add(0, 100, 3, 0.0)
        ev = run_until(eng, 0.001)
        eng.add(1, 100, 3, 0.001)  # a millisecond late: its own prefill step, after 0's
        ev += run(eng)
        firsts[lag] = (times_of(ev, 0)[0], times_of(ev, 1)[0])
    # each prefill step is 10 + 0.1 x 100 = 20 ms; with the lag, 0's first token waits for
    # the launch of 1's prefill, so both come out at 40 ms (the seed's sglang-direct pairs)
    assert firsts[False] == pytest.approx((0.020, 0.040))
    assert firsts[True] == pytest.approx((0.040, 0.040))


def test_output_lag_drops_what_a_cancelled_request_had_held() -> None:
    eng = StepEngine(SGLANG.model_copy(update={"output_lag": True}))
    eng.add(0, 100, 3, 0.0)
    run_until(eng, 0.001)
    eng.add(1, 100, 3, 0.001)
    assert run_until(eng, 0.030) == []  # 0's first token is held behind 1's prefill
    eng.cancel(0)
    assert {e.rid for _, e in run(eng)} == {1}


def run_until(engine: StepEngine, until: float) -> list[tuple[float, Emission]]:
    """Advance an engine through the events due before ``until``."""
    out: list[tuple[float, Emission]] = []
    while (t := engine.next_time()) is not None and t < until:
        out += [(t, e) for e in engine.advance(t)]
    return out
