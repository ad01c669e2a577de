"""`--load PREFIX=SPEC`: any registered load kind by its text form, and `servecap kinds`.

Each kind owns its text form (`LoadPlan.from_text`), so a kind added under `kinds/` is
reachable from `run`, `compare` and the app with no flag of its own.
"""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.kinds.registry import KINDS

LoadOption = Annotated[
    str | None,
    typer.Option(
        "--load",
        help="Any load kind by its text form PREFIX=SPEC, e.g. users=50,100 "
        "(`servecap kinds` lists them)",
    ),
]


def kinds() -> None:
    """List the load kinds: each one's levels, its text form for --load, and its model."""
    print(f"{'kind':<10} {'levels':<10} {'--load':<28} model")
    for kind in KINDS.values():
        example = kind.text.example or "(its own flags)"
        print(f"{kind.name:<10} {kind.text.prefix + '=…':<10} {example:<28} {kind.text.mode}")
