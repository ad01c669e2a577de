"""From stored runs to the report's data model (no rendering here)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from servecap import __version__
from servecap.analysis import (
    AnalysisOptions,
    ConfigSeries,
    Finding,
    Pair,
    analyse,
    infer_pairs,
    parse_pair,
)
from servecap.analysis.headline import Held, headline
from servecap.analysis.slo import SloAnalysis
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import format_value
from servecap.kinds.agents_verdict import agents_plan_sentence
from servecap.kinds.registry import DEFAULT_KIND, KINDS, kind_of
from servecap.report.charts_compare import COMPARE_CHARTS
from servecap.report.charts_rate import RATE_CHARTS, has_rate_levels
from servecap.report.charts_spec import CHARTS
from servecap.report.comparison import ComparisonSection
from servecap.report.deployment import deployment_table
from servecap.report.kind_views import kind_chart_infos
from servecap.report.model import ReportModel, ReportOptions, RunMeta
from servecap.report.simulated import simulated_label
from servecap.report.timeline import build_timeline
from servecap.report.verified import verified_users
from servecap.storage.agents_verification import agents_plan_of
from servecap.storage.capacity_answer import answer_for
from servecap.storage.capacity_targets import targets_answer_for
from servecap.storage.formats.br_out import BR_DIR
from servecap.storage.runs import Run, run_goodput, status_text

SUMMARY_KINDS = (
    "imported_definitions",
    "client_bound",
    "speedup",
    "break_even",
    "ttft_jump",
    "server_queue",
    "spec_acceptance_falls",
    "spec_stops_paying",
    "consistent_jump",
    "inconsistent",
    "output_falls",
    "capacity",
)


def run_meta(run: Run, name: str) -> RunMeta:
    info = run.info
    counts = [lv.n_requests for lv in run.levels if lv.n_requests is not None]
    return RunMeta(
        name=name,
        path=str(run.path),
        source=info.source,
        status=info.status,
        status_text=status_text(run),
        tool_version=info.tool_version,
        created_at=info.created_at,
        time_scale=info.time_scale,
        notes=list(info.notes),
        config=dict(info.config),
        server=dict(info.server),
        deployment=dict(info.deployment),
        n_requests=sum(counts) if counts else None,
        levels=list(run.levels),
        server_metrics=dict(info.server_metrics),
        cost=dict(info.cost),
        timeline=build_timeline(run),
        imported=dict(info.imported),
    )


def _unique_names(runs: list[Run]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for run in runs:
        seen[run.name] = seen.get(run.name, 0) + 1
        names.append(run.name if seen[run.name] == 1 else f"{run.name} ({seen[run.name]})")
    return names


def series_of(meta: RunMeta) -> ConfigSeries:
    raw = meta.config.get("output_tokens")
    known = isinstance(raw, int | float) and not isinstance(raw, bool)
    tokens = float(raw) if isinstance(raw, int | float) and known else None
    return ConfigSeries(
        name=meta.name,
        levels=meta.levels,
        # a published table (the seed's): its rps and tps_p90 follow the publisher's
        # definitions; another tool's file imported with its tool named has its rps as
        # completed / duration, servecap's own
        imported=meta.source == "imported" and not meta.imported,
        output_tokens=tokens,
        output_tokens_source="run config (max_tokens)" if known else "",
    )


def resolve_pairs(specs: list[str], names: list[str]) -> list[Pair]:
    if specs:
        return [parse_pair(text, names) for text in specs]
    return infer_pairs(names)


def build_model(
    runs: list[Run], options: ReportOptions | None = None,
    comparison: ComparisonSection | None = None,
) -> ReportModel:
    """The whole report as data: analysis, findings, deployment table, methodology (and,
    given one, the comparison it leads with)."""
    options = options or ReportOptions()
    if not runs:
        raise UserInputError("no runs to report on: name run directories or folders of runs")
    metas = [run_meta(run, name) for run, name in zip(runs, _unique_names(runs), strict=True)]
    empty = [m.name for m in metas if not m.levels]
    if empty:
        raise UserInputError(f"run(s) without any level summary: {', '.join(empty)}")
    names = [m.name for m in metas]
    analysis = analyse(
        [series_of(m) for m in metas],
        resolve_pairs(options.pairs, names),
        AnalysisOptions(
            slo=options.slo,
            low_load_max=options.low_load_max,
            high_load_above=options.high_load_above,
            reference=options.reference,
        ),
    )
    return ReportModel(
        title=options.title,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        tool_version=__version__,
        options=options,
        runs=metas,
        deployment=deployment_table(metas),
        methodology=methodology(metas, options),
        analysis=analysis,
        summary=summary_findings(analysis.findings),
        charts=list(CHARTS) + (list(RATE_CHARTS) if has_rate_levels(metas) else [])
        + (list(COMPARE_CHARTS) if comparison is not None else [])
        + kind_chart_infos(metas),
        goodput=_goodput(runs, metas, options),
        capacity=capacity_answers(runs) + agents_answers(runs, names, options.slo),
        headline=headlines(analysis.slo, options.slo, verified_users(metas, options.slo)),
        comparison=comparison,
    )


def capacity_answers(runs: list[Run]) -> list[str]:
    """The sentence of each `servecap capacity` answer a reported run belongs to, once."""
    sentences: list[str] = []
    for run in runs:
        several = targets_answer_for(Path(run.path))  # `capacity --target`: the delta first
        if several is not None and several.sentence() not in sentences:
            sentences.append(several.sentence())
        answer = answer_for(Path(run.path))
        if answer is not None and answer.sentence() not in sentences:
            sentences.append(answer.sentence())
    return sentences


def agents_answers(runs: list[Run], names: list[str], slo: SLO) -> list[str]:
    """The agents each run with agents levels holds under the report's SLOs (a `capacity
    --load agents` answer already says it at its own SLOs, before these)."""
    plans = [(name, agents_plan_of(run, slo)) for run, name in zip(runs, names, strict=True)]
    return [agents_plan_sentence(name, plan, slo) for name, plan in plans if plan is not None]


def headlines(
    slo: SloAnalysis, judged: SLO, verified: Callable[[str, str], int | None] | None = None
) -> dict[str, list[str]]:
    """The decision on the report's statistic first, then on the other one; `verified`
    gives a config's verified users on a statistic (None: not verified)."""
    order = sorted(slo.capacity, key=lambda stat: stat != judged.statistic)
    count = verified or (lambda config, stat: None)
    return {
        stat: headline(
            [
                Held(r.config, r.c_max, r.users, r.latency_mean_s, r.c_max_lower_bound,
                     verified=count(r.config, stat))
                for r in slo.capacity[stat]
            ],
            judged.model_copy(update={"statistic": stat}),
        )
        for stat in order
    }


def _goodput(
    runs: list[Run], metas: list[RunMeta], options: ReportOptions
) -> dict[str, dict[str, float | None]]:
    """Goodput per open-loop level of each run, under the report's SLO."""
    out: dict[str, dict[str, float | None]] = {}
    for run, meta in zip(runs, metas, strict=True):
        levels = run_goodput(run, options.slo)
        if levels:
            out[meta.name] = {str(key): g.goodput_rps for key, g in levels.items()}
    return out


def summary_findings(findings: list[Finding]) -> list[Finding]:
    """The executive summary: the findings that change a decision, in a fixed order."""
    return [f for kind in SUMMARY_KINDS for f in findings if f.kind == kind]


def _per_run(metas: list[RunMeta], get: Callable[[RunMeta], Any]) -> str:
    values = {m.name: get(m) for m in metas}
    shown = {k: ("not recorded" if v in (None, "", [], {}) else str(v)) for k, v in values.items()}
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    return "; ".join(f"{k}: {v}" for k, v in shown.items())


def methodology(metas: list[RunMeta], options: ReportOptions) -> list[tuple[str, str]]:
    """Setup and method, read from the runs (not typed in)."""
    slo = options.slo
    levels = sorted({lv.key for m in metas for lv in m.levels})
    kinds = list(dict.fromkeys(kind_of(key) for key in levels)) or [KINDS[DEFAULT_KIND]]
    bound = [f"{m.name} {lv.key}" for m in metas for lv in m.levels if lv.client_bound]
    health = any(lv.client_bound is not None for m in metas for lv in m.levels)
    return [
        ("Load model", "; ".join(kind.text.methodology for kind in kinds)),
        ("Source", _per_run(metas, lambda m: m.source)),
        ("Run status", _per_run(metas, lambda m: m.status_text or m.status)),
        ("Model", _per_run(metas, lambda m: m.server.get("model") or m.config.get("model"))),
        *(
            (
                f"{kind.text.quantity.capitalize()} levels",
                ", ".join(format_value(k.value) for k in levels if kind.owns(k)),
            )
            for kind in kinds
        ),
        ("Rounds per level", _per_run(metas, lambda m: m.config.get("rounds"))),
        ("Requests measured", _per_run(metas, lambda m: m.n_requests)),
        ("Input tokens", _per_run(metas, lambda m: m.config.get("input_tokens"))),
        ("Output tokens (max_tokens)", _per_run(metas, lambda m: m.config.get("output_tokens"))),
        ("Warm-up requests", _per_run(metas, lambda m: m.config.get("warmup"))),
        (
            "SLOs",
            f"TTFT <= {slo.ttft_ms:g} ms and TPS >= {slo.tps:g} tok/s, judged on "
            f"{'P90 (the tail)' if slo.statistic == 'p90' else 'the mean'}; "
            "P90 and mean both shown",
        ),
        ("Think time", f"{slo.think_time_s:g} s (assumed), users N = C_max x (1 + T / L_mean)"),
        (
            "Client-bound levels",
            ", ".join(bound) if bound else ("none flagged" if health else "not recorded"),
        ),
        *_worker_rows(metas),
        ("Benchmark Report v0.2.1", _per_run(metas, _br_partials)),
        ("Simulator time scale", _per_run(metas, lambda m: m.time_scale)),
        ("Simulated numbers", _per_run(metas, lambda m: simulated_label(m.server))),
        (
            "Tool version",
            f"servecap {__version__} (report); runs: " + _per_run(metas, lambda m: m.tool_version),
        ),
    ]


def _br_partials(meta: RunMeta) -> str:
    """Where the run's BR partials are (one a level, `formats/benchmark-report.md`)."""
    folder = Path(meta.path) / BR_DIR
    count = len(list(folder.glob("*.json"))) if folder.is_dir() else 0
    if count:
        return f"{folder}/ ({count} partial{'s' if count > 1 else ''}, one a level)"
    if meta.source != "measured":
        return "none (an imported run)"
    return f"none yet: servecap export {meta.path} --format br"


def _worker_rows(metas: list[RunMeta]) -> list[tuple[str, str]]:
    """Per level, the worker processes that ran it and any client-bound or dead ones
    (`--workers`, `--ray`); no row when every level ran in one process."""
    parts = []
    for meta in metas:
        for lv in meta.levels:
            if lv.workers is None:
                continue
            text = f"{meta.name} {lv.key}: {lv.workers}"
            if lv.workers_client_bound:
                text += " (client-bound: " + ", ".join(map(str, lv.workers_client_bound)) + ")"
            if lv.workers_died:
                text += " (died: " + ", ".join(map(str, lv.workers_died)) + ")"
            parts.append(text)
    if not parts:
        return []
    return [("Worker processes per level", "; ".join(parts)
             + "; levels not named ran in one process")]
