"""The prefix cache's flags, shared by `run`, `capacity` and `compare`: a workload built for a
hit rate (`--prefix-hit-rate`) and the cache's reset before each level
(`--reset-prefix-cache`). Their checks live in the models (`WorkloadSpec`, `RunConfig`), so
the app and the CLI refuse the same input with the same message, before any load."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from servecap.core.text import printable

PrefixHitRateOption = Annotated[
    float | None,
    typer.Option("--prefix-hit-rate", help="Build prompts an ideal prefix cache serves this "
                 "share of (0..1): --prefix-groups shared prefixes, fresh suffixes; the "
                 "run checks what the server served"),
]
ResetPrefixCacheOption = Annotated[
    str,
    typer.Option("--reset-prefix-cache", help="Empty the server's prefix cache before each "
                 "level: auto (vLLM, SGLang or the simulator, as detected), off or the "
                 "reset endpoint's URL; a failed reset is a warning"),
]
RESET_DEFAULT = "off"
# the RunConfig field these flags set, by name (the hit rate lives in the workload spec)
FLAGS = {"reset_prefix_cache": "--reset-prefix-cache"}


def run_notes(prefix_cache: dict[str, Any]) -> list[str]:
    """The run's prefix-cache lines in the terminal: what the reset did, what the prompts
    were built for (none when the run set neither)."""
    notes = []
    done = prefix_cache.get("reset_done")
    if isinstance(done, str) and done != "off":
        notes.append(f"prefix cache reset before each level: {printable(done)}")
    ideal = prefix_cache.get("hit_rate_ideal")
    if isinstance(ideal, float):
        notes.append(f"prompts built for a prefix-cache hit rate of "
                     f"{prefix_cache.get('hit_rate_target')} (ideal {ideal:.3f}): see "
                     "`servecap plan` for what the server served")
    return notes
