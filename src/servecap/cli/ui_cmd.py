"""`servecap ui`: start the Streamlit app (needs the `[ui]` extra)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated

import typer


def streamlit_command(results: Path, port: int, host: str) -> list[str]:
    """The `streamlit run` command line for the app: headless, no usage statistics."""
    app_file = Path(__file__).resolve().parent.parent / "ui" / "app.py"
    return [
        sys.executable, "-m", "streamlit", "run", str(app_file),
        "--server.headless=true",
        f"--server.address={host}",
        f"--server.port={port}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
        "--global.developmentMode=false",
        "--client.toolbarMode=viewer",
        "--",
        "--results", str(results),
    ]


# Where `servecap run` saves by default, then where `servecap demo` does: `servecap ui` with
# no flag, after the demo, shows the demo's runs rather than an empty Results page.
DEFAULT_RESULTS = (Path("results"), Path("demo-output"))


def default_results(cwd: Path) -> Path:
    """The first of DEFAULT_RESULTS that exists under `cwd`, else `results` (created later)."""
    for candidate in DEFAULT_RESULTS:
        if (cwd / candidate).is_dir():
            return candidate
    return DEFAULT_RESULTS[0]


def ui(
    results: Annotated[Path | None, typer.Option(
        help="Directory of saved runs, searched three folders deep (default: ./results, "
             "or ./demo-output after servecap demo).")] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = (
        "127.0.0.1"
    ),
) -> None:
    """Start the browser app: run a benchmark, watch it, plan capacity, compare runs."""
    if importlib.util.find_spec("streamlit") is None:
        typer.echo("servecap ui needs Streamlit: pip install 'servecap[ui]'", err=True)
        raise typer.Exit(2)
    if results is None:
        results = default_results(Path.cwd())
    typer.echo(f"servecap ui on http://{host}:{port} (results in {results})")
    sys.stdout.flush()
    sys.stderr.flush()
    # Streamlit replaces this process (same pid): a SIGTERM from kill, systemd or a
    # container stop reaches Streamlit itself, which shuts down and stops the app's
    # simulator, instead of a parent that dies and leaves the server holding the port.
    command = streamlit_command(results, port, host)
    os.execv(command[0], command)  # noqa: S606 - a fixed argv of our own, no shell wanted
