"""The decision in one sentence: which deployment to run and how many users it holds.

Shared by the report's executive summary, `servecap plan`'s table output, the demo's last
lines and the app's results page, so all four say the same thing in the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servecap.core.config import SLO


@dataclass(frozen=True)
class Held:
    """One deployment's capacity under one SLO (what the headline compares)."""

    name: str
    c_max: int | None
    users: int | None
    latency_mean_s: float | None
    lower_bound: bool = False  # every tested level passed: C_max and users may be higher
    # users a `servecap verify` run measured under the same SLO (0: none of the N it tried
    # passed); None: not verified, so `users` is a prediction only
    verified: int | None = None


def c_max_text(c_max: int | None, lower_bound: bool) -> str:
    """`C_max 16`, `C_max >= 64` (every tested level passed) or `C_max none`."""
    if c_max is None:
        return "C_max none"
    return f"C_max >= {c_max}" if lower_bound else f"C_max {c_max}"


def lower_bound_note(c_max: int) -> str:
    return f"C_max >= {c_max}: every tested level passed; test higher"


def users_text(held: Held) -> str:
    if held.users is None:
        return "no users"
    return f">= {held.users}" if held.lower_bound else str(held.users)


def _ms(value: float) -> str:
    return f"{value / 1000:g} s" if value >= 1000 else f"{value:g} ms"


def slo_text(slo: SLO) -> str:
    """`P90 TTFT <= 1 s and TPS >= 15 with 45 s think time`."""
    stat = "P90" if slo.statistic == "p90" else "mean"
    return (
        f"{stat} TTFT <= {_ms(slo.ttft_ms)} and TPS >= {slo.tps:g} "
        f"with {slo.think_time_s:g} s think time"
    )


def ranked(rows: Sequence[Held]) -> list[Held]:
    """Most users first; the larger C_max breaks a tie. Deployments holding none are left out."""
    held = [r for r in rows if r.users is not None]
    return sorted(held, key=lambda r: (r.users or 0, r.c_max or 0), reverse=True)


def headline(rows: Sequence[Held], slo: SLO) -> list[str]:
    """The decision sentence, then (when it applies) why more streams can mean fewer users,
    and that a C_max at the highest tested level is only a lower bound."""
    order = ranked(rows)
    if not order:
        return [
            f"No deployment meets {slo_text(slo)} at any tested level: "
            "test lower levels or relax the SLOs."
        ]
    best = order[0]
    lines = [_decision(best, order[1] if len(order) > 1 else None, slo)]
    more = next((r for r in order[1:] if (r.c_max or 0) > (best.c_max or 0)), None)
    if more is not None:
        lines.append(_more_streams_fewer_users(more, best))
    bounded: dict[int, list[str]] = {}
    for r in order:
        if r.lower_bound and r.c_max:
            bounded.setdefault(r.c_max, []).append(r.name)
    lines += [f"{', '.join(names)}: {lower_bound_note(c)}." for c, names in bounded.items()]
    return lines


def verified_text(held: Held) -> str:
    """`; verified 90 users (measured)`, or nothing for a deployment nobody verified."""
    if held.verified is None:
        return ""
    if held.verified == 0:
        return "; verified: none of the user counts tried passed"
    return f"; verified {held.verified} users (measured)"


def _decision(best: Held, second: Held | None, slo: SLO) -> str:
    # "predicted": Little's law on C_max; a verify run's measured count is named beside it
    text = (
        f"Deploy {best.name}: it holds {users_text(best)} predicted users "
        f"({c_max_text(best.c_max, best.lower_bound)}{verified_text(best)}) at {slo_text(slo)}"
    )
    if second is not None:
        text += f"; runner-up {second.name}, {users_text(second)} predicted"
    return text + "."


def _more_streams_fewer_users(more: Held, best: Held) -> str:
    text = (
        f"{more.name} holds more streams within the SLO ({c_max_text(more.c_max, more.lower_bound)}"
        f" against {best.c_max}) but fewer users ({more.users} against {best.users}), "
        "because its requests take longer"
    )
    if more.latency_mean_s and best.latency_mean_s:
        text += f" (mean latency {more.latency_mean_s:.2f} s against {best.latency_mean_s:.2f} s)"
    return text + ": a stream serves 1 + think time / latency users, fewer when requests are slow."
