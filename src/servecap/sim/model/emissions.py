"""What an engine hands its driver: the token emissions of one step (``model.StepEngine``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple


class Emission(NamedTuple):
    """Tokens one request receives at one event time."""

    rid: int
    tokens: int
    first: bool
    done: bool


class StepEmissions(NamedTuple):
    """One step's emissions in the two phases a driver delivers them in.

    ``first`` are the step's first tokens (they make TTFT, so a driver writes them before it
    even builds the rest); ``rest`` is everything else. Keeping them apart in the type, not
    in an ordering convention, means an engine cannot interleave them and a driver cannot
    count a first token's write as an ordinary chunk's. ``rest`` may be lazy: a driver must
    consume it fully (after ``first``) before it calls ``plan``.
    """

    first: Sequence[Emission]
    rest: Iterable[Emission]

    def all(self) -> list[Emission]:
        """Both phases as one list, first tokens first."""
        return [*self.first, *self.rest]


NO_EMISSIONS = StepEmissions((), ())


__all__ = ["NO_EMISSIONS", "Emission", "StepEmissions"]
