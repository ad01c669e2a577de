"""Think-time and turn-count specs for sessions of users: parse once, draw seeded.

Think time (seconds a user spends between an answer and its next message):

    exp:MEAN                 exponential with that mean (memoryless: a user population's
                             classic model; MEAN 0 means no thinking)
    fixed:S  or just  S      always S seconds
    lognormal:MEDIAN:SIGMA   log-normal with that median and log-space sigma (heavy right
                             tail, as measured human think times are)
    uniform:LO:HI            uniform between LO and HI

Turns (user messages in one conversation): `N` or `uniform:LO:HI`, whole numbers >= 1,
both ends included; as a cap on a dataset's conversations also `all` (`parse_turn_cap`:
every user turn of the conversation, as recorded).

Contract: parsing is pure and strict. A spec that does not parse, has the wrong number of
values, or holds a negative, non-finite or impossible value (LO above HI, a zero median)
raises `servecap.core.errors.UserInputError` with one message that quotes the spec and says
what is accepted (a `SettingError`: `name` is the setting, which each front end names in
its own words). Draws take the caller's
`random.Random`, so the same seed gives the same sequence; `mean_s` is the distribution's
mean, the Z of the response-time law.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from servecap.core.errors import SettingError, bad_setting

THINK_FORMS = "exp:MEAN, fixed:S, lognormal:MEDIAN:SIGMA or uniform:LO:HI (seconds, >= 0)"
TURN_FORMS = "N or uniform:LO:HI (whole numbers >= 1)"

# Values each think-time kind takes, and their names for messages.
_ARITY: dict[str, tuple[str, ...]] = {
    "exp": ("MEAN",),
    "fixed": ("S",),
    "lognormal": ("MEDIAN", "SIGMA"),
    "uniform": ("LO", "HI"),
}


@dataclass(frozen=True, slots=True)
class ThinkTime:
    """A parsed think-time distribution (seconds)."""

    kind: str
    params: tuple[float, ...]

    def sample(self, rng: random.Random) -> float:
        """One think time drawn from `rng`."""
        if self.kind == "exp":
            mean = self.params[0]
            return rng.expovariate(1.0 / mean) if mean > 0 else 0.0
        if self.kind == "lognormal":
            median, sigma = self.params
            return rng.lognormvariate(math.log(median), sigma)
        if self.kind == "uniform":
            return rng.uniform(*self.params)
        return self.params[0]

    def sample_residual(self, rng: random.Random) -> float:
        """The think time left at a random moment of a long-running population (the
        equilibrium residual, density (1 - F(x)) / mean): a user caught while thinking is
        this far from its next turn. Drawn as U x X with X length-biased (density
        x f(x) / mean): for exp:MEAN that is exponential with the same mean (memoryless),
        for fixed:S uniform on 0..S."""
        return rng.random() * self._sample_length_biased(rng)

    def _sample_length_biased(self, rng: random.Random) -> float:
        if self.kind == "exp":
            mean = self.params[0]
            return rng.gammavariate(2.0, mean) if mean > 0 else 0.0
        if self.kind == "lognormal":  # length-biased lognormal: mu + sigma^2, same sigma
            median, sigma = self.params
            return rng.lognormvariate(math.log(median) + sigma * sigma, sigma)
        if self.kind == "uniform":  # inverse of F(x) = (x^2 - LO^2) / (HI^2 - LO^2)
            low, high = self.params
            return math.sqrt(low * low + rng.random() * (high * high - low * low))
        return self.params[0]

    @property
    def mean_s(self) -> float:
        """The distribution's mean in seconds."""
        if self.kind == "lognormal":
            median, sigma = self.params
            return median * math.exp(sigma * sigma / 2.0)
        if self.kind == "uniform":
            return (self.params[0] + self.params[1]) / 2.0
        return self.params[0]

    def __str__(self) -> str:
        return ":".join([self.kind, *map(_format, self.params)])

    def scaled(self, factor: float) -> ThinkTime:
        """The same shape with every time multiplied by `factor` (a lognormal's sigma is a
        shape, not a time)."""
        if self.kind == "lognormal":
            return ThinkTime(self.kind, (self.params[0] * factor, self.params[1]))
        return ThinkTime(self.kind, tuple(p * factor for p in self.params))


@dataclass(frozen=True, slots=True)
class TurnCount:
    """A parsed number of user turns per conversation, `low` to `high` inclusive."""

    low: int
    high: int

    def sample(self, rng: random.Random) -> int:
        """One conversation's turn count drawn from `rng`."""
        return self.low if self.low == self.high else rng.randint(self.low, self.high)

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2.0

    def __str__(self) -> str:
        return str(self.low) if self.low == self.high else f"uniform:{self.low}:{self.high}"


def _format(value: float) -> str:
    """Shortest text that reads back as `value` (45, not 45.0; 0.1, not 0.10000000000000001)."""
    return str(int(value)) if value.is_integer() else repr(value)


def _number(raw: str, spec: str, name: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise bad_setting(name, f"{spec!r}: {raw!r} is not a number; use {THINK_FORMS}") from None
    if not math.isfinite(value):
        raise bad_setting(name, f"{spec!r}: values must be finite; use {THINK_FORMS}")
    if value < 0:
        raise bad_setting(name, f"{spec!r}: values must not be negative; use {THINK_FORMS}")
    return value


def _unknown(spec: str, name: str) -> SettingError:
    return bad_setting(name, f"{spec!r} is not understood; use {THINK_FORMS}")


def parse_think_time(text: str, name: str = "think_time") -> ThinkTime:
    """Parse a think-time spec (see the module docstring); bad specs raise UserInputError."""
    spec = text.strip()
    kind, _, rest = spec.partition(":")
    kind = kind.lower()
    if kind not in _ARITY:
        if rest or not _looks_numeric(spec):
            raise _unknown(spec, name)
        return ThinkTime("fixed", (_number(spec, spec, name),))
    names = _ARITY[kind]
    raw = rest.split(":") if rest else []
    if len(raw) != len(names):
        form = ":".join([kind, *names])
        count = f"{len(names)} value" + ("s" if len(names) > 1 else "")
        raise bad_setting(name, f"{spec!r}: {kind} takes {count}, as {form}")
    params = tuple(_number(r.strip(), spec, name) for r in raw)
    _check_shape(kind, params, spec, name)
    return ThinkTime(kind, params)


def _looks_numeric(spec: str) -> bool:
    try:
        float(spec)
    except ValueError:
        return False
    return True


def _check_shape(kind: str, params: tuple[float, ...], spec: str, name: str) -> None:
    if kind == "lognormal" and params[0] <= 0:
        raise bad_setting(name, f"{spec!r}: MEDIAN must be above 0 (for none use fixed:0)")
    if kind == "uniform" and params[0] > params[1]:
        raise bad_setting(name, f"{spec!r}: LO must not exceed HI")


def _whole(raw: str, spec: str, name: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise bad_setting(name, f"{spec!r} is not understood; use {TURN_FORMS}") from None
    if value < 1:
        raise bad_setting(name, f"{spec!r}: a conversation needs at least 1 turn")
    return value


def parse_turns(text: str, name: str = "turns") -> TurnCount:
    """Parse a turn-count spec, `N` or `uniform:LO:HI`; bad specs raise UserInputError."""
    spec = text.strip()
    kind, _, rest = spec.partition(":")
    if not rest:
        count = _whole(spec, spec, name)
        return TurnCount(count, count)
    bounds = rest.split(":")
    if kind.lower() != "uniform" or len(bounds) != 2:
        raise bad_setting(name, f"{spec!r} is not understood; use {TURN_FORMS}")
    low, high = (_whole(b, spec, name) for b in bounds)
    if low > high:
        raise bad_setting(name, f"{spec!r}: LO must not exceed HI")
    return TurnCount(low, high)


ALL_TURNS = "all"


def parse_turn_cap(text: str, name: str = "turns") -> TurnCount | None:
    """A cap on a dataset conversation's user turns: `all` (None: every turn) or a turn spec."""
    if text.strip().lower() == ALL_TURNS:
        return None
    return parse_turns(text, name)
