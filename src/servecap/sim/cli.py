"""``servecap sim``: serve a simulated inference server, calibrate profiles, list profiles.

``servecap sim --profile NAME`` and ``servecap sim serve --profile NAME`` both serve (the
group's callback serves when no subcommand is given). Bad input prints one line to stderr
and exits with code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer
from pydantic import ValidationError

from servecap.sim.model.params import ModelParams
from servecap.sim.profiles import Profile, ProfileError, builtin_names, load_profile

sim_app = typer.Typer(
    name="sim",
    help="A simulated OpenAI-compatible inference server (no GPU needed).",
    no_args_is_help=False,
    add_completion=False,
)

PROFILE_HELP = "Built-in profile name (see `servecap sim profiles`) or a .toml/.json file."
SCALE_HELP = "Run the model this many times faster than real time (stated in /version)."
CACHE_HELP = "Prefix caching on or off (default: the profile's; the seed profiles' is off)."
KV_HELP = "KV budget in tokens (default: the profile's); a prefix cache lives in it."
WARMUP_HELP = "Warm-up: the server's first S seconds run slower (default: the profile's)."
WARMUP_FACTOR_HELP = "Warm-up: how many times slower a step is at start, decaying to 1 (>= 1)."
TOOLS_HELP = (
    "How often a chat request with tools and tool_choice auto is answered with a tool call, "
    "0..1 (default: the profile's, 0); tool_choice required or a named function always is."
)
DRIFT_HELP = "Drift: steps grow this fraction slower per minute of uptime (0.01 = 1%/min)."
SLOTS_HELP = "The engine's sequence slots (e.g. llama-server -np, vLLM --max-num-seqs)."
ENGINES = ("generic", "llama.cpp")
ENGINE_HELP = (
    "The base to fit from, when not --base: generic (continuous batching), or "
    "llama.cpp (llama-server on a CPU: a decode step that stops growing past a few "
    "sequences, slots that step together)."
)
SLO_HELP = (
    "The TTFT objective (ms) you will ask C_max at (default 1000, servecap's): the fit "
    "keeps each level's P90 TTFT on the side of it that was measured."
)
SOURCES_HELP = (
    "summary.json, run directories or CSVs; runs of other prompt/output lengths (e.g. 128/128 "
    "and 512/32) make one fit that tells a prompt's fixed cost from its cost per token."
)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def _profile(name_or_path: str) -> Profile:
    try:
        return load_profile(name_or_path)
    except ProfileError as exc:
        _fail(str(exc))


def _with_overrides(
    profile: Profile, prefix_caching: str | None, kv_budget: int | None,
    slowdown: dict[str, float | None] | None = None,
) -> Profile:
    """The profile with `--prefix-caching` / `--kv-budget-tokens` and the warm-up and drift
    options (``slowdown``: parameter name -> value, None where not given) applied."""
    update: dict[str, object] = _slowdown_update(slowdown or {})
    if prefix_caching is not None:
        if prefix_caching not in ("on", "off"):
            _fail(f"--prefix-caching must be on or off, not {prefix_caching!r}")
        if profile.params.fixed:
            _fail(f"profile {profile.name} has a fixed schedule: it models no prefix cache")
        update["prefix_caching"] = prefix_caching == "on"
    if kv_budget is not None:
        if kv_budget < 1:
            _fail(f"--kv-budget-tokens must be >= 1, not {kv_budget}")
        update["kv_budget_tokens"] = kv_budget
    if not update:
        return profile
    try:  # validated: a bad warm-up factor is refused here, not on the first request
        params = ModelParams.model_validate({**profile.params.model_dump(), **update})
    except ValidationError as exc:
        _fail(exc.errors()[0]["msg"])
    return profile.model_copy(update={"params": params})


def _slowdown_update(slowdown: dict[str, float | None]) -> dict[str, object]:
    """The warm-up and drift options that were given, checked."""
    update: dict[str, object] = {}
    for name, value in slowdown.items():
        if value is None:
            continue
        if not value >= (1.0 if name == "warmup_factor" else 0.0):  # also NaN
            flag = "--" + name.replace("_", "-")
            _fail(f"{flag} must be >= {1 if name == 'warmup_factor' else 0}, not {value}")
        update[name] = value
    return update


def _serve(
    profile_name: str,
    host: str,
    port: int,
    time_scale: float,
    prefix_caching: str | None = None,
    kv_budget: int | None = None,
    slowdown: dict[str, float | None] | None = None,
    tool_calls: float | None = None,
) -> None:
    if not 0 <= port <= 65535:
        _fail(f"--port must be 0..65535, not {port}")
    if not time_scale > 0:
        _fail(f"--time-scale must be > 0, not {time_scale}")
    profile = _with_overrides(_profile(profile_name), prefix_caching, kv_budget, slowdown)
    if tool_calls is not None:
        if not 0 <= tool_calls <= 1:  # also NaN
            _fail(f"--tool-call-probability must be in 0..1, not {tool_calls}")
        profile = profile.model_copy(update={"tool_call_probability": tool_calls})
    from servecap.sim.server.runner import serve

    typer.echo(
        f"servecap sim: profile {profile.name} on http://{host}:{port}/v1 "
        f"(time scale {time_scale:g}x); Ctrl-C stops",
        err=True,
    )
    try:
        serve(profile, host=host, port=port, time_scale=time_scale)
    except OSError as exc:
        _fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")


@sim_app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    profile: str = typer.Option("vllm-direct", "--profile", "-p", help=PROFILE_HELP),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port"),
    time_scale: float = typer.Option(1.0, "--time-scale", help=SCALE_HELP),
    prefix_caching: str | None = typer.Option(None, "--prefix-caching", help=CACHE_HELP),
    kv_budget: int | None = typer.Option(None, "--kv-budget-tokens", help=KV_HELP),
    warmup_s: float | None = typer.Option(None, "--warmup-s", help=WARMUP_HELP),
    warmup_factor: float | None = typer.Option(None, "--warmup-factor", help=WARMUP_FACTOR_HELP),
    drift_per_min: float | None = typer.Option(None, "--drift-per-min", help=DRIFT_HELP),
    tool_calls: float | None = typer.Option(None, "--tool-call-probability", help=TOOLS_HELP),
) -> None:
    """Serve the simulator when no subcommand is given."""
    if ctx.invoked_subcommand is None:
        slowdown = {"warmup_s": warmup_s, "warmup_factor": warmup_factor,
                    "drift_per_min": drift_per_min}  # fmt: skip
        _serve(profile, host, port, time_scale, prefix_caching, kv_budget, slowdown,
               tool_calls)
        return
    # `sim --profile X serve` must not serve the default profile: what was set before the
    # subcommand is handed to `serve`, and refused by the others, which take none of it.
    given = _given_options(ctx)
    if given and ctx.invoked_subcommand != "serve":
        _fail(
            f"{', '.join(given)}: options of serving; `servecap sim "
            f"{ctx.invoked_subcommand}` takes none of them"
        )
    ctx.obj = {name: ctx.params[name] for name in given.values()}


def _given_options(ctx: typer.Context) -> dict[str, str]:
    """Flag -> parameter name of the options given on the command line (not defaults)."""

    def typed(name: str) -> bool:  # by name: typer vendors its own click's enum
        source = ctx.get_parameter_source(name)
        return source is not None and source.name == "COMMANDLINE"

    return {p.opts[0]: p.name for p in ctx.command.params if p.name and typed(p.name)}


@sim_app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    profile: str = typer.Option("vllm-direct", "--profile", "-p", help=PROFILE_HELP),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port"),
    time_scale: float = typer.Option(1.0, "--time-scale", help=SCALE_HELP),
    prefix_caching: str | None = typer.Option(None, "--prefix-caching", help=CACHE_HELP),
    kv_budget: int | None = typer.Option(None, "--kv-budget-tokens", help=KV_HELP),
    warmup_s: float | None = typer.Option(None, "--warmup-s", help=WARMUP_HELP),
    warmup_factor: float | None = typer.Option(None, "--warmup-factor", help=WARMUP_FACTOR_HELP),
    drift_per_min: float | None = typer.Option(None, "--drift-per-min", help=DRIFT_HELP),
    tool_calls: float | None = typer.Option(None, "--tool-call-probability", help=TOOLS_HELP),
) -> None:
    """Serve a profile as an OpenAI-compatible server until Ctrl-C."""
    before: dict[str, Any] = ctx.obj or {}
    mine = set(_given_options(ctx).values())
    pick = {k: v for k, v in before.items() if k not in mine}  # after `serve` wins
    _serve(
        pick.get("profile", profile),
        pick.get("host", host),
        pick.get("port", port),
        pick.get("time_scale", time_scale),
        pick.get("prefix_caching", prefix_caching),
        pick.get("kv_budget", kv_budget),
        {"warmup_s": pick.get("warmup_s", warmup_s),
         "warmup_factor": pick.get("warmup_factor", warmup_factor),
         "drift_per_min": pick.get("drift_per_min", drift_per_min)},
        pick.get("tool_calls", tool_calls),
    )


@sim_app.command("profiles")
def profiles_cmd() -> None:
    """List the built-in profiles."""
    for name in builtin_names():
        prof = load_profile(name)
        typer.echo(f"{name:<16} {prof.description}")


def _pick_config(levels: dict[str, list[dict[str, float]]], config: str | None) -> str:
    if config is not None:
        if config not in levels:
            _fail(f"config {config!r} not in the input; it has: {', '.join(sorted(levels))}")
        return config
    if len(levels) > 1:
        _fail(f"the input holds several configs ({', '.join(sorted(levels))}); pick --config")
    return next(iter(levels))


def _read_sources(sources: list[Path], config: str | None) -> tuple[str, list[dict[str, float]]]:
    """The first source's config name and every source's level rows. A level measured twice
    (same concurrency and workload) is refused: the fit would weigh it twice, unasked."""
    from servecap.sim.calibration.measured_levels import CalibrationInputError, read_levels
    from servecap.sim.model.sweep import workload_label, workload_of

    names: list[str] = []
    rows: list[dict[str, float]] = []
    seen: dict[tuple[int, tuple[int, int]], Path] = {}
    for source in sources:
        try:
            levels = read_levels(source)
        except CalibrationInputError as exc:
            _fail(str(exc))
        names.append(_pick_config(levels, config))
        for row in levels[names[-1]]:
            key = (int(row["concurrency"]), workload_of(row))
            if key in seen:
                _fail(f"c={key[0]} at {workload_label(key[1])} is in both {seen[key]} and "
                      f"{source}; give each level once")  # fmt: skip
            seen[key] = source
            rows.append(row)
    return names[0], rows


def _default_base(
    slots: int | None, kv_budget: int | None, engine: str
) -> tuple[Profile, list[str] | None]:
    """The base and the parameters to fit: the generic one, or llama.cpp's, with the given
    sequence slots and KV budget."""
    from servecap.sim.calibration.bases import (
        GENERIC_FREE,
        LLAMA_CPP_FREE,
        generic_base,
        llama_cpp_base,
    )

    if engine == "llama.cpp":
        return llama_cpp_base(slots or 8, kv_budget or 1_000_000), list(LLAMA_CPP_FREE)
    return generic_base(slots or 256, kv_budget or 1_000_000), list(GENERIC_FREE)


@sim_app.command("calibrate")
def calibrate_cmd(
    sources: list[Path] = typer.Argument(..., help=SOURCES_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the profile (.toml)."),
    config: str | None = typer.Option(None, "--config", help="Config to fit (CSV inputs)."),
    base: str | None = typer.Option(None, "--base", help="Starting profile; " + PROFILE_HELP),
    name: str | None = typer.Option(None, "--name", help="Name of the new profile."),
    slots: int | None = typer.Option(None, "--max-num-seqs", help=SLOTS_HELP),
    kv_budget: int | None = typer.Option(None, "--kv-budget-tokens", help=KV_HELP),
    engine: str = typer.Option("generic", "--engine", help=ENGINE_HELP),
    ttft_slo_ms: float | None = typer.Option(None, "--ttft-slo-ms", help=SLO_HELP),
) -> None:
    """Fit a profile's model to measured levels; report its fit and held-out error."""
    from servecap.sim.calibration.calibrate import fit, make_writable_folder, write_profile
    from servecap.sim.calibration.fitting import SloGuard

    if out.suffix.lower() != ".toml" or out.is_dir():
        _fail(f"--out must be a .toml file, not {out.name!r}")
    for flag, value in (("--max-num-seqs", slots), ("--kv-budget-tokens", kv_budget)):
        if value is not None and value < 1:
            _fail(f"{flag} must be >= 1, not {value}")
    if ttft_slo_ms is not None and not ttft_slo_ms > 0:  # also NaN
        _fail(f"--ttft-slo-ms must be > 0, not {ttft_slo_ms}")
    if engine not in ENGINES:
        _fail(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if base and engine != "generic":
        _fail("--engine picks a base; give it or --base, not both")
    chosen, levels = _read_sources(sources, config)
    if base:
        start, free = _profile(base), None
    else:
        start, free = _default_base(slots, kv_budget, engine)
    if start.params.fixed:
        _fail("the base profile has a fixed schedule; pick a step-model profile as --base")
    try:  # before the fit, which can take minutes
        make_writable_folder(out.parent)
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or exc}")
    source = " ".join(map(str, sources))
    guard = SloGuard() if ttft_slo_ms is None else SloGuard(ttft_ms=ttft_slo_ms)
    profile = fit(levels, start, free=free, name=name or chosen, source=source, guard=guard)
    try:
        slo = "" if ttft_slo_ms is None else f" --ttft-slo-ms {ttft_slo_ms:g}"
        write_profile(profile, out, f"servecap sim calibrate {source} --out {out}{slo}")
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or exc}")
    cal = profile.calibration
    held = (
        f"held-out ({cal['holdout_split']}) {float(cal['holdout_mape']):.1%}, "
        f"worst cell {float(cal['holdout_max_cell_error']):.1%}"
        if "holdout_mape" in cal
        else "no held-out error (fewer than 3 levels)"
    )
    typer.echo(
        f"wrote {out}: fit error {float(cal['mape']):.1%}, worst cell "
        f"{float(cal['max_cell_error']):.1%}; {held}"
    )
    if "loose" in cal:
        typer.echo(f"the measured levels leave these fitted parameters loose: {cal['loose']}; "
                   f"measure {cal['measure_next']} to pin them down")  # fmt: skip
