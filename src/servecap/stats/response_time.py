"""The response-time law for N users who think between requests, as pure functions.

A closed population of N users, each alternating a request (mean response time R, seconds)
and a think (mean Z, seconds), completes X = N / (R + Z) requests a second and keeps
X * R = N * R / (R + Z) requests in flight on average (Little's law on the server alone).
Inverted: a throughput X needs N = X * (R + Z) users, and C concurrent streams at mean latency
R serve N = C * (1 + Z / R) users (DESIGN's predicted users, `capacity.users_by_littles_law`).

These relate MEANS: they hold for any think-time distribution, but say nothing about the tail.
With random think times the in-flight count fluctuates around X * R, so a tail SLO that a
steady C_max meets can fail at the predicted N; that is what `servecap verify` measures.

Contract: all quantities are non-negative floats in requests, requests/s and seconds; results
are unrounded floats (callers round where they present a user count). Impossible inputs
(negative values, or a zero where the law divides by it) raise `ValueError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _non_negative(**values: float) -> None:
    for name, value in values.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {value}")


def throughput(users: float, response_s: float, think_s: float) -> float:
    """X = N / (R + Z): requests a second that N users complete."""
    _non_negative(users=users, response_s=response_s, think_s=think_s)
    if response_s + think_s <= 0:
        raise ValueError("response time plus think time must be positive")
    return users / (response_s + think_s)


def mean_concurrency(throughput_rps: float, response_s: float) -> float:
    """X * R: the mean number of requests in flight (Little's law)."""
    _non_negative(throughput_rps=throughput_rps, response_s=response_s)
    return throughput_rps * response_s


def concurrency_for_users(users: float, response_s: float, think_s: float) -> float:
    """N * R / (R + Z): the mean in-flight count N users keep."""
    return mean_concurrency(throughput(users, response_s, think_s), response_s)


def users_for_throughput(throughput_rps: float, response_s: float, think_s: float) -> float:
    """N = X * (R + Z): the users that produce a throughput X."""
    _non_negative(throughput_rps=throughput_rps, response_s=response_s, think_s=think_s)
    return throughput_rps * (response_s + think_s)


def users_for_concurrency(concurrency: float, response_s: float, think_s: float) -> float:
    """N = C * (1 + Z / R): the users C streams at mean latency R serve."""
    _non_negative(concurrency=concurrency, response_s=response_s, think_s=think_s)
    if response_s <= 0:
        raise ValueError("mean latency must be positive")
    return users_for_throughput(concurrency / response_s, response_s, think_s)


def concurrency_quantile(users: int, response_s: float, think_s: float, q: float) -> int:
    """The q-quantile (0 < q < 1) of the in-flight count N users keep, if nothing queues.

    Each of N independent users is in a request a fraction p = R / (R + Z) of the time, so
    the in-flight count is Binomial(N, p) (exact for a server that never queues, whatever the
    think-time and latency distributions). Its spread is why N users at mean concurrency
    C_max push the P90 tail past what a steady C_max showed: at N = 400, p = 0.1 the mean is
    40 but the 90th percentile is 48.
    """
    if users < 0 or not 0.0 < q < 1.0:
        raise ValueError(f"need users >= 0 and 0 < q < 1, got users={users}, q={q}")
    p = concurrency_for_users(users, response_s, think_s) / users if users else 0.0
    if p <= 0.0 or p >= 1.0:
        return round(p * users)
    log_p, log_1p = math.log(p), math.log1p(-p)
    total = 0.0
    for k in range(users + 1):
        log_pmf = (
            math.lgamma(users + 1) - math.lgamma(k + 1) - math.lgamma(users - k + 1)
            + k * log_p + (users - k) * log_1p
        )
        total += math.exp(log_pmf)
        if total >= q:
            return k
    return users


@dataclass(frozen=True, slots=True)
class LawCheck:
    """A sessions level's measured concurrency held against the law's prediction."""

    users: int
    response_mean_s: float
    think_mean_s: float
    predicted_concurrency: float
    measured_concurrency: float
    predicted_throughput_rps: float

    @property
    def error(self) -> float:
        """(measured - predicted) / predicted; 0.05 means 5% more in flight than predicted."""
        if self.predicted_concurrency == 0:
            return 0.0 if self.measured_concurrency == 0 else math.inf
        return (self.measured_concurrency - self.predicted_concurrency) / (
            self.predicted_concurrency
        )


def check_law(
    users: int, response_mean_s: float, think_mean_s: float, measured_concurrency: float
) -> LawCheck:
    """Compare a level's measured mean concurrency with N * R / (R + Z) from its own R and Z.

    R and Z are the level's measured means (latency of successful requests, think times the
    users actually drew), so the check tests the run, not the distribution it was asked for.
    """
    _non_negative(measured_concurrency=measured_concurrency)
    x = throughput(users, response_mean_s, think_mean_s)
    return LawCheck(
        users=users,
        response_mean_s=response_mean_s,
        think_mean_s=think_mean_s,
        predicted_concurrency=mean_concurrency(x, response_mean_s),
        measured_concurrency=measured_concurrency,
        predicted_throughput_rps=x,
    )


def relative_error(predicted: float, measured: float) -> float:
    """(predicted - measured) / measured: how far a prediction was off, e.g. users 430 vs 380."""
    if measured == 0:
        raise ValueError("cannot take a relative error against zero")
    return (predicted - measured) / measured
