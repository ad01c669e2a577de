"""The documentation site's reference pages, generated from the code at build time.

The CLI reference walks the typer app's click tree; the run-file and summary-field pages list
the pydantic models' and the request record's fields. Prose is never the source of a flag or a
field name, so text and code cannot drift: a new option or field appears on the next build,
and `tests/docs/test_site.py` checks the built site against the code.

Descriptions of summary fields live here (the models carry none): a field without one is
rendered "(not described yet)" and `undescribed_summary_fields()` names it, which that test
turns into a failure.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

# The marker a page carries where a generated block goes (`mkdocs_hooks.py` replaces it).
MARKER = re.compile(r"<!--\s*generated:\s*([a-z-]+)\s*-->")


def _cell(text: str) -> str:
    """One markdown table cell: pipes escaped, angle brackets as entities, one line."""
    text = " ".join(str(text).split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _click_root() -> Any:
    import typer.main

    from servecap.cli.main import app

    return typer.main.get_command(app)


def commands() -> list[tuple[str, Any, Any]]:
    """Every command of the app as (full name, click command, click context), depth first."""
    from typer._click.core import Context

    root = _click_root()
    found: list[tuple[str, Any, Any]] = []

    def walk(name: str, command: Any, parent: Any) -> None:
        ctx = Context(command, info_name=name.split()[-1], parent=parent)
        found.append((name, command, ctx))
        for sub_name, sub in getattr(command, "commands", {}).items():
            if not sub.hidden:
                walk(f"{name} {sub_name}", sub, ctx)

    walk("servecap", root, None)
    return found


def anchor(name: str) -> str:
    """A command's section anchor: `servecap sim predict` -> `servecap-sim-predict`."""
    return name.replace(" ", "-")


def cli_reference() -> str:
    """Markdown for every command: usage, description and a table of its options."""
    out: list[str] = []
    for name, command, ctx in commands():
        out.append(f"## {name} {{#{anchor(name)}}}\n")
        out.append(f"```text\n{command.get_usage(ctx)}\n```\n")
        if command.help:
            # the docstring's paragraphs as they are; typer's \b markers are click-only
            out.append(command.help.replace("\b\n", "").strip() + "\n")
        subs = [(n, c) for n, c in getattr(command, "commands", {}).items() if not c.hidden]
        if subs:
            out.append("| command | what it does |\n|---|---|")
            for sub_name, sub in subs:
                link = anchor(f"{name} {sub_name}")
                summary = (sub.short_help or sub.help or "").strip().split("\n\n")[0]
                out.append(f"| [`{name} {sub_name}`](#{link}) | {_cell(summary)} |")
            out.append("")
        rows = []
        for param in command.params:
            record = param.get_help_record(ctx)
            if record is None:  # a hidden option
                continue
            names, text = record
            kind = "argument" if param.param_type_name == "argument" else "option"
            rows.append(f"| `{_cell(names)}` | {kind} | {_cell(text)} |")
        if rows:
            out.append("| name | kind | meaning |\n|---|---|---|")
            out.extend(rows)
            out.append("")
        if command.epilog:
            out.append("Examples:\n\n```bash\n" + _epilog_commands(command.epilog) + "\n```\n")
    return "\n".join(out)


def _epilog_commands(epilog: str) -> str:
    # the epilog's own "Examples:" label is the heading here; only the commands go in the block
    lines = (line.strip() for line in epilog.replace("\b", "").splitlines())
    return "\n".join(line for line in lines if line and line != "Examples:")


# --- summary fields ---------------------------------------------------------------------

# Field name patterns and what they mean; the first match wins. The patterns follow the
# model's naming rules (units in the names, `_{mean,p50,p90,p99}` statistics).
_STAT = r"(mean|p50|p90|p99)"
SUMMARY_DESCRIPTIONS: list[tuple[str, str]] = [
    (r"concurrency", "the level's key for a closed loop: c requests in flight"),
    (r"level", "the level's key for any other kind (`rate=4/s`, `speed=2x`, `users=100`)"),
    (r"n_requests|n_ok|n_failed", "requests in the level: all, successful, failed"),
    (r"failures", "failed requests by reason"),
    (r"error_rate", "failed / all; a failure counts as an SLO miss"),
    (rf"ttft_{_STAT}_ms", "time to first token (content, reasoning or tool call): "
     "`first_token_at - sent_at`"),
    (rf"ttfa_{_STAT}_ms", "time to first answer: the first non-empty `content`"),
    (rf"itl_{_STAT}_ms", "inter-token latency per request: "
     "`(last_token_at - first_token_at) / (N - n_first)`"),
    (rf"chunk_gap_{_STAT}_ms", "pooled gaps between token-bearing chunks"),
    (rf"tps_{_STAT}", "per-user tokens per second, `N / latency`; p90/p99 are the low tail "
     "(10th/1st percentile)"),
    (rf"decode_tps_{_STAT}", "`(N - n_first) / (last_token_at - first_token_at)`; low tail "
     "like TPS"),
    (rf"latency_{_STAT}_s", "`ended_at - sent_at`"),
    (r"rps", "completed requests / the level's wall time (never 1 / mean latency)"),
    (r"output_tok_s", "output tokens / the level's wall time"),
    (r"wall_s", "the level's wall time: first send to last completion"),
    (r"served_concurrency", "sum of latencies / wall time: the load the server really saw"),
    (r"(prompt|completion)_tokens_mean", "mean tokens served, from the server's usage"),
    (r"tokens_from_usage", "whether every token count came from the server's usage"),
    (r"(input|output)_tokens_sent_(mean|p50|p90)", "lengths the requests asked for (the "
     "prompt built for, `max_tokens`)"),
    (r"(prompt|completion)_tokens_(p50|p90)", "lengths served (usage)"),
    (r"send_lateness_(mean|p99|max)_ms", "scheduled kinds only (open loop, trace replay, "
     "fixed schedule): `sent_at - scheduled_at`"),
    (r"send_gap_(mean|p99|max)_ms", "the client's own delay from a request being due to its "
     "last byte at the kernel, less `connect_ms`; a p99 over 10 ms flags the level "
     "client-bound"),
    (r"length_histograms", "summary.json only: histograms of the lengths sent and served "
     "(`input`/`output` -> edges, sent, served)"),
    (r"loop_lag_p99_ms", "the client's event-loop lag, p99; over 10 ms flags the level "
     "client-bound"),
    (r"client_cpu_pct", "the client's CPU use in % of a core; over 95% flags the level "
     "client-bound"),
    (r"client_bound", "the level's numbers may measure the client: see client-bound levels"),
    (r"client_delay_mean_ms", "the client's own delay inside TTFT (how old the bytes were "
     "when the loop read them), mean"),
    (r"workers", "worker processes that ran the level (`--workers`, `--ray`); summary.json "
     "only"),
    (r"worker_health", "each worker's requests, lag, CPU and flag"),
    (r"workers_client_bound", "the workers that were client-bound"),
    (r"workers_died", "the workers that died during the level"),
    (r"server_scrapes|server_scrape_errors", "`/metrics` scrapes inside the level, and "
     "failed ones"),
    (r"server_(running|waiting|kv_usage)_(mean|max)", "the server's gauges over the level "
     "(requests running, waiting; KV-cache use 0..1)"),
    (r"server_waiting_share", "share of the level's scrapes with requests waiting"),
    (r"server_preemptions", "preemptions during the level"),
    (r"server_prefix_hit_rate", "prefix-cache hits / queries (or the engine's own rate)"),
    (r"server_spec_acceptance", "accepted / proposed draft tokens"),
    (r"server_spec_accept_length", "1 + accepted tokens per draft (tokens a step)"),
    (r"server_(prompt|generation)_tok_s", "the server's token counters over the level"),
    (r"server_(ttft|itl)_mean_ms", "the server's own TTFT / ITL histograms over the level"),
    (r"prefix_hit_rate_usage", "prefix-cache hit rate by the server's usage: cached / prompt "
     "tokens (`prompt_tokens_details.cached_tokens`) over the successful requests"),
    (r"prefix_cached_requests", "requests whose usage reported cached tokens"),
    (r"prefix_hit_target", "`--prefix-hit-rate`: the hit rate the prompts were built for"),
    (r"prefix_hit_ideal", "`--prefix-hit-rate`: the share of prompt tokens an ideal cache "
     "holding the shared prefixes serves (whole tokens, one suffix token at least)"),
    (r"prefix_cache_reset", "`--reset-prefix-cache`: the reset before the level: done, "
     "failed: why, or skipped: why (a warning, never a failure)"),
    (r"warnings", "e.g. a percentile from too few samples (P90 from under 20, P99 from under "
     "200 successful requests)"),
    (r"reconnects", "stale pooled connections skipped before a request was written"),
    (r"missing_done", "streams that ended without `[DONE]`"),
    (r"utf8_replaced", "invalid UTF-8 bytes replaced in answers"),
    (r"partial", "the level stopped before all its requests were sent (kept out of C_max "
     "unless asked for)"),
    (r"intervals", "summary.json only: `{metric: {stat: {estimate, low, high, confidence, n, "
     "resamples, method}}}` for the mean and P90 of TTFT (ms), TPS and latency (s)"),
    (r"kind_block", "summary.json only: the load kind's own block (e.g. a rate shape's time "
     "windows)"),
    (r"energy", "summary.json only, `--power-metrics` runs: `{power_mean_w, "
     "power_samples_mean_w, energy_j, j_per_output_token, output_tokens, window_s, from_ns, "
     "to_ns, scrapes, errors, gpus}` over the level's token window, or `note` saying why "
     "not (docs/how-to/energy.md)"),
    (r"users", "sessions: the level's users N"),
    (r"think_time_mean_s", "sessions: mean drawn think time Z"),
    (r"think_lag_mean_s", "sessions: how much longer than its drawn think a user took to "
     "send its next turn (the client's own delay)"),
    (r"response_mean_s", "sessions: mean latency R of the turns"),
    (r"mean_concurrency", "sessions: the window's requests' time in flight over its length"),
    (r"law_concurrency", "sessions: Little's law's `N x R / (R + Z)`"),
    (r"law_error", "sessions: (measured - law) / law"),
    (r"ttft_by_turn_ms", "sessions: mean TTFT by turn index"),
    (r"n_left_out", "open loop: records outside the steady-state window (kept in "
     "requests.jsonl)"),
    (r"window_s", "open loop: the steady-state window's length"),
    (r"offered_rps", "open loop: the rate asked for"),
    (r"sent_rps", "open loop: sends per second inside the window"),
    (r"achieved_rps", "open loop: successful completions per second inside the window"),
    (r"n_cap_waited", "open loop: requests that found the max-concurrency cap full"),
    (r"cap_wait_(mean|p99|max)_ms", "open loop: the cap's share of send lateness"),
    (rf"ttft_sched_{_STAT}_ms", "open loop: TTFT from `scheduled_at`, free of coordinated "
     "omission"),
    (rf"latency_sched_{_STAT}_s", "open loop: latency from `scheduled_at`"),
]


def describe_summary_field(name: str) -> str | None:
    for pattern, text in SUMMARY_DESCRIPTIONS:
        if re.fullmatch(pattern, name):
            return text
    return None


def summary_field_names() -> list[str]:
    from servecap.core.summary import LevelSummary

    return list(LevelSummary.model_fields)


def undescribed_summary_fields() -> list[str]:
    return [n for n in summary_field_names() if describe_summary_field(n) is None]


def _annotation(field: Any) -> str:
    text = str(field.annotation).replace("typing.", "")
    return re.sub(r"<class '([^']+)'>", r"\1", text)


def summary_fields() -> str:
    """A table of every `LevelSummary` field: name, type, meaning."""
    from servecap.core.summary import LevelSummary

    rows = ["| field | type | meaning |", "|---|---|---|"]
    for name, field in LevelSummary.model_fields.items():
        text = describe_summary_field(name) or "(not described yet)"
        rows.append(f"| `{name}` | `{_cell(_annotation(field))}` | {_cell(text)} |")
    return "\n".join(rows) + "\n"


def _model_table(model: Any) -> str:
    rows = ["| field | type |", "|---|---|"]
    for name, field in model.model_fields.items():
        rows.append(f"| `{name}` | `{_cell(_annotation(field))}` |")
    return "\n".join(rows) + "\n"


def run_json_fields() -> str:
    from servecap.core.run_info import RunInfo

    return _model_table(RunInfo)


def request_fields() -> str:
    from servecap.core.records import RequestRecord

    rows = ["| field | type |", "|---|---|"]
    for field in dataclasses.fields(RequestRecord):
        rows.append(f"| `{field.name}` | `{_cell(str(field.type))}` |")
    return "\n".join(rows) + "\n"


def verification_fields() -> str:
    from servecap.storage.verification import LevelCheck, Verification

    return (
        "`verification.json`:\n\n" + _model_table(Verification)
        + "\nEach of its levels (`LevelCheck`):\n\n" + _model_table(LevelCheck)
    )


GENERATORS = {
    "cli": cli_reference,
    "summary-fields": summary_fields,
    "run-json": run_json_fields,
    "request-fields": request_fields,
    "verification-fields": verification_fields,
}


def expand(markdown: str) -> str:
    """Replace every `<!-- generated: NAME -->` marker with its generated block."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown generated block {name!r}; known: {sorted(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(one, markdown)
