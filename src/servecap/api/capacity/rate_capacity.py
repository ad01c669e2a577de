"""`servecap capacity --load rate`: the highest open-loop rate within the SLOs, then its users.

1. The search (`rate_search`): open-loop Poisson probes from the start rate, doubling, then
   bisection to the stated resolution, each probe stopping once its verdict is decided
   (`open_probe_rule`: the concurrency probes' rule, read on arrivals; a probe that cannot
   keep its schedule is a miss). Every probe is a level of one run directory.
2. Goodput at the highest passing rate X: the requests a second that met every SLO
   (`metrics.goodput`), over the probe's steady window.
3. The users: N = X x (R + Z) by the response-time law, R the mean latency from arrival at
   X and Z the mean think time; N users run with the think time (the sessions load, as the
   concurrency answer verifies), below N on a miss.
"""

from __future__ import annotations

import time
from pathlib import Path

from servecap.api.capacity.capacity import CapacityOptions, _users_options, _verified, _Watch
from servecap.api.capacity.cost import price_answer
from servecap.api.capacity.diagnosis import diagnose
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.rate_search import RateCapacitySearch, RateMeasured
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.kinds.window import apply_window
from servecap.metrics.goodput import level_goodput
from servecap.stats.response_time import users_for_throughput
from servecap.stats.search import SearchStatus
from servecap.storage.capacity_answer import CapacityAnswer, ProbeRow, Status, write_answer
from servecap.storage.rate_answer import RateFields


def find_rate_capacity(
    config: RunConfig, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """Search the rate, verify its users, answer (written beside `config.out_dir`)."""
    started = time.monotonic()
    search = RateCapacitySearch(
        options.slo(), ProbeSettings(options.confidence, options.first_look),
        options.search_budget_s(), options.start_rate, options.rate_resolution, config.seed)
    watch = _Watch(progress or NullProgress(), search=search)
    out = Path(config.out_dir).parent
    try:
        run_benchmark(config, secrets, watch, plan=search)
    except KeyboardInterrupt:
        answer = rate_answer(config, options, search, watch, started)
        write_answer(out, answer.model_copy(update={"complete": False}))
        raise
    answer = rate_answer(config, options, search, watch, started)
    if options.verify:
        answer = verify_rate_answer(answer, options, secrets, progress)
    answer = price_answer(answer, config.cost)
    write_answer(out, answer)
    return answer


def rate_answer(
    config: RunConfig, options: CapacityOptions, search: RateCapacitySearch, watch: _Watch,
    started: float,
) -> CapacityAnswer:
    """The answer from the probes measured so far (rates on real time)."""
    scale = search.time_scale
    result = search.result()
    best = _probe(search.probes, result.lower, scale)
    missed = _probe(search.probes, result.upper, scale)
    latency = _latency(best)
    predicted = (round(users_for_throughput(best.rate, latency, search.slo.think_time_s))
                 if best is not None and latency else None)
    rate = RateFields(
        rate_max=result.lower, first_miss=result.upper, start_rate=options.start_rate,
        lowest=min((p.rate for p in result.probes), default=None),
        resolution=options.rate_resolution,
        converged=result.status is SearchStatus.CONVERGED, **_goodput(best, search, watch))
    return CapacityAnswer(
        deployment=config.name or config.model or "server",
        status=_status(result.status, missed, result.lower, result.upper),
        slo=options.slo(), confidence=options.confidence, c_max=None, first_miss=None,
        binding_slo=_binding(missed), latency_mean_s=latency, predicted_users=predicted,
        time_scale=scale, users_turns=options.users_turns, requests=len(watch.records),
        elapsed_s=time.monotonic() - started,
        probes=[_row(p, scale) for p in search.probes], diagnosis=diagnose(watch.records),
        probe_run=watch.run_dir, load="rate", rate=rate,
    )


def _probe(probes: list[RateMeasured], rate: float | None, scale: float) -> RateMeasured | None:
    """The probe of `rate` (real time) among those measured (offered on the server's)."""
    if rate is None:
        return None
    return next((p for p in reversed(probes) if p.rate == rate * scale), None)


def _latency(probe: RateMeasured | None) -> float | None:
    """R of the response-time law: the mean latency from arrival (what a user waits)."""
    if probe is None:
        return None
    summary = probe.summary
    return summary.latency_sched_mean_s or summary.latency_mean_s


def _goodput(
    best: RateMeasured | None, search: RateCapacitySearch, watch: _Watch
) -> dict[str, float | None]:
    """Goodput at the highest passing rate, over the probe's window, on real time."""
    if best is None:
        return {}
    rows = [r for r in watch.records if r.key == best.summary.key and not r.warmup]
    kept = apply_window(rows, best.window).kept if best.window is not None else rows
    found = level_goodput(kept, best.rate, search.slo)
    rps = found.goodput_rps / search.time_scale if found.goodput_rps is not None else None
    return {"goodput_rps": rps, "attainment": found.attainment}


def _status(
    status: SearchStatus, missed: RateMeasured | None, lower: float | None,
    upper: float | None,
) -> Status:
    if status is SearchStatus.NOTHING_PASSES:
        return "slo_missed_at_1"
    if missed is not None and missed.summary.client_bound:
        return "client_bound"
    return "found" if lower is not None and upper is not None else "not_bounded"


def _binding(missed: RateMeasured | None) -> str | None:
    return missed.outcome.binding() if missed is not None else None


def _row(probe: RateMeasured, scale: float) -> ProbeRow:
    bounds = {j.threshold.metric: [j.low, j.high] for j in probe.outcome.judged}
    stat = probe.outcome.judged[0].threshold.statistic if probe.outcome.judged else "p90"
    summary = probe.summary
    return ProbeRow(
        concurrency=None, rate=probe.rate / scale, n_requests=summary.n_requests or 0,
        n_judged=probe.outcome.n_judged, cropped=probe.outcome.cropped,
        verdict=probe.outcome.verdict, ttft_bound_ms=bounds.get("ttft", [None, None]),
        tps_bound=bounds.get("tps", [None, None]),
        ttft_ms=summary.value("ttft_sched", stat) or summary.value("ttft", stat),
        tps=summary.value("tps", stat), reason=probe.outcome.reason,
    )


def verify_rate_answer(
    answer: CapacityAnswer, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """The answer with the users N = X x (R + Z) run as sessions (and below N on a miss);
    as it was when no rate passed."""
    if not (answer.predicted_users and answer.latency_mean_s and answer.probe_run):
        return answer
    assert answer.rate is not None and answer.rate.rate_max is not None
    started = time.monotonic() - answer.elapsed_s
    probe_run = Path(answer.probe_run)
    users = _users_options(options, probe_run.parent, answer.time_scale)
    # the mean in flight at X (Little's law), where the concurrency answer has its C_max
    in_flight = answer.rate.rate_max * answer.time_scale * answer.latency_mean_s
    return _verified(answer, users, probe_run, secrets, progress, started,
                     in_flight=max(1, round(in_flight)))
