"""Rich tables for level summaries and capacity plans (shared by run, show and plan)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from servecap.api.plan import RunCapacity
from servecap.core.level_key import LEVEL_KINDS, LevelKey, format_value
from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary
from servecap.core.text import printable


def _fmt(value: float | None, digits: int = 1) -> str:
    return fmt_number(value, digits)


def _key_title(keys: Sequence[LevelKey]) -> str:
    """The level column's title: the kind's prefix (`c`), or `level` for mixed kinds."""
    kinds = {key.kind for key in keys}
    return LEVEL_KINDS[kinds.pop()].prefix if len(kinds) == 1 else "level"


def levels_table(title: str, levels: Sequence[LevelSummary]) -> Table:
    """The per-level table: P90 is the tail (10th percentile for TPS)."""
    # server text (a model id in the title) is never Rich markup, never a control sequence
    table = Table(title=Text(printable(title)), title_justify="left")
    for name in (
        _key_title([lv.key for lv in levels]), "ok", "fail", "TTFT ms mean", "TTFT P90",
        "ITL ms mean", "TPS mean", "TPS P90",
        "lat s mean", "req/s", "out tok/s", "served c", "lag p99 ms", "note",
    ):
        table.add_column(name, justify="right" if name != "note" else "left")
    for lv in levels:
        note = ", ".join(n for n, on in (("partial", lv.partial), ("client-bound",
                         lv.client_bound)) if on)
        table.add_row(
            format_value(lv.key.value), _fmt(lv.n_ok, 0), _fmt(lv.n_failed, 0),
            _fmt(lv.ttft_mean_ms), _fmt(lv.ttft_p90_ms), _fmt(lv.itl_mean_ms, 2),
            _fmt(lv.tps_mean), _fmt(lv.tps_p90), _fmt(lv.latency_mean_s, 2), _fmt(lv.rps, 2),
            _fmt(lv.output_tok_s), _fmt(lv.served_concurrency, 1), _fmt(lv.loop_lag_p99_ms, 2),
            note,
        )
    return table


def capacity_table(run: RunCapacity, statistic: str) -> Table:
    """SLO matrix of one run, with C_max and users in the title."""
    users, c_max = fmt_number(run.users), fmt_number(run.c_max)
    status = f" [{run.status}]" if run.status and run.status != "complete" else ""
    title = f"{run.name}{status}: C_max {c_max}, users {users} (SLOs on {statistic})"
    table = Table(title=Text(printable(title)), title_justify="left")
    keys = [LevelKey.coerce(lv.get("level") or lv.get("concurrency")) for lv in run.levels]
    for name in (_key_title(keys), f"TTFT {statistic} ms", "TTFT ok", f"TPS {statistic}",
                 "TPS ok"):
        table.add_column(name, justify="right")
    for key, lv in zip(keys, run.levels, strict=True):
        table.add_row(
            format_value(key.value), _fmt(lv["ttft"]), "yes" if lv["ttft_ok"] else "NO",
            _fmt(lv["tps"]), "yes" if lv["tps_ok"] else "NO",
        )
    return table
