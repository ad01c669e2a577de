"""Token-length distributions for synthetic requests, parsed from `--input-tokens` specs.

Contract:
- `parse_length_spec(text, role)` accepts `N`, `uniform:LO:HI` (integers, both ends
  included), `normal:MEAN:SD`, `lognormal:MEDIAN:SIGMA` (the median of the lengths and the
  sigma of their logarithm) and `trace:FILE` (the empirical lengths of a trace file, any
  format `workload.traces` reads: its input lengths for `role="input"`, its output lengths
  for `role="output"`). Anything else raises one `UserInputError` that names the flag, the
  spec and the accepted forms.
- `LengthDist.sample(n, rng)` draws `n` int64 lengths from a numpy `Generator`, rounded to
  whole tokens and clipped to >= 1 (and to `MAX_TOKENS`); the same seed gives the same
  lengths. `mean` is the distribution's mean before clipping (for reports and checks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from servecap.core.errors import UserInputError, bad_setting
from servecap.workload.traces import MAX_TOKENS, read_trace

Role = Literal["input", "output"]
FORMS = "N, uniform:LO:HI, normal:MEAN:SD, lognormal:MEDIAN:SIGMA or trace:FILE"


@dataclass(frozen=True, slots=True)
class LengthDist:
    """A distribution of token lengths; `spec` is the text it was parsed from."""

    spec: str
    kind: str
    a: float = 0.0
    b: float = 0.0
    values: np.ndarray | None = None  # the empirical lengths of `trace:`

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """`n` lengths, whole tokens, each in 1..MAX_TOKENS."""
        if self.kind == "fixed":
            raw = np.full(n, self.a)
        elif self.kind == "uniform":
            raw = rng.integers(int(self.a), int(self.b), n, endpoint=True)
        elif self.kind == "normal":
            raw = rng.normal(self.a, self.b, n)
        elif self.kind == "lognormal":
            raw = rng.lognormal(math.log(self.a), self.b, n)
        else:
            assert self.values is not None
            raw = rng.choice(self.values, n, replace=True)
        return np.clip(np.rint(raw), 1, MAX_TOKENS).astype(np.int64)

    @property
    def mean(self) -> float:
        """The mean length before rounding and clipping."""
        if self.kind == "fixed" or self.kind == "normal":
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "lognormal":
            return self.a * math.exp(self.b**2 / 2)
        assert self.values is not None
        return float(self.values.mean())


def parse_length_spec(text: str, role: Role = "input") -> LengthDist:
    """The distribution `text` names; `role` says which flag it came from."""
    flag = f"--{role}-tokens"
    spec = text.strip()
    kind, colon, rest = spec.partition(":")
    if not colon:
        return LengthDist(spec, "fixed", _count(flag, spec, kind))
    if kind == "trace":
        return _trace_lengths(flag, spec, rest, role)
    parts = rest.split(":")
    if kind not in ("uniform", "normal", "lognormal") or len(parts) != 2:
        raise _bad(flag, spec, "unknown form")
    if kind == "uniform":
        lo, hi = (_count(flag, spec, part) for part in parts)
        if lo > hi:
            raise _bad(flag, spec, f"LO {lo} is above HI {hi}")
        return LengthDist(spec, kind, lo, hi)
    centre, spread = (_real(flag, spec, part) for part in parts)
    if kind == "lognormal" and centre <= 0:
        raise _bad(flag, spec, "the MEDIAN must be > 0")
    if kind == "normal" and centre < 1:
        raise _bad(flag, spec, "the MEAN must be >= 1")
    return LengthDist(spec, kind, centre, spread)


def parse_count_spec(text: str, setting: str) -> LengthDist:
    """A distribution of whole counts >= 1 in the lengths' forms but `trace:` (an agent's
    depth, a tool result's tokens); errors name `setting` (a `SettingError`)."""
    if text.strip().partition(":")[0] == "trace":
        raise bad_setting(setting, f"{text.strip()!r}: expected {COUNT_FORMS}")
    try:
        return parse_length_spec(text)
    except UserInputError as exc:
        # the lengths' message names their flag: keep only what follows the spec
        why = str(exc).split(": ", 1)[-1].rsplit("; expected", 1)[0]
        raise bad_setting(setting, f"{text.strip()!r}: {why}; expected {COUNT_FORMS}") from None


COUNT_FORMS = "N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA"


def _count(flag: str, spec: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _bad(flag, spec, f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_TOKENS:
        raise _bad(flag, spec, f"{value} is not in 1..{MAX_TOKENS}")
    return value


def _real(flag: str, spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _bad(flag, spec, f"{text!r} is not a number") from None
    if not (math.isfinite(value) and 0 <= value <= MAX_TOKENS):
        raise _bad(flag, spec, f"{text!r} is not in 0..{MAX_TOKENS}")
    return value


def _trace_lengths(flag: str, spec: str, path: str, role: Role) -> LengthDist:
    if not path:
        raise _bad(flag, spec, "trace: needs a file")
    trace = read_trace(path)
    values = trace.input_tokens if role == "input" else trace.output_tokens
    return LengthDist(spec, "trace", values=values)


def _bad(flag: str, spec: str, why: str) -> UserInputError:
    return UserInputError(f"{flag} {spec!r}: {why}; expected {FORMS}")
