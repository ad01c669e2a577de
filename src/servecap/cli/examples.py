"""The examples each command's `--help` ends with: one or two commands a newcomer can copy.

Lines stay within 76 characters so that an 80-column terminal shows each on one line;
`tests/cli/test_help_examples.py` checks that every command has them.
"""

from __future__ import annotations

import typer

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "servecap demo",
        "servecap capacity --base-url http://gpu1:8000/v1 --max-time 15m",
        "servecap run --base-url http://gpu1:8000/v1 --find-cmax --name my-server",
    ),
    "capacity": (
        "servecap capacity --base-url http://gpu1:8000/v1 --max-time 15m",
        "servecap capacity --base-url http://gpu1:8000/v1 --format json --out cap",
    ),
    "run": (
        "servecap run --base-url http://gpu1:8000/v1 --concurrency 1,2,4,8,16",
        "servecap run --base-url http://gpu1:8000/v1 --rate 1,2,4 --duration 60",
    ),
    "show": ("servecap show results/my-server-*", "servecap show results/my-server-* "
             "--format json"),
    "plan": (
        "servecap plan results/ --ttft-slo-ms 1000 --tps-slo 15 --stat p90",
        "servecap plan results/my-server-* --format json",
    ),
    "import": (
        "servecap import aiperf-c*/profile_export_aiperf.json --out results/",
        "servecap import benchmarks.json --out results/",
        "servecap import appendix-a.csv --out seed-runs",
    ),
    "import-summary": (
        "servecap import-summary appendix-a.csv --out seed-runs",
    ),
    "report": (
        "servecap report results/my-server-* --out report/",
        "servecap report results/a-* results/b-* --out report/ --pair b:a",
    ),
    "export": (
        "servecap export results/my-server-* --format br",
        "servecap export results/my-server-* --format parquet --out tables/",
    ),
    "compare": (
        "servecap compare --target a=http://h1:8000/v1 --target b=http://h2:8000/v1",
        "servecap compare --target a=sim:deterministic*2 --target b=sim:deterministic",
    ),
    "demo": ("servecap demo", "servecap demo --full --time-scale 10 --verify-s 0"),
    "verify": (
        "servecap verify results/my-server-* --think-time exp:45 --search-on-miss",
    ),
    "ui": ("servecap ui", "servecap ui --results demo-output --port 8502"),
    "kinds": ("servecap kinds",),
    "version": ("servecap version",),
    "sim": (
        "servecap sim --profile vllm-direct --port 8000",
        "servecap sim predict vllm-direct --concurrency 1,2,4,8,16,32,64",
    ),
    "sim serve": ("servecap sim serve --profile vllm-direct --port 8000",),
    "sim profiles": ("servecap sim profiles",),
    "sim calibrate": ("servecap sim calibrate results/my-server-* --out my-gpu.toml",),
    "sim predict": (
        "servecap sim predict vllm-direct --concurrency 1,2,4,8,16,32,64",
        "servecap sim predict my-gpu.toml --input-tokens 512 --output-tokens 32",
    ),
}


def epilog(name: str) -> str:
    """The help's closing block. `\\b` keeps click from rewrapping the lines."""
    return "Examples:\n\b\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])


def add_examples(app: typer.Typer, prefix: str = "") -> typer.Typer:
    """Set the epilog of `app` and every command and group under it; returns `app`."""
    app.info.epilog = epilog(prefix.strip())
    for command in app.registered_commands:
        name = command.name or (command.callback.__name__ if command.callback else "")
        command.epilog = epilog(f"{prefix}{name}".strip())
    for group in app.registered_groups:
        if group.typer_instance is not None:
            add_examples(group.typer_instance, f"{prefix}{group.name} ")
            group.epilog = group.typer_instance.info.epilog
    return app
