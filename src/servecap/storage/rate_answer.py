"""`servecap capacity --load rate`'s part of `capacity.json`, and the sentence it opens with.

A rate answer is a `CapacityAnswer` whose `rate` holds the highest open-loop Poisson rate
within the SLOs with its bracket (the first rate that missed), the goodput at it, and the
search's start and resolution. Rates are requests/s on real time: a simulator at time
scale S was offered S times these rates, on its own clock. The users N = X x (R + Z)
(the response-time law) stand in the answer's `predicted_users`, and those the sessions
load verified in `verified_users`, as the concurrency answer's do.
"""

from __future__ import annotations

from pydantic import BaseModel

from servecap.storage.answer_view import AnswerView


class RateFields(BaseModel):
    """The rate search's answer (requests/s on real time)."""

    rate_max: float | None  # the highest rate that passed
    first_miss: float | None  # the lowest rate that missed above it
    lowest: float | None = None  # the lowest rate probed (for "not even ...")
    start_rate: float
    resolution: float  # the bracket's relative width the search stops at
    converged: bool = False  # the bracket is within `resolution` (else the budget ended)
    goodput_rps: float | None = None  # at rate_max: the requests a second within the SLOs
    attainment: float | None = None  # at rate_max: the fraction within the SLOs


def rate_sentence(answer: AnswerView, rate: RateFields) -> str:
    """The rate answer in one sentence (see `CapacityAnswer.sentence`)."""
    cost = f"{answer.requests} requests in {_duration(answer.elapsed_s)}"
    head = "" if answer.complete else "INCOMPLETE (interrupted): "
    slos = _slos(answer)
    if answer.status == "slo_missed_at_1":
        return (f"{head}{answer.deployment}: no rate meets the SLOs ({slos}), not even "
                f"{_rps(rate.lowest)} ({cost}).")
    if rate.rate_max is None:
        return f"{head}{answer.deployment}: no rate was bracketed ({cost})."
    users = (f"holds {answer.verified_users} users verified (predicted "
             f"{answer.predicted_users} by N = X x (R + Z))" if answer.verified_users
             else f"is predicted to hold {answer.predicted_users} users by N = X x (R + Z) "
             "(not verified)")
    goodput = ""
    if rate.goodput_rps is not None and rate.attainment is not None:
        goodput = f", goodput {_rps(rate.goodput_rps)} ({rate.attainment:.0%} within the SLOs)"
    wide = "" if rate.converged else (f", a bracket wider than {rate.resolution:.0%}: the "
                                      "budget ended first")
    bracket = (f"rate_max {_rps(rate.rate_max)}{goodput}, first miss "
               f"{_rps(rate.first_miss)} on {answer.binding_slo}{wide}"
               if rate.first_miss is not None
               else f"rate_max >= {_rps(rate.rate_max)}{goodput}, not bounded within the "
               "budget")
    scale = "" if answer.time_scale == 1 else f"; simulator at x{answer.time_scale:g}"
    note = f" Note: {answer.users_note}." if answer.users_note else ""
    return (f"{head}{answer.deployment} {users} at think time {answer.slo.think_time_s:g} s; "
            f"{bracket} (open-loop Poisson arrivals; {slos}; {cost}{scale}).{note}")


def _rps(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g} req/s"


def _slos(answer: AnswerView) -> str:
    stat = answer.slo.statistic.upper()
    return f"{stat} TTFT <= {answer.slo.ttft_ms:g} ms, {stat} TPS >= {answer.slo.tps:g}"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
