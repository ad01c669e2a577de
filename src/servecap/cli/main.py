"""The `servecap` command: thin commands that build a config, call api, and render."""

from __future__ import annotations

import typer

from servecap.cli.capacity_cmd import capacity
from servecap.cli.command_style import plain_style
from servecap.cli.compare_cmd import compare
from servecap.cli.demo_cmd import demo
from servecap.cli.examples import add_examples
from servecap.cli.export_cmd import export
from servecap.cli.plan_cmd import import_runs, plan, show
from servecap.cli.report_cmd import report
from servecap.cli.run_cmd import run
from servecap.cli.run_flags_load import kinds
from servecap.cli.sim_predict_cmd import predict_cmd
from servecap.cli.ui_cmd import ui
from servecap.cli.verify_cmd import verify_cmd
from servecap.sim import sim_app

app = typer.Typer(
    name="servecap",
    help="Benchmark OpenAI-compatible inference servers and plan capacity from the results.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command()(capacity)
app.command()(run)
app.command()(show)
app.command()(plan)
app.command("import")(import_runs)
app.command("import-summary", help="Alias of `servecap import` (kept for scripts).")(
    import_runs
)
app.command()(report)
app.command()(export)
app.command()(compare)
app.command()(demo)
app.command("verify")(verify_cmd)
app.command()(ui)
app.command()(kinds)
sim_app.command("predict")(predict_cmd)
app.add_typer(sim_app, name="sim")


@app.command()
def version() -> None:
    """Print servecap's version."""
    from servecap import __version__

    print(__version__)


add_examples(app)
plain_style(app)

if __name__ == "__main__":  # pragma: no cover
    app()
