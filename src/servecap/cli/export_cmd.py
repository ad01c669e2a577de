"""`servecap export`: a stored run as BR v0.2.1 partials, or as Parquet/CSV tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from servecap.cli.common import out_dir, user_errors
from servecap.core.text import printable

FORMAT_HELP = (
    "br (llm-d Benchmark Report v0.2.1 partials, one a level), parquet or csv (requests "
    "and level summaries as two tables; parquet needs pyarrow)"
)


@user_errors
def export(
    run: Annotated[Path, typer.Argument(help="A run directory")],
    format: Annotated[str, typer.Option("--format", help=FORMAT_HELP)],
    out: Annotated[Path | None, typer.Option(
        "--out", parser=out_dir,
        help="Directory to write into (default: the run's br/ or tables/)")] = None,
) -> None:
    """Write a stored run in another format: BR v0.2.1 partials, or Parquet/CSV tables."""
    from servecap.api.stored.export import export_run

    for path in export_run(run, format, out):
        print(printable(str(path)))
