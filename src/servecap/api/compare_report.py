"""The comparison headline for `servecap report`: a stored comparison, or separate runs.

A comparison directory (one with `comparison.json`) is reanalysed from its records under the
report's SLO. Separate runs of the same workload are compared as one repeat per level, and
the headline says they were not interleaved. Runs of different workloads are not compared
(`require=True`, `report --compare`, makes that an error instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servecap.analysis.capacity_delta import Headline, headline
from servecap.analysis.comparison import Repeats, compare_targets
from servecap.api.compare_store import COMPARISON_FILE, is_comparison, reanalyse
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.report.markdown import md
from servecap.storage.run_dir import Run

COMPARISON_MD = "comparison.md"
# What must match for two runs to be compared: the load and the requests, not the target.
WORKLOAD_KEYS = ("endpoint", "concurrency", "rounds", "input_tokens", "output_tokens", "load")


def workload_of(run: Run) -> dict[str, Any]:
    return {k: run.info.config.get(k) for k in WORKLOAD_KEYS}


def _check_same_workload(runs: Sequence[Run]) -> str | None:
    first = workload_of(runs[0])
    for run in runs[1:]:
        other = workload_of(run)
        differ = [k for k in WORKLOAD_KEYS if other[k] != first[k]]
        if differ:
            return (f"runs {runs[0].name!r} and {run.name!r} ran different workloads "
                    f"({', '.join(differ)} differ): they cannot be compared")
    return None


def _samples(runs: Sequence[Run]) -> dict[str, dict[LevelKey, Repeats]]:
    names = [r.name for r in runs]
    out: dict[str, dict[LevelKey, Repeats]] = {}
    for run in runs:
        label = run.name if names.count(run.name) == 1 else run.path.name
        per_level: dict[LevelKey, list[Any]] = {}
        for record in run.iter_records():
            if not record.warmup:
                per_level.setdefault(record.key, []).append(record)
        out[label] = {key: [records] for key, records in per_level.items()}
    return out


def comparison_headlines(
    paths: Sequence[Path], runs: Sequence[Run], slo: SLO, *, require: bool = False
) -> list[Headline]:
    """The headlines to lead a report with (none when the runs are not comparable)."""
    stored = [p for p in paths if is_comparison(p)]
    if stored:
        return [h for p in stored for h in reanalyse(p, slo)]
    usable = [r for r in runs if r.has_records]
    if len(usable) < 2 or len(usable) < len(runs):
        if require:
            raise UserInputError("--compare needs two or more runs with their request records")
        return []
    problem = _check_same_workload(usable)
    if problem:
        if require:
            raise UserInputError(problem)
        return []
    pairs = compare_targets(_samples(usable), interleaved=False)
    return [headline(p, slo) for p in pairs]


def headline_markdown(heads: Sequence[Headline]) -> str:
    """The headlines as a short markdown section."""
    lines = ["# Comparison headline", ""]
    for h in heads:
        lines += [f"## {md(h.b.name)} vs {md(h.a.name)}", ""]
        lines += [f"- {md(s)}" for s in h.sentences] + [""]
    lines.append(f"Method: see {COMPARISON_FILE} (method) and the README's compare section.")
    return "\n".join(lines) + "\n"
