"""The flags that choose a run's load and what it sends, shared by `run` and `compare`.

Every load model has its own flags (`--concurrency`, `--rate`, `--users`, `--trace`) and
any kind has its text form (`--load`); the workload flags (`--dataset`, length
distributions, `--prefix-tokens`) shape what each request holds. One function turns them
into the run's config fields, so both commands accept the same loads with the same rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servecap.api.run.workload_options import WorkloadFlags, config_fields
from servecap.cli import run_flags_load as lf
from servecap.cli import run_flags_open as op
from servecap.cli import run_flags_sessions as sf
from servecap.core.errors import UserInputError


@dataclass(frozen=True)
class LoadFlags:
    """The load and workload flags as typed."""

    workload: WorkloadFlags
    endpoint: str
    seed: int
    concurrency: str | None = None
    users: str | None = None
    think_time: str = sf.DEFAULTS.think
    turns: str | None = None
    ramp_s: float = sf.DEFAULTS.ramp_s
    duration: float | None = None  # one flag: sessions' and the open loop's
    rate: str | None = None
    arrival: str = "poisson"
    burstiness: float = 1.0
    requests: int | None = None
    max_concurrency: int | None = None
    warmup_s: float | None = None
    cooldown_s: float | None = None
    load: str | None = None

    def others(self) -> dict[str, object]:
        """The load models' own flags, by name, as given (None: not given)."""
        return {"--concurrency": self.concurrency, "--users": self.users,
                "--rate": self.rate, "--trace": self.workload.trace}

    def other_than_closed(self) -> str | None:
        """The first flag of a load model that is not the concurrency sweep, if any."""
        given = {**self.others(), "--load": self.load}
        return next((f for f, v in given.items() if f != "--concurrency" and v is not None),
                    None)


def check_one_load_model(flags: LoadFlags) -> None:
    """Refuse flags of two load models at once (a trace sets its own schedule)."""
    if flags.workload.trace is not None:
        for flag in ("--concurrency", "--users", "--rate"):
            if flags.others()[flag] is not None:
                raise UserInputError(f"--trace sets its own schedule: drop {flag}")
    if flags.rate is not None and flags.users is not None:
        raise UserInputError("--rate and --users are two load models; give one of them")


def check_no_flag_ignored(flags: LoadFlags) -> None:
    """Refuse a flag the chosen load model would not use: it was silently ignored before
    (`--requests` in a closed loop, `--think-time` without `--users`, ...)."""
    unused: list[tuple[str, bool, str]] = [
        ("--requests", flags.requests is not None and flags.rate is None, "--rate"),
        ("--max-concurrency", flags.max_concurrency is not None and flags.rate is None,
         "--rate"),
        ("--arrival", flags.arrival != "poisson" and flags.rate is None, "--rate"),
        ("--burstiness", flags.burstiness != 1.0 and flags.arrival != "gamma",
         "--arrival gamma"),
        ("--think-time", flags.think_time != sf.DEFAULTS.think and flags.users is None,
         "--users"),
        ("--turns", flags.turns is not None and flags.users is None, "--users"),
    ]
    for flag, ignored, needs in unused:
        if ignored and flags.load is None:
            raise UserInputError(f"{flag} needs {needs}; without it the flag does nothing")


def plan_fields(flags: LoadFlags) -> dict[str, Any]:
    """RunConfig fields for these flags: input/output tokens, `workload` and `load` (None:
    the closed sweep of `--concurrency`). Bad input raises UserInputError before any load."""
    check_one_load_model(flags)
    check_no_flag_ignored(flags)
    chosen = lf.any_load(flags.load, flags.seed, flags.others())
    fields = config_fields(flags.workload)
    given_c = flags.concurrency is not None
    sessions = sf.sessions_load(
        dict(users=flags.users, think_time=flags.think_time, turns=flags.turns,
             ramp_s=flags.ramp_s, duration=None if flags.rate is not None else flags.duration,
             dataset=flags.workload.dataset),
        given_c, flags.endpoint, flags.seed,
    )
    open_plan = op.open_load(
        dict(rate=flags.rate, arrival=flags.arrival, burstiness=flags.burstiness,
             duration=flags.duration, requests=flags.requests,
             max_concurrency=flags.max_concurrency, warmup_s=flags.warmup_s,
             cooldown_s=flags.cooldown_s),
        given_c, flags.seed,
    )
    replay = fields.pop("load", None)
    fields["load"] = next((p for p in (chosen, open_plan, sessions, replay) if p is not None),
                          None)
    return fields
