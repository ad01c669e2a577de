"""Rows for the UI's tables, as plain dicts (no Streamlit, no metric math: values as stored)."""

from __future__ import annotations

from typing import Any

from servecap.api.stored.plan import RunCapacity
from servecap.core.level_key import LevelKey, format_value
from servecap.core.numbers import rounded
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.storage.run_dir import Run

# (column title, LevelSummary field, digits), after the level's own column (`key_cell`)
LEVEL_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("ok", "n_ok", 0),
    ("failed", "n_failed", 0),
    ("TTFT mean (ms)", "ttft_mean_ms", 1),
    ("TTFT P90 (ms)", "ttft_p90_ms", 1),
    ("ITL mean (ms)", "itl_mean_ms", 2),
    ("ITL P90 (ms)", "itl_p90_ms", 2),
    ("TPS mean", "tps_mean", 1),
    ("TPS P90 (tail)", "tps_p90", 1),
    ("latency mean (s)", "latency_mean_s", 3),
    ("latency P90 (s)", "latency_p90_s", 3),
    ("req/s", "rps", 2),
    ("output tok/s", "output_tok_s", 1),
    ("served concurrency", "served_concurrency", 2),
)

# An open-loop level's own columns (from the schedule, over the steady-state window).
RATE_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("TTFT from arrival P90 (ms)", "ttft_sched_p90_ms", 1),
    ("latency from arrival mean (s)", "latency_sched_mean_s", 3),
    ("achieved req/s", "achieved_rps", 2),
    ("send lateness p99 (ms)", "send_lateness_p99_ms", 2),
    ("cap waits", "n_cap_waited", 0),
    ("left out (window)", "n_left_out", 0),
)

_fmt = rounded


def level_rows(levels: list[LevelSummary]) -> list[dict[str, Any]]:
    """One row a level, in the order the run measured them."""
    rows = []
    for level in levels:
        row = key_cell(level.key)
        row.update(
            {title: _fmt(getattr(level, name), digits) for title, name, digits in LEVEL_COLUMNS}
        )
        if kind_of(level.key).offered_rate(level.key) is not None:
            row.update(
                {title: _fmt(getattr(level, name), digits) for title, name, digits in RATE_COLUMNS}
            )
        row["client-bound"] = {True: "yes", False: "no", None: ""}[level.client_bound]
        if level.workers is not None:  # split over worker processes: how many, which lagged
            row["workers"] = worker_cell(level)
        rows.append(row)
    return rows


def key_cell(key: LevelKey) -> dict[str, Any]:
    """The level's own column, titled by its kind: `{"c": 32}` for a closed loop."""
    return {key.prefix: key.value}


def verdict_rows(capacity: RunCapacity, statistic: str) -> list[dict[str, Any]]:
    """Per-level SLO verdicts of one run on the chosen statistic."""
    label = "P90" if statistic == "p90" else "mean"
    rows = []
    for item in capacity.levels:
        rows.append({
            **key_cell(LevelKey.coerce(item.get("level") or item.get("concurrency"))),
            f"TTFT {label} (ms)": _fmt(item.get("ttft"), 1),
            "TTFT ok": "yes" if item.get("ttft_ok") else "no",
            f"TPS {label}": _fmt(item.get("tps"), 1),
            "TPS ok": "yes" if item.get("tps_ok") else "no",
            **_goodput_cells(item),
        })
    return rows


def _goodput_cells(item: dict[str, Any]) -> dict[str, Any]:
    """An open-loop level's goodput and SLO attainment (nothing for other kinds)."""
    if "goodput_rps" not in item:
        return {}
    share = item.get("slo_attainment")
    return {
        "goodput (req/s)": _fmt(item.get("goodput_rps"), 2),
        "met both SLOs": "" if share is None else f"{100 * share:.0f}%",
    }


def capacity_rows(runs: list[RunCapacity]) -> list[dict[str, Any]]:
    return [
        {
            "run": item.name,
            # an open-loop run's top level is its highest compliant rate (`rate=4/s`)
            "C_max": item.c_max if item.c_max is not None else (item.top_level or "none"),
            "mean latency at C_max (s)": _fmt(item.latency_mean_s, 3),
            "users": item.users if item.users is not None else "none",
        }
        for item in runs
    ]


def _level_text(key: LevelKey) -> str:
    """`32` for c=32 (a closed loop's levels are listed as numbers), else the key: `fixed=2`."""
    return format_value(key.value) if kind_of(key).text.bare_values else str(key)


def run_label(run: Run) -> str:
    """How a run is named in pickers: its name, date and folder (unique)."""
    return f"{run.name}  ·  {run.info.created_at or '?'}  ·  {run.path.name}"


def history_row(run: Run) -> dict[str, Any]:
    config = run.info.config
    client = config.get("client") if isinstance(config.get("client"), dict) else {}
    model = config.get("model") or ""
    return {
        "name": run.name,
        "server": str((client or {}).get("base_url") or run.info.source),
        "model": str(model),
        "date": run.info.created_at,
        "levels": ", ".join(_level_text(lv.key) for lv in run.levels),
        "status": run.info.status,
        "folder": run.path.name,
    }


def worker_cell(level: LevelSummary) -> str:
    """`2`, `2 (client-bound: 1)`, `2 (died: 0)`: the workers a level ran on."""
    notes = []
    if level.workers_client_bound:
        notes.append("client-bound: " + ", ".join(map(str, level.workers_client_bound)))
    if level.workers_died:
        notes.append("died: " + ", ".join(map(str, level.workers_died)))
    return f"{level.workers}" + (f" ({'; '.join(notes)})" if notes else "")
