"""`servecap ui`: start the Streamlit app (needs the `[ui]` extra)."""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
from pathlib import Path
from typing import Annotated

import typer

from servecap.cli.common import user_errors
from servecap.core.errors import UserInputError
from servecap.core.text import printable


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


def check_address(host: str, port: int) -> None:
    """The app can listen at `host:port`: a bad host or a port in use is bad input (exit 2),
    said here, not as Streamlit's traceback after the exec."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, ValueError) as exc:
        raise UserInputError(f"invalid --host {printable(host)!r}: {exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise UserInputError(
                f"cannot listen on {printable(host)}:{port}: {exc.strerror or exc}"
                " (another app on that port? use --port)"
            ) from None


@user_errors
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
    check_address(host, port)
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
