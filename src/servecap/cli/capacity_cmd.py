"""`servecap capacity`: the SLO boundary and the users it holds, verified, in one command.

Exit codes: 0 found; 2 bad input (before any load); 3 not even c=1 meets the SLOs; 4 the
time budget ended before a miss bracketed C_max; 5 the first miss was on a level where
this client could not keep up; 130 interrupted (the partial answer is written).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from servecap.api.capacity.agents_capacity import agent_capacity_fields
from servecap.api.capacity.by_load import find_capacity
from servecap.api.capacity.capacity import CapacityOptions
from servecap.api.run.request_options import parse_extra_body, parse_headers
from servecap.api.run.run_config import RunConfig
from servecap.cli import capacity_load_flags as lf
from servecap.cli import run_flags_agents as af
from servecap.cli import run_flags_prefix as pc
from servecap.cli import run_flags_workload as wf
from servecap.cli.capacity_targets import check_targets, run_targets
from servecap.cli.common import (
    EXIT_INTERRUPTED,
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    TpsSloOption,
    TtftSloOption,
    fail_input,
    user_errors,
)
from servecap.cli.cost_flags import (
    CurrencyOption,
    GpuHourCostOption,
    GpusOption,
    cost_fields,
)
from servecap.cli.run_cmd import CLIENT, RUN, RichProgress, build_config
from servecap.cli.run_flags_workers import WorkersOption, config_fields
from servecap.core.secrets import Secrets
from servecap.core.validation import user_input_error
from servecap.report.cost_views import COST_HEADER, basis_text, cost_rows
from servecap.storage.capacity_answer import CapacityAnswer

OPTIONS = CapacityOptions()
FLAGS = {
    "ttft_slo_ms": "--ttft-slo-ms", "tps_slo": "--tps-slo", "statistic": "--stat",
    "think": "--think-time", "max_time_s": "--max-time", "confidence": "--confidence",
    "first_look": "--first-look", "users_turns": "--users-turns",
    "users_duration_s": "--users-duration", "max_concurrency": "--max-concurrency",
    "load": "--load", "start_rate": "--start-rate", "rate_resolution": "--rate-resolution",
    "task_time_slo_s": "--task-time-slo-s", "max_agents": "--max-agents",
    "agents_duration_s": "--agents-duration",
}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$")
_UNIT_S = {None: 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str, flag: str) -> float:
    """`900`, `900s`, `15m`, `1h` as seconds; bad input raises (exit 2)."""
    match = _DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise fail_input(f"invalid {flag} {text!r}: use seconds or e.g. 90s, 15m, 1h")
    return float(match.group(1)) * _UNIT_S[match.group(2)]


@user_errors
def capacity(
    ctx: typer.Context,
    base_url: Annotated[str, typer.Option(help="Server base URL")] = CLIENT.base_url,
    target: Annotated[list[str] | None, typer.Option(
        help="NAME=BASE_URL, twice or more: search each, probes interleaved, and the delta"
    )] = None,
    model: Annotated[str | None, typer.Option(help="Model id (default: first served)")] = None,
    endpoint: Annotated[str, typer.Option(help="chat or completions")] = RUN.endpoint,
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    think_time: Annotated[str, typer.Option(
        help="Users' think time (exp:MEAN, fixed:S, ...): the Z of N = C_max x (1 + Z/L)"
    )] = OPTIONS.think,
    max_time: Annotated[str, typer.Option(
        help="The whole command's time budget, e.g. 900, 15m"
    )] = "15m",
    confidence: Annotated[float, typer.Option(
        help="How sure each probe's verdict must be (0.5 to 1)")] = OPTIONS.confidence,
    first_look: Annotated[int, typer.Option(
        help="Requests a probe judges at its first look (doubling twice at most)"
    )] = OPTIONS.first_look,
    users_turns: Annotated[str, typer.Option(
        help="Turns per verified user's conversation (default 1: the search's own request)"
    )] = OPTIONS.users_turns,
    users_duration: Annotated[float, typer.Option(
        help="Measured seconds of the users level")] = OPTIONS.users_duration_s,
    verify: Annotated[bool, typer.Option(
        help="Run the predicted users after the search")] = OPTIONS.verify,
    max_concurrency: Annotated[int | None, typer.Option(
        help=f"The highest concurrency the search probes [default: {OPTIONS.max_concurrency}]"
    )] = None,
    load: lf.LoadOption = OPTIONS.load,
    start_rate: lf.StartRateOption = None,
    rate_resolution: lf.RateResolutionOption = None,
    task_time_slo_s: lf.TaskTimeSloOption = None,
    max_agents: lf.MaxAgentsOption = None,
    agents_duration: lf.AgentsDurationOption = None,
    agent_depth: af.AgentDepthOption = af.AGENT_DEFAULTS.depth,
    tool_latency: af.ToolLatencyOption = af.AGENT_DEFAULTS.tool_latency,
    tool_result_tokens: af.ToolResultTokensOption = af.AGENT_DEFAULTS.tool_result_tokens,
    tools: af.ToolsOption = None,
    context_budget: af.ContextBudgetOption = None,
    fan_out: af.FanOutOption = None,
    input_tokens: wf.InputTokens = str(RUN.input_tokens),
    output_tokens: wf.OutputTokens = str(RUN.output_tokens),
    dataset: wf.DatasetOpt = None,
    dataset_format: wf.DatasetFormatOpt = "auto",
    tokenizer: wf.TokenizerOpt = None,
    prefix_tokens: wf.PrefixTokensOpt = None,
    prefix_groups: wf.PrefixGroupsOpt = 1,
    prefix_hit_rate: pc.PrefixHitRateOption = None,
    reset_prefix_cache: pc.ResetPrefixCacheOption = pc.RESET_DEFAULT,
    extra_body: Annotated[str | None, typer.Option(help="JSON merged into each body")] = None,
    header: Annotated[list[str] | None, typer.Option(help="Extra header 'Name: value'")] = None,
    api_key_env: Annotated[str, typer.Option(help="Env var holding the API key")] = (
        CLIENT.api_key_env
    ),
    insecure: Annotated[bool, typer.Option(help="Skip TLS verification (recorded)")] = False,
    ca_bundle: Annotated[str | None, typer.Option(help="CA bundle for TLS")] = None,
    timeout: Annotated[float, typer.Option(help="Per-request total timeout, s")] = (
        CLIENT.timeout_s
    ),
    workers: WorkersOption = "auto",
    name: Annotated[str | None, typer.Option(help="Deployment name (default: model)")] = None,
    out: Annotated[Path, typer.Option(help="Output directory")] = Path("capacity-output"),
    output_format: Annotated[str, typer.Option(
        "--format", help="text or json (the answer on stdout)")] = "text",
    gpus: GpusOption = None,
    gpu_hour_cost: GpuHourCostOption = None,
    currency: CurrencyOption = None,
    power_metrics: Annotated[str | None, typer.Option(
        help="A DCGM exporter's /metrics URL: each probe's power, energy and J per token")
    ] = None,
) -> None:
    """Find how many users a server holds within the SLOs, in one run.

    Doubles the concurrency from 1 until a probe misses the SLOs, bisects to the integer,
    stops each probe once its verdict is decided, then runs the users Little's law
    predicts and answers in one sentence (also in OUT/capacity.json). With --load rate it
    searches the highest open-loop Poisson rate instead, with goodput beside it; with
    --load agents, the concurrent agents within --task-time-slo-s, predicted and verified.
    """
    if output_format not in ("text", "json"):
        raise fail_input(f"invalid --format {output_format!r}: use text or json")
    lf.refuse_users_options(load, ctx)
    agents = agent_capacity_fields(
        load, {"task_time_slo_s": task_time_slo_s, "max_agents": max_agents,
               "agents_duration_s": agents_duration},
        af.agent_settings(None, agent_depth, tool_latency, tool_result_tokens, tools,
                          context_budget, fan_out), endpoint, think_time, RUN.seed)
    options = _options(agents | lf.load_fields(load, max_concurrency, start_rate,
                                               rate_resolution) | dict(
        ttft_slo_ms=ttft_slo_ms, tps_slo=tps_slo, statistic=stat.value, think=think_time,
        max_time_s=parse_duration(max_time, "--max-time"), confidence=confidence,
        first_look=first_look, verify=verify, users_turns=users_turns,
        users_duration_s=users_duration,
    ))
    targets = check_targets(target, ctx, options)
    cost = cost_fields(gpus, gpu_hour_cost, currency)
    headers = parse_headers(header or [])
    workload = wf.WorkloadFlags(input_tokens, output_tokens, dataset, dataset_format,
                                tokenizer, prefix_tokens, prefix_groups, None, "auto", "1",
                                0.0, None, prefix_hit_rate=prefix_hit_rate)
    fields = wf.config_fields(workload)
    fields.pop("load", None)
    config = build_config(
        base_url=base_url, model=model, endpoint=endpoint, concurrency="1", rounds=RUN.rounds,
        warmup=RUN.warmup, **fields, timeout=timeout,
        stall_timeout=CLIENT.stall_timeout_s, connect_timeout=CLIENT.connect_timeout_s,
        name=name, out=out / "runs", seed=RUN.seed, api_key_env=api_key_env, headers=headers,
        extra_body=parse_extra_body(extra_body), insecure=insecure, ca_bundle=ca_bundle,
        notes=None, **config_fields(workers, None), reset_prefix_cache=reset_prefix_cache,
        cost=cost, power_metrics=power_metrics,
    )
    wf.check_source(config)
    if targets:
        run_targets(targets, config, options, Secrets.from_env(api_key_env, headers), out,
                    output_format)
    answer = _run(config, options, Secrets.from_env(api_key_env, headers), out)
    _print(answer, output_format)
    raise typer.Exit(answer.exit_code())


def _options(fields: dict[str, object]) -> CapacityOptions:
    """The options, checked; a problem names its flag (exit 2, before any load)."""
    try:
        options = CapacityOptions.model_validate(fields)
    except ValidationError as exc:
        raise user_input_error(exc, FLAGS) from None
    return options


def _run(
    config: RunConfig, options: CapacityOptions, secrets: Secrets, out: Path
) -> CapacityAnswer:
    progress = RichProgress(Console(stderr=True))
    try:
        return find_capacity(config, options, secrets, progress)
    except KeyboardInterrupt:
        progress.stop()
        print(f"interrupted: the probes measured so far are in {out / 'capacity.json'}, "
              "marked incomplete")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        progress.stop()


def _print(answer: CapacityAnswer, output_format: str) -> None:
    if output_format == "json":
        print(answer.model_dump_json(indent=2))
        return
    print(answer.sentence())
    print(f"{'level':>12} {'n':>5} {'judged':>6} {'crop':>4}  verdict")
    for row in answer.probes:
        reason = f" ({row.reason})" if row.reason else ""
        print(f"{row.level():>12} {row.n_requests:>5} {row.n_judged:>6} {row.cropped:>4}  "
              f"{row.verdict}{reason}")
    if answer.diagnosis:
        print(f"failures: {answer.diagnosis}")
    if answer.cost is not None:
        print(f"cost ({basis_text(answer.cost)}):")
        for cells in cost_rows(answer.deployment, answer.cost):
            print("  " + "; ".join(f"{k} {v}" for k, v in zip(COST_HEADER[1:], cells[1:],
                                                                 strict=True)))
    for label, path in (("probes", answer.probe_run), ("users", answer.users_run)):
        if path:
            print(f"{label} run: {path}")
