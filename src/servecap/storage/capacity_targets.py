"""`capacity.json` of `servecap capacity --target A=URL --target B=URL`: several deployments'
answers, the probes' interleaved order, and each capacity delta with its interval.

Each target's own answer is an ordinary `capacity.json` in `OUT/NAME/` (its runs under
`OUT/NAME/runs/`), so every view that reads one deployment's answer reads it unchanged; the
file at `OUT/capacity.json` embeds them and adds the deltas. A target's C_max lies in its
bracket [last pass, first miss - 1] when the verdicts that set it are right (each at the
stated confidence); the delta's interval is interval arithmetic on the two brackets, as
`compare` does for its users difference (`stats.difference.interval_difference`), and its
high end is open (None) where a search ended before a miss bounded its target.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from servecap.core.errors import DataFormatError
from servecap.stats.difference import Bounds, interval_difference
from servecap.storage.capacity_answer import ANSWER_FILE, CapacityAnswer
from servecap.storage.safe_files import make_dir, read_text_file, write_atomic

UNDECIDED = "undecided"


class ProbeTurn(BaseModel):
    """One probe in the order the targets took turns (warm-up in the first one's turn)."""

    target: str
    concurrency: int


class CapacityDelta(BaseModel):
    """B - A in C_max (streams) with its interval, and in users (point only)."""

    a: str
    b: str
    c_max: float | None  # the point difference (None: a target has no C_max)
    low: float | None
    high: float | None  # None: open (b's search was not bounded); low None: a's was not
    users: int | None = None
    users_basis: Literal["verified", "predicted"] | None = None
    better: str = UNDECIDED  # a's or b's name where the interval excludes 0

    def interval_text(self) -> str:
        high = "+inf" if self.high is None else f"{self.high:+g}"
        low = "-inf" if self.low is None else f"{self.low:+g}"
        return f"{low}..{high}"


class CapacityTargetsAnswer(BaseModel):
    """What `servecap capacity` found for two or more deployments, probed in turn."""

    kind: Literal["servecap-capacity-targets"] = "servecap-capacity-targets"
    complete: bool = True
    targets: list[CapacityAnswer]
    urls: dict[str, str]  # each target's base URL, without credentials
    order: list[ProbeTurn]
    deltas: list[CapacityDelta]  # every other target against the first
    winner: str | None  # the target whose bracket lies above every other's
    verified: str  # which targets' users were run: "every target" or "none"
    requests: int
    elapsed_s: float

    def sentence(self) -> str:
        """The comparison in one sentence: the winner (or none), each C_max, each delta."""
        head = "" if self.complete else "INCOMPLETE (interrupted): "
        lead = (f"{self.winner} has the higher capacity" if self.winner
                else "no target's capacity is clearly higher")
        caps = "; ".join(f"{t.deployment} C_max {_bracket(t)}" for t in self.targets)
        deltas = "; ".join(
            f"{d.b} - {d.a} = {_signed(d.c_max)} streams (interval {d.interval_text()})"
            + (f", {d.users:+d} users {d.users_basis}" if d.users is not None else "")
            for d in self.deltas)
        return (f"{head}{lead}: {caps}; {deltas} (probes interleaved between the targets; "
                f"users verified: {self.verified}; {self.requests} requests in "
                f"{self.elapsed_s:.0f} s).")

    def exit_code(self) -> int:
        """The highest of the targets' own codes: 0 only when every target was found."""
        return max(t.exit_code() for t in self.targets)


def _signed(value: float | None) -> str:
    return "?" if value is None else f"{value:+g}"


def _bracket(answer: CapacityAnswer) -> str:
    low, high = bracket(answer)
    top = "unbounded" if math.isinf(high) else f"{high:g}"
    return f"{answer.c_max or 0} [{low:g}..{top}]"


def bracket(answer: CapacityAnswer) -> tuple[float, float]:
    """[last pass, first miss - 1]; 0 where nothing passed, infinity where no miss."""
    low = float(answer.c_max or 0)
    if answer.status == "slo_missed_at_1":
        return 0.0, 0.0
    high = float(answer.first_miss - 1) if answer.first_miss is not None else math.inf
    return low, max(low, high)


def capacity_delta(a: CapacityAnswer, b: CapacityAnswer) -> CapacityDelta:
    """B - A on C_max with its interval; the users difference where both have users."""
    (a_low, a_high), (b_low, b_high) = bracket(a), bracket(b)
    diff = interval_difference(Bounds(a_low, a_low, a_high), Bounds(b_low, b_low, b_high))
    better = b.deployment if diff.low > 0 else a.deployment if diff.high < 0 else UNDECIDED
    users, basis = _users_difference(a, b)
    return CapacityDelta(
        a=a.deployment, b=b.deployment, c_max=diff.estimate,
        low=None if math.isinf(diff.low) else diff.low,
        high=None if math.isinf(diff.high) else diff.high,
        users=users, users_basis=basis, better=better,
    )


def _users_difference(
    a: CapacityAnswer, b: CapacityAnswer
) -> tuple[int | None, Literal["verified", "predicted"] | None]:
    if a.verified_users and b.verified_users:
        return b.verified_users - a.verified_users, "verified"
    if a.predicted_users and b.predicted_users:
        return b.predicted_users - a.predicted_users, "predicted"
    return None, None


def winner(answers: list[CapacityAnswer]) -> str | None:
    """The target whose bracket's low end is above every other's high end, if one is."""
    for answer in answers:
        low = bracket(answer)[0]
        if answer.c_max and all(low > bracket(o)[1] for o in answers if o is not answer):
            return answer.deployment
    return None


def write_targets_answer(out_dir: Path, answer: CapacityTargetsAnswer) -> Path:
    make_dir(out_dir)
    return write_atomic(out_dir / ANSWER_FILE, answer.model_dump_json(indent=2) + "\n")


def load_targets_answer(out_dir: Path) -> CapacityTargetsAnswer | None:
    """`out_dir/capacity.json` when it is a several-target answer, else None."""
    path = out_dir / ANSWER_FILE
    if not path.is_file():
        return None
    try:
        return CapacityTargetsAnswer.model_validate_json(
            read_text_file(path, "capacity answer"))
    except (ValueError, DataFormatError):
        return None


def targets_answer_for(run_dir: Path) -> CapacityTargetsAnswer | None:
    """The several-target answer a run belongs to: its runs are `OUT/NAME/runs/RUN`."""
    answer = load_targets_answer(run_dir.parent.parent.parent)
    if answer is None:
        return None
    mine = {Path(p).name for t in answer.targets for p in (t.probe_run, t.users_run) if p}
    return answer if run_dir.name in mine else None


def probe_runs(out_dir: Path) -> list[Path]:
    """The probe runs of a several-target answer in `out_dir` (none if it is not one)."""
    answer = load_targets_answer(out_dir)
    if answer is None:
        return []
    return [Path(t.probe_run) for t in answer.targets if t.probe_run]
