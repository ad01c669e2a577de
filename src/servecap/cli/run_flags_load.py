"""`--load PREFIX=SPEC`: any registered load kind by its text form, and `servecap kinds`.

Each kind owns its text form (`LoadPlan.from_text`), so a kind added under `kinds/` is
reachable from `run`, `compare` and the app with no flag of its own.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error
from servecap.kinds.base import LoadPlan
from servecap.kinds.registry import KINDS, load_from_text

LoadOption = Annotated[
    str | None,
    typer.Option(
        "--load",
        help="Any load kind by its text form PREFIX=SPEC, e.g. users=50,100 "
        "(`servecap kinds` lists them)",
    ),
]


def any_load(text: str | None, seed: int, others: dict[str, object]) -> LoadPlan | None:
    """The plan `--load` names (None without it); it is a load model of its own, so any
    other load flag given with it is refused, as is a text no kind reads."""
    if text is None:
        return None
    given = next((flag for flag, value in others.items() if value is not None), None)
    if given is not None:
        raise UserInputError(f"--load and {given} are two load models; give one of them")
    try:
        return load_from_text(text, seed)
    except ValidationError as exc:
        raise user_input_error(exc, {}, whole="--load") from None


def kinds() -> None:
    """List the load kinds: each one's levels, its text form for --load, and its model."""
    print(f"{'kind':<10} {'levels':<10} {'--load':<28} model")
    for kind in KINDS.values():
        example = kind.text.example or "(its own flags)"
        print(f"{kind.name:<10} {kind.text.prefix + '=…':<10} {example:<28} {kind.text.mode}")
