"""Tables as rows of text, shared by the HTML and Markdown renderers (escaping is theirs)."""

from __future__ import annotations

from pydantic import BaseModel

from servecap.core.level_key import LevelKey, format_value
from servecap.core.numbers import fmt_number
from servecap.report.model import ReportModel
from servecap.report.tables import APPENDIX_COLUMNS, appendix_header
from servecap.report.verified import verified_cell, verified_users


class Table(BaseModel):
    title: str
    header: list[str]
    rows: list[list[str]]


_f = fmt_number


OVERVIEW = (
    ("TTFT mean (ms)", "ttft", 1),
    ("ITL mean (ms)", "itl", 2),
    ("TPS mean (tok/s)", "tps", 1),
    ("Latency mean (s)", "latency", 2),
)


def overview(model: ReportModel, key: LevelKey) -> Table:
    """The seed's "c=1 and c=64" comparison at level `key`: one column per config."""
    rows = []
    for label, metric, digits in OVERVIEW:
        row = [label]
        for run in model.runs:
            lv = next((x for x in run.levels if x.key == key), None)
            row.append(_f(lv.value(metric, "mean") if lv else None, digits))
        rows.append(row)
    rows.append(
        ["Aggregate output (tok/s)"]
        + [_f(model.analysis.aggregate(r.name).at(key), 0) for r in model.runs]
    )
    rows.append(
        ["System throughput (req/s)"]
        + [
            _f(
                next(
                    (
                        p.rps
                        for p in model.analysis.throughput[r.name]
                        if p.level == key
                    ),
                    None,
                ),
                2,
            )
            for r in model.runs
        ]
    )
    for sp in model.analysis.speedups:
        rows.append(
            [f"Speedup {sp.pair.label}"]
            + [
                _f(sp.at(key), 2) + "x" if r.name == sp.pair.spec else ""
                for r in model.runs
            ]
        )
    return Table(title=str(key), header=["metric", *model.configs], rows=rows)


def aggregate_table(model: ReportModel) -> Table:
    levels, prefix = model.analysis.levels, model.analysis.level_kind.prefix
    rows = [
        [format_value(c.value)] + [_f(a.at(c), 0) for a in model.analysis.aggregates]
        for c in levels
    ]
    return Table(title="Aggregate output (tok/s)", header=[prefix, *model.configs], rows=rows)


def speedup_table(model: ReportModel) -> Table:
    sps, prefix = model.analysis.speedups, model.analysis.level_kind.prefix
    rows = [
        [format_value(c.value)] + [(_f(sp.at(c), 2) + "x") if sp.at(c) else "" for sp in sps]
        for c in model.analysis.levels
    ]
    rows.append(
        ["break-even"]
        + [f"{prefix}~{sp.break_even:.1f}" if sp.break_even else "none" for sp in sps]
    )
    header = [prefix, *(s.pair.label for s in sps)]
    return Table(title="Speedup (TPS ratio)", header=header, rows=rows)


def slo_table(model: ReportModel, stat: str) -> Table:
    levels = model.analysis.levels
    rows = []
    thin = False
    for name in model.configs:
        cells = {}
        for c in model.analysis.slo.cells(stat, name):
            # beside the verdict it weakens: a P90 from fewer samples than it needs
            cells[c.level] = c.marks + (" *" if c.sample_warning else "")
            thin = thin or c.sample_warning is not None
        rows.append([name, *(cells.get(c, "") for c in levels)])
    label = "P90" if stat == "p90" else "mean"
    note = f"; * {label} from fewer than 10 samples" if thin else ""
    return Table(
        title=f"SLO compliance ({label}; TTFT mark, then TPS mark{note})",
        header=["config", *(str(c) for c in levels)],
        rows=rows,
    )


def capacity_table(model: ReportModel, stat: str) -> Table:
    """C_max and users per config: predicted (Little's law) beside verified (measured)."""
    verified = verified_users(model.runs, model.options.slo)
    rows = [
        [
            r.config,
            (">= " if r.c_max_lower_bound else "") + _f(r.c_max) if r.c_max else "none",
            _f(r.latency_mean_s, 2),
            (">= " if r.c_max_lower_bound else "") + _f(r.users or 0),
            verified_cell(verified(r.config, stat)),
        ]
        for r in model.analysis.slo.capacity[stat]
    ]
    bound = any(r.c_max_lower_bound for r in model.analysis.slo.capacity[stat])
    note = "; >= : every tested level passed, a lower bound: test higher" if bound else ""
    label = "P90" if stat == "p90" else "mean"
    return Table(
        title=f"Capacity ({label}{note})",
        header=["config", f"C_max ({label})", "L_mean at C_max (s)",
                "users (predicted, Little's law)", "users (verified, servecap verify)"],
        rows=rows,
    )


def consistency_table(model: ReportModel) -> Table:
    rows = [
        [
            r.config,
            format_value(r.level.value),
            _f(r.ttft_ms, 1),
            _f(r.itl_ms, 2),
            _f(r.tokens, 0),
            _f(r.predicted_s, 2),
            _f(r.latency_s, 2),
            f"{r.deviation:+.1%}",
            "yes" if r.ok else "NO",
        ]
        for r in model.analysis.consistency
    ]
    return Table(
        title="Consistency: latency vs TTFT + (N - 1) x ITL",
        header=[
            "config",
            model.analysis.level_kind.prefix,
            "TTFT (ms)",
            "ITL (ms)",
            "N",
            "predicted (s)",
            "latency (s)",
            "gap",
            "consistent",
        ],
        rows=rows,
    )


def appendix_tables(model: ReportModel) -> list[Table]:
    out = []
    for run in model.runs:
        rows = [
            [format_value(lv.key.value), *(_f(getattr(lv, col), 2) for col in APPENDIX_COLUMNS)]
            for lv in run.levels
        ]
        out.append(Table(title=run.name, header=appendix_header(model), rows=rows))
    return out


def deployment_tables(model: ReportModel) -> tuple[Table, Table]:
    dep = model.deployment

    def table(keys: list[str], title: str) -> Table:
        rows = [[k, *(dep.values[n].get(k, "-") for n in model.configs)] for k in keys]
        return Table(title=title, header=["setting", *model.configs], rows=rows)

    return table(dep.differing, "How the configurations differ"), table(dep.keys, "All settings")


def recommendation_table(model: ReportModel) -> Table:
    rows = []
    for rec in model.analysis.recommendations:
        why = rec.reason
        if rec.runner_up_reason:
            why += f" | runner-up {rec.runner_up_reason}"
        if rec.reference_note and rec.reference != rec.config:
            why += f" | {rec.reference_note}"
        rows.append([rec.title, rec.config or "-", why])
    return Table(
        title="Recommendation per scenario", header=["scenario", "config", "why"], rows=rows
    )
