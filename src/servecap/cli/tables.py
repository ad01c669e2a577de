"""Tables for level summaries and capacity plans (shared by run, show, plan and demo).

A number is never cut: on a terminal the table keeps the columns that fit its width, SLO
ones first (an 80-column CI log gets c, counts, TTFT, TPS and latency; a wide terminal gets
everything), and each kept column is as wide as its widest cell. Piped or redirected output
gets plain text, every column, no box drawing and no colour, so it greps and diffs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from servecap.analysis.headline import Held, c_max_text, headline, lower_bound_note
from servecap.api.stored.plan import CapacityReport, RunCapacity
from servecap.core.level_key import LevelKey, format_value
from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary
from servecap.core.text import printable
from servecap.kinds.agents_verdict import agents_plan_sentence
from servecap.report.cost_views import COST_HEADER, basis_text, cost_rows
from servecap.report.energy_views import ENERGY_HEADER, energy_cells

# rich's per-column cost beside the text: one space of padding each side and a rule
_COLUMN_EXTRA = 3


def _fmt(value: float | None, digits: int = 1) -> str:
    return fmt_number(value, digits)


@dataclass
class TextTable:
    """A table as text cells; `keep` is how many leading columns are never dropped."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    keep: int = 1
    order: list[int] = field(default_factory=list)  # drop priority: the last goes first
    footer: list[str] = field(default_factory=list)

    def widths(self) -> list[int]:
        cells = [self.header, *self.rows]
        return [max(len(row[i]) for row in cells) for i in range(len(self.header))]

    def columns_for(self, width: int) -> list[int]:
        """The columns that fit `width`, in their original order."""
        wanted = self.order or list(range(len(self.header)))
        sizes = self.widths()
        chosen: list[int] = []
        used = 1
        for index in wanted:
            need = sizes[index] + _COLUMN_EXTRA
            if len(chosen) >= self.keep and used + need > width:
                continue
            chosen.append(index)
            used += need
        return sorted(chosen)


def print_table(console: Console, table: TextTable) -> None:
    """On a terminal: a rich table of the columns that fit; elsewhere: plain aligned text."""
    if not console.is_terminal:
        console.print(plain_text(table), markup=False, highlight=False, soft_wrap=True, end="")
        return
    chosen = table.columns_for(console.width)
    sizes = table.widths()
    # server text (a model id, a run name in the title) is never Rich markup or a control
    rich_table = Table(title=Text(printable(table.title)), title_justify="left",
                       box=box.SIMPLE_HEAD)
    for i in chosen:
        rich_table.add_column(
            table.header[i], justify="left" if _is_note(table, i) else "right",
            min_width=sizes[i], no_wrap=True,
        )
    for row in table.rows:
        rich_table.add_row(*(row[i] for i in chosen))
    hidden = [table.header[i] for i in range(len(table.header)) if i not in chosen]
    caption = list(table.footer)
    if hidden:
        caption.append(f"not shown at {console.width} columns: {', '.join(hidden)}")
    if caption:
        rich_table.caption = "\n".join(caption)
        rich_table.caption_justify = "left"
    console.print(rich_table, highlight=False)


def plain_text(table: TextTable) -> str:
    """Every column, aligned with two spaces, numbers right-aligned; no box, no styles."""
    sizes = table.widths()

    def line(cells: Sequence[str]) -> str:
        parts = [c.rjust(w) if not _is_note(table, i) else c.ljust(w)
                 for i, (c, w) in enumerate(zip(cells, sizes, strict=True))]
        return "  ".join(parts).rstrip()

    out = [printable(table.title), line(table.header), *(line(row) for row in table.rows),
           *table.footer]
    return "\n".join(out) + "\n"


def _is_note(table: TextTable, index: int) -> bool:
    return table.header[index] == "note"


# (header, attribute, digits); the first five always stay, the rest go in reverse order
_LEVEL_COLUMNS = (
    ("c", "concurrency", 0), ("ok", "n_ok", 0), ("fail", "n_failed", 0),
    ("TTFT P90", "ttft_p90_ms", 1), ("TPS P90", "tps_p90", 1),
    ("TTFT mean", "ttft_mean_ms", 1), ("TPS mean", "tps_mean", 1),
    ("lat mean", "latency_mean_s", 2), ("ITL mean", "itl_mean_ms", 2),
    ("out tok/s", "output_tok_s", 1), ("req/s", "rps", 2), ("served c", "served_concurrency", 1),
    ("lag p99", "loop_lag_p99_ms", 2),
)
_UNITS = "TTFT and ITL ms, TPS tok/s per user, latency s, lag ms; P90 is the tail"


def _key_title(keys: Sequence[LevelKey]) -> str:
    """The level column's title: the kind's prefix (`c`), or `level` for mixed kinds."""
    prefixes = {key.prefix for key in keys}
    return prefixes.pop() if len(prefixes) == 1 else "level"


def levels_table(title: str, levels: Sequence[LevelSummary]) -> TextTable:
    """The per-level table: P90 is the tail (10th percentile for TPS)."""
    header = [_key_title([lv.key for lv in levels])]
    header += [h for h, _, _ in _LEVEL_COLUMNS[1:]] + ["note"]
    rows = [
        [format_value(lv.key.value)]
        + [_fmt(getattr(lv, attr), digits) for _, attr, digits in _LEVEL_COLUMNS[1:]]
        + [_note(lv)]
        for lv in levels
    ]
    note = len(header) - 1
    order = [0, 1, 2, 3, 4, note, *range(5, note)]  # then TTFT mean, TPS mean, latency, ...
    return TextTable(f"{title}  ({_UNITS})", header, rows, keep=5, order=order)


def _note(level: LevelSummary) -> str:
    notes = [n for n, on in (("partial", level.partial), ("client-bound", level.client_bound))
             if on]
    notes += [_short(w) for w in level.warnings if w.startswith("P90 from only")]
    return "; ".join(notes)


def _short(warning: str) -> str:
    """`P90 from only 3 samples (want >= 10)` -> `P90 of 3 samples`."""
    return warning.split(" (")[0].replace(" from only ", " of ")


def capacity_table(run: RunCapacity, statistic: str) -> TextTable:
    """SLO matrix of one run, with C_max and users in the title."""
    users = fmt_number(run.users)
    if run.users is not None and run.c_max_lower_bound:
        users = f">= {users}"
    status = f" [{run.status}]" if run.status and run.status != "complete" else ""
    top = f"top rate {run.top_level}" if run.top_level else c_max_text(
        run.c_max, run.c_max_lower_bound
    )
    title = (f"{run.name}{status}: {top}, users {users} predicted, {_verified_text(run)} "
             f"(SLOs on {statistic})" + _bracket(run))
    if run.verification is not None and run.c_max is None and not run.top_level:
        title = (f"{run.name}{status}: predicted users {fmt_number(run.predicted_users)} "
                 f"(Little's law), {_verified_text(run)} (SLOs on "
                 f"{run.verification.get('statistic')})")
    keys = [LevelKey.coerce(lv.get("level") or lv.get("concurrency")) for lv in run.levels]
    rated = any("goodput_rps" in lv for lv in run.levels)
    header = [_key_title(keys), f"TTFT {statistic} ms", "TTFT ok", f"TPS {statistic}",
              "TPS ok", *(["goodput req/s", "met SLO"] if rated else []), "verdict (95% CI)",
              "note"]
    rows = [
        [
            format_value(key.value), _fmt(lv["ttft"]), "yes" if lv["ttft_ok"] else "NO",
            _fmt(lv["tps"]), "yes" if lv["tps_ok"] else "NO",
            *(_goodput_cells(lv) if rated else []), _verdict(lv),
            _short(lv.get("sample_warning") or ""),
        ]
        for key, lv in zip(keys, run.levels, strict=True)
    ]
    footer = [lower_bound_note(run.c_max)] if run.c_max_lower_bound and run.c_max else []
    return TextTable(title, header, rows, keep=5, footer=footer)


def _verified_text(run: RunCapacity) -> str:
    """`verified 90 (measured)`, `none verified` or `not verified` (no verify run)."""
    if run.verification is None:
        return "not verified"
    if not run.verified_users:
        return "verified none (no N passed)"
    return f"verified {fmt_number(run.verified_users)} (measured)"


def _goodput_cells(level: dict[str, Any]) -> list[str]:
    """An open-loop level's goodput and the share of its requests that met both SLOs."""
    share = level.get("slo_attainment")
    return [_fmt(level.get("goodput_rps"), 2), "-" if share is None else f"{100 * share:.0f}%"]


def headline_lines(report: CapacityReport) -> list[str]:
    """The decision sentence(s) for the plan's runs (`analysis.headline`)."""
    held = [
        Held(r.name, r.c_max, r.users, r.latency_mean_s, r.c_max_lower_bound,
             verified=(r.verified_users or 0) if r.verification is not None else None)
        for r in report.runs if r.levels  # an agents-only run has no per-call levels
    ]
    agents = [agents_plan_sentence(r.name, r.agents, report.slo)
              for r in report.runs if r.agents is not None]
    return (headline(held, report.slo) if held else []) + agents


def print_plan(console: Console, report: CapacityReport, headline_last: bool = False) -> None:
    """The headline, then one SLO table per run (`headline_last`: the tables, then the
    headline, so that a demo's final lines are its answer)."""
    if not headline_last:
        _print_headline(console, report)
    for run in report.runs:
        if run.levels:
            print_table(console, capacity_table(run, report.slo.statistic))
        if run.cost is not None:
            print_table(console, TextTable(
                f"Cost ({basis_text(run.cost)})", COST_HEADER[1:],
                [row[1:] for row in cost_rows(run.name, run.cost)], keep=2))
        if run.energy:
            print_table(console, TextTable(
                "Energy (over each level's token window)", ENERGY_HEADER[1:],
                [[point.get("level", ""), at, *energy_cells(point)]
                 for at, point in run.energy.items()], keep=2))
        for table in [*(run.kind_tables or []), *filter(None, [run.prefix_table])]:
            print_table(console, TextTable(table.title, table.header, table.rows,
                                           footer=[table.note] if table.note else []))
    if headline_last:
        _print_headline(console, report)


def _print_headline(console: Console, report: CapacityReport) -> None:
    console.print()
    for line in headline_lines(report):
        console.print(printable(line), markup=False, highlight=False)
    console.print()


def _bracket(run: RunCapacity) -> str:
    """C_max's neighbours and the SLO that binds above it, for the table title."""
    parts = []
    if run.below is not None:
        parts.append(f"level below {fmt_number(run.below)}")
    if run.above is not None:
        binding = ", ".join(run.binding) or "?"
        parts.append(f"first miss {fmt_number(run.above)} (binding: {binding})")
    return f"; {'; '.join(parts)}" if parts else ""


def _verdict(lv: dict[str, Any]) -> str:
    """pass / fail / undecided, with the TTFT and TPS intervals it was read from."""
    verdict = lv.get("verdict") or "n/a"
    cis = [f"{name} [{_fmt(ci[0])}, {_fmt(ci[1])}]" for name, ci in
           (("TTFT", lv.get("ttft_ci")), ("TPS", lv.get("tps_ci"))) if ci]
    return f"{verdict} ({'; '.join(cis)})" if cis else verdict
