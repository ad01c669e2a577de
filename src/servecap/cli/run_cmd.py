"""`servecap run`: sweep a server over concurrency levels and save the run."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from servecap.api.run.find_cmax import refinement_line
from servecap.api.run.load_settings import LoadSettings, load_fields
from servecap.api.run.request_options import parse_extra_body, parse_headers
from servecap.api.run.run import RunOutcome, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.cli import cost_flags
from servecap.cli import run_flags_agents as af
from servecap.cli import run_flags_cmax as cf
from servecap.cli import run_flags_load as lf
from servecap.cli import run_flags_open as op
from servecap.cli import run_flags_prefix as pc
from servecap.cli import run_flags_sessions as sf
from servecap.cli import run_flags_workers as wk
from servecap.cli import run_flags_workload as wf
from servecap.cli.common import EXIT_INTERRUPTED, flag_of, out_dir, user_errors
from servecap.cli.tables import levels_table, print_table
from servecap.core.config import ClientOptions, parse_levels, validate_base_url
from servecap.core.errors import RunAborted
from servecap.core.level_key import LevelKey
from servecap.core.numbers import fmt_number
from servecap.core.records import RequestRecord
from servecap.core.secrets import Secrets
from servecap.core.summary import LevelSummary
from servecap.core.text import printable
from servecap.core.validation import user_input_error
from servecap.load.event_loop import loop_factory

# The defaults every flag shows are the config models' own, so they are declared once.
RUN = RunConfig()
CLIENT = RUN.client

DEFAULT_CONCURRENCY = ",".join(str(c) for c in RUN.concurrency)

# The flags, by the config's field names: a validation message names the flag to fix.
RUN_FLAGS = {
    "name": "--name", "model": "--model", "endpoint": "--endpoint",
    "concurrency": "--concurrency", "rounds": "--rounds", "input_tokens": "--input-tokens",
    "output_tokens": "--output-tokens", "warmup": "--warmup", "seed": "--seed",
    "out_dir": "--out", "extra_body": "--extra-body", "notes": "--notes",
    "workload": "--dataset/--prefix-tokens",
    # the CLI's load plan is the closed sweep these define, or a replay of --trace
    "load": "--concurrency/--rounds/--trace",
    "server_metrics": "--server-metrics", "metrics_hz": "--metrics-hz",
    "power_metrics": "--power-metrics", "cost": "--gpus/--gpu-hour-cost/--currency",
    "workers": "--workers", "ray_address": "--ray", "outage_s": "--outage-s",
    "find_cmax": "--find-cmax/--budget", **pc.FLAGS,
    "client.base_url": "--base-url", "client.api_key_env": "--api-key-env",
    "client.header_names": "--header", "client.insecure": "--insecure",
    "client.ca_bundle": "--ca-bundle", "client.timeout_s": "--timeout",
    "client.stall_timeout_s": "--stall-timeout", "client.connect_timeout_s": "--connect-timeout",
}
# ClientOptions is built on its own first, so its problems come without the `client.` prefix
CLIENT_FLAGS = {k.removeprefix("client."): v for k, v in RUN_FLAGS.items() if "client." in k}


class RichProgress:
    """A progress bar over all requests, one line per finished level."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn(), console=console,
        )
        self.task = self.bar.add_task("warm-up", total=None, failed=0)
        self.failed = 0
        self.total = self.done = 0

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        shown = escape(printable(model))  # a model id is server text: never markup
        self.console.print(f"model [bold]{shown}[/]  ->  {escape(printable(run_dir))}",
                           markup=True, highlight=False)
        self.total = total_requests
        self.bar.update(self.task, total=total_requests)
        self.bar.start()

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        # a plan that decides its levels as it goes (--find-cmax) outgrows its first total
        self.total = max(self.total, self.done + n_requests)
        self.bar.update(self.task, description=str(level), total=self.total)

    def request_done(self, record: RequestRecord) -> None:
        if record.status == "failed":
            self.failed += 1
        self.done += 1
        self.bar.update(self.task, advance=1, failed=self.failed)

    def level_done(self, summary: LevelSummary) -> None:
        # a level with no successful request has no TTFT or TPS: n/a, never 0.0
        late = summary.send_lateness_p99_ms  # a scheduled level: how faithfully it was sent
        self.bar.console.print(
            f"{summary.key}: ok {summary.n_ok} failed {summary.n_failed} "
            f"TTFT mean {fmt_number(summary.ttft_mean_ms, 1)} ms, "
            f"TPS mean {fmt_number(summary.tps_mean, 1)}"
            + (f", send lateness p99 {late:.1f} ms" if late is not None else "")
            + wk.level_note(summary),
            highlight=False, markup=False,
        )

    def stop(self) -> None:
        self.bar.stop()


def build_config(**kw: Any) -> RunConfig:
    try:
        client = ClientOptions(
            base_url=validate_base_url(kw["base_url"]), api_key_env=kw["api_key_env"],
            header_names=sorted(kw["headers"]), insecure=kw["insecure"],
            ca_bundle=kw["ca_bundle"], timeout_s=kw["timeout"],
            stall_timeout_s=kw["stall_timeout"], connect_timeout_s=kw["connect_timeout"],
        )
    except ValidationError as exc:
        raise user_input_error(exc, CLIENT_FLAGS) from exc
    try:
        return RunConfig(
            name=kw["name"], model=kw["model"], endpoint=kw["endpoint"],
            concurrency=parse_levels(kw["concurrency"]), rounds=kw["rounds"],
            input_tokens=kw["input_tokens"], output_tokens=kw["output_tokens"],
            warmup=kw["warmup"], seed=kw["seed"], out_dir=str(kw["out"]),
            extra_body=kw["extra_body"], client=client, notes=kw["notes"],
            workload=kw.get("workload"), load=kw.get("load"),
            server_metrics=kw.get("server_metrics", RUN.server_metrics),
            metrics_hz=kw.get("metrics_hz", RUN.metrics_hz),
            workers=kw.get("workers"), ray_address=kw.get("ray_address"),
            find_cmax=kw.get("find_cmax"), outage_s=kw.get("outage_s", RUN.outage_s),
            reset_prefix_cache=kw.get("reset_prefix_cache", RUN.reset_prefix_cache),
            cost=kw.get("cost"), power_metrics=kw.get("power_metrics"),
        )
    except ValidationError as exc:
        raise user_input_error(exc, RUN_FLAGS) from exc


def execute(config: RunConfig, secrets: Secrets, console: Console) -> RunOutcome:
    """Run with signal handling: first Ctrl-C/SIGTERM ends the run incomplete, second exits."""
    progress = RichProgress(console)

    async def main() -> RunOutcome:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        signals = {"count": 0}

        def on_signal() -> None:
            signals["count"] += 1
            if signals["count"] > 1:
                os._exit(EXIT_INTERRUPTED)
            task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        return await run_benchmark_async(config, secrets, progress)

    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            return runner.run(main())
    except asyncio.CancelledError:
        progress.stop()
        console.print("interrupted: run saved, marked incomplete")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        progress.stop()


@user_errors
def run(
    base_url: Annotated[str, typer.Option(help="Server base URL")] = CLIENT.base_url,
    model: Annotated[str | None, typer.Option(help="Model id (default: first served)")] = None,
    endpoint: Annotated[str, typer.Option(help="chat or completions")] = RUN.endpoint,
    concurrency: Annotated[
        str | None,
        typer.Option(help="Levels, e.g. 1,2,4,8 (default "
                     + ",".join(str(c) for c in RUN.concurrency) + ")"),
    ] = None,
    rounds: Annotated[int, typer.Option(help="Requests per level = rounds x c")] = RUN.rounds,
    input_tokens: wf.InputTokens = str(RUN.input_tokens),
    output_tokens: wf.OutputTokens = str(RUN.output_tokens),
    warmup: Annotated[int, typer.Option(help="Warm-up requests (not measured)")] = RUN.warmup,
    timeout: Annotated[float, typer.Option(help="Per-request total timeout, s")] = (
        CLIENT.timeout_s
    ),
    stall_timeout: Annotated[
        float, typer.Option(help="Fail a request when no byte arrives for this long, s")
    ] = CLIENT.stall_timeout_s,
    connect_timeout: Annotated[float, typer.Option(help="TCP/TLS connect timeout, s")] = (
        CLIENT.connect_timeout_s
    ),
    name: Annotated[str | None, typer.Option(help="Run name (default: model)")] = None,
    out: Annotated[Path, typer.Option(parser=out_dir, help="Results directory")] = Path(
        RUN.out_dir),
    seed: Annotated[int, typer.Option(help="Prompt shuffle seed")] = RUN.seed,
    api_key_env: Annotated[str, typer.Option(help="Env var holding the API key")] = (
        CLIENT.api_key_env
    ),
    header: Annotated[list[str] | None, typer.Option(help="Extra header 'Name: value'")] = None,
    extra_body: Annotated[str | None, typer.Option(help="JSON merged into each body")] = None,
    insecure: Annotated[bool, typer.Option(help="Skip TLS verification (recorded)")] = (
        CLIENT.insecure
    ),
    ca_bundle: Annotated[str | None, typer.Option(help="CA bundle for TLS")] = None,
    notes: Annotated[str | None, typer.Option(help="Deployment notes to store")] = None,
    dataset: wf.DatasetOpt = None,
    dataset_format: wf.DatasetFormatOpt = "auto",
    tokenizer: wf.TokenizerOpt = None,
    prefix_tokens: wf.PrefixTokensOpt = None,
    prefix_groups: wf.PrefixGroupsOpt = 1,
    prefix_hit_rate: pc.PrefixHitRateOption = None,
    reset_prefix_cache: pc.ResetPrefixCacheOption = pc.RESET_DEFAULT,
    trace: wf.TraceOpt = None,
    trace_format: wf.TraceFormatOpt = "auto",
    trace_speed: wf.TraceSpeedOpt = "1",
    trace_start: wf.TraceStartOpt = 0.0,
    trace_duration: wf.TraceDurationOpt = None,
    users: sf.UsersOption = None,
    think_time: sf.ThinkTimeSpecOption = sf.DEFAULTS.think,
    turns: sf.TurnsOption = None,
    ramp_s: sf.RampOption = sf.DEFAULTS.ramp_s,
    duration: sf.DurationOption = None,  # one flag: sessions' and the open loop's
    rate: op.RateOption = None,
    arrival: op.ArrivalOption = "poisson",
    burstiness: op.BurstinessOption = 1.0,
    requests: op.RequestsOption = None,
    max_concurrency: op.MaxConcurrencyOption = None,
    warmup_s: op.WarmupSOption = None,
    cooldown_s: op.CooldownSOption = None,
    load: lf.LoadOption = None,
    agents: af.AgentsOption = None,
    agent_depth: af.AgentDepthOption = af.AGENT_DEFAULTS.depth,
    tool_latency: af.ToolLatencyOption = af.AGENT_DEFAULTS.tool_latency,
    tool_result_tokens: af.ToolResultTokensOption = af.AGENT_DEFAULTS.tool_result_tokens,
    tools: af.ToolsOption = None,
    context_budget: af.ContextBudgetOption = None,
    fan_out: af.FanOutOption = None,
    agent_trace: af.AgentTraceOption = None,
    server_metrics: Annotated[
        str, typer.Option(help="Scrape the server's /metrics: auto, off or a URL")
    ] = RUN.server_metrics,
    metrics_hz: Annotated[
        float, typer.Option(help="Scrapes per second of /metrics (at most 10)")
    ] = RUN.metrics_hz,
    workers: wk.WorkersOption = "auto",
    ray: wk.RayOption = None,
    find_cmax: cf.FindCmaxOption = False,
    budget: cf.BudgetOption = None,
    ttft_slo_ms: cf.CmaxTtftOption = cf.SLO_DEFAULTS.ttft_ms,
    tps_slo: cf.CmaxTpsOption = cf.SLO_DEFAULTS.tps,
    stat: cf.CmaxStatOption = cf.STAT_DEFAULT,
    outage_s: Annotated[float, typer.Option(
        help="Stop the run (exit 1, kept) once only failures have ended for this long, s")
    ] = RUN.outage_s,
    gpus: cost_flags.GpusOption = None,
    gpu_hour_cost: cost_flags.GpuHourCostOption = None,
    currency: cost_flags.CurrencyOption = None,
    power_metrics: Annotated[str | None, typer.Option(
        help="A DCGM exporter's /metrics URL: each level's power, energy and J per token")
    ] = None,
) -> None:
    """Sweep a server and save the run: concurrency, --rate, --users, --agents, --trace or
    --load.

    Closed loop by default (c streams per level, each sends its next request when one
    ends); --rate an open loop (requests arrive at each offered rate); --users sessions
    (virtual users hold multi-turn chats and think between turns); --agents virtual agents
    (tasks of model calls with tool calls between them); --trace a trace
    replayed once per --trace-speed; --load any load kind by its text form.
    """
    headers = parse_headers(header or [])
    flags = LoadSettings(
        wf.WorkloadFlags(input_tokens, output_tokens, dataset, dataset_format, tokenizer,
                         prefix_tokens, prefix_groups, trace, trace_format, trace_speed,
                         trace_start, trace_duration, prefix_hit_rate=prefix_hit_rate),
        endpoint, seed, concurrency, users, think_time, turns, ramp_s, duration, rate, arrival,
        burstiness, requests, max_concurrency, warmup_s, cooldown_s, load,
        af.agent_settings(agents, agent_depth, tool_latency, tool_result_tokens, tools,
                          context_budget, fan_out, agent_trace),
    )
    fields = load_fields(flags)
    other = flags.other_than_closed()
    if other == "load" and fields["load"].probe(1) is not None:
        other = None  # `--load c=...` is a concurrency grid the search can refine
    search = cf.find_cmax(find_cmax, budget, (ttft_slo_ms, tps_slo, stat),
                          flag_of(other) if other else None)
    if concurrency is None:
        concurrency = DEFAULT_CONCURRENCY
    config = build_config(
        base_url=base_url, model=model, endpoint=endpoint, concurrency=concurrency,
        rounds=rounds, warmup=warmup, **fields,
        timeout=timeout, stall_timeout=stall_timeout, connect_timeout=connect_timeout,
        name=name, out=out, seed=seed, api_key_env=api_key_env,
        headers=headers, extra_body=parse_extra_body(extra_body), insecure=insecure,
        ca_bundle=ca_bundle, notes=notes, server_metrics=server_metrics, metrics_hz=metrics_hz,
        **wk.config_fields(workers, ray),
        find_cmax=search, outage_s=outage_s, reset_prefix_cache=reset_prefix_cache,
        cost=cost_flags.cost_fields(gpus, gpu_hour_cost, currency), power_metrics=power_metrics,
    )
    wf.check_source(config)
    console = Console(stderr=True)
    try:
        outcome = execute(config, Secrets.from_env(api_key_env, headers), console)
    except RunAborted as exc:
        if isinstance(exc.outcome, RunOutcome):  # what was measured, before the error
            print_outcome(config, exc.outcome)
        raise
    print_outcome(config, outcome)


def print_outcome(config: RunConfig, outcome: RunOutcome) -> None:
    """The run's final table (refined levels among the grid's), then its notes."""
    title = f"{outcome.info.name} ({outcome.info.status})"
    levels = sorted(outcome.levels, key=lambda lv: lv.key)
    print_table(Console(), levels_table(title, levels))
    notes = [refinement_line(config, outcome.levels), outcome.info.server_metrics.get("reason")]
    for note in [*filter(None, notes), *wk.run_notes(outcome.info.workers),
                 *pc.run_notes(outcome.info.prefix_cache)]:
        print(note)
    print(f"run saved to {outcome.run_dir}")
