"""SGLang's output lag: a step's tokens wait for the launch of the next step.

SGLang's overlap scheduler processes a batch's results only after it has launched the next
batch. A decode step's launch replays a captured graph and is over at once; an eager
prefill's launch is bound by the CPU and lasts about as long as the prefill runs. So a step
followed by a prefill step delivers its tokens when that prefill step ends, and otherwise
at its own end. Two requests that reach an idle scheduler a millisecond apart are prefilled
one after the other, and the first one's token waits for the second's prefill: the seed's
sglang-direct TTFT doubles from c=1 to c=2 (400 to 772 ms), both requests of a pair alike.

Pure bookkeeping: the engine (``model.StepEngine`` with ``output_lag``) hands over each
finished step's emissions with whether the step it planned next prefills, and delivers what
this returns.
"""

from __future__ import annotations

from servecap.sim.model.emissions import NO_EMISSIONS, StepEmissions


class OutputLag:
    """Holds one step's emissions back while the step after it is a prefill step."""

    def __init__(self) -> None:
        self._held: StepEmissions | None = None

    def release(self, out: StepEmissions, next_prefills: bool) -> StepEmissions:
        """What goes out as a step ends: the step before's held tokens, and this step's
        ``out`` (its ``rest`` already consumed) unless the next step prefills."""
        held, self._held = self._held, None
        if next_prefills:
            self._held, out = out, NO_EMISSIONS
        if held is None:
            return out
        return StepEmissions([*held.first, *out.first], [*held.rest, *out.rest])

    def drop(self, rid: int) -> None:
        """Forget what a cancelled request had held back."""
        if self._held is not None:
            self._held = StepEmissions(
                [e for e in self._held.first if e.rid != rid],
                [e for e in self._held.rest if e.rid != rid],
            )


__all__ = ["OutputLag"]
