"""The comparison `servecap report` leads with: a stored comparison, or separate runs.

A comparison directory (one with `comparison.json`) is reanalysed from its records under the
report's SLO. Separate runs of the same workload are compared as one repeat per level, and
the headline says they were not interleaved. Runs of different workloads are not compared
(`require=True`, `report --compare`, makes that an error instead). The result is the
report's `ComparisonSection` (`report.comparison`): the HTML and Markdown report open with
it, and its charts carry the intervals as error bars.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servecap.analysis.capacity_delta import Headline, headline
from servecap.analysis.comparison import PairComparison, Repeats, compare_targets
from servecap.api.comparison.store import METHOD, is_comparison, read_comparison, reanalyse_pairs
from servecap.api.stored.report import ReportModel, ReportOptions, build_report
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.core.errors import SettingError, UserInputError
from servecap.core.level_key import LevelKey
from servecap.report.comparison import ComparisonSection, comparison_section
from servecap.report.comparison_md import comparison_markdown
from servecap.storage.capacity_targets import probe_runs
from servecap.storage.run_dir import Run
from servecap.storage.runs import load_runs
from servecap.storage.safe_files import write_atomic

COMPARISON_MD = "comparison.md"
# What must match for two runs to be compared: the load and the requests, not the target.
WORKLOAD_KEYS = ("endpoint", "concurrency", "rounds", "input_tokens", "output_tokens", "load")


@dataclass
class Compared:
    """Pairs and their headlines, in the same order, and how they were measured."""

    pairs: list[PairComparison] = field(default_factory=list)
    heads: list[Headline] = field(default_factory=list)
    repeats: int | None = None
    schedule: str = "interleaved"


def report_runs(paths: Sequence[Path]) -> list[Run]:
    """The runs a report covers: of a comparison directory its targets' runs (a verify run
    made inside it is not a deployment; the report finds it beside the sweep it verified),
    of any other path every run it holds."""
    dirs: list[Path] = []
    for path in paths:
        if is_comparison(path):
            data = read_comparison(path)
            dirs += [path / t["run_dir"] for t in data.get("targets", []) if t.get("run_dir")]
        elif capacity_probes := probe_runs(path):  # `capacity --target`: each one's probes
            dirs += capacity_probes
        else:
            dirs.append(path)
    return load_runs(dirs)


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


def find_comparison(
    paths: Sequence[Path], runs: Sequence[Run], slo: SLO, *, require: bool = False
) -> Compared | None:
    """What to lead a report with: None when the runs are not comparable (and not
    `require`d to be; then that is a `UserInputError`, before anything is written)."""
    stored = [p for p in paths if is_comparison(p)]
    if stored:
        out = Compared()
        for path in stored:
            data, pairs, heads = reanalyse_pairs(path, slo)
            out.pairs += pairs
            out.heads += heads
            out.repeats = int(data.get("repeats", 0)) or None
            out.schedule = str(data.get("schedule", "interleaved"))
        return out
    usable = [r for r in runs if r.has_records]
    if len(usable) < 2 or len(usable) < len(runs):
        if require:
            raise SettingError("{compare} needs two or more runs with their request records",
                               "compare")
        return None
    problem = _check_same_workload(usable)
    if problem:
        if require:
            raise UserInputError(problem)
        return None
    pairs = compare_targets(_samples(usable), interleaved=False)
    return Compared(pairs, [headline(p, slo) for p in pairs], repeats=1)


def section_of(
    compared: Compared, runs: Sequence[Run], slo: SLO, cost: CostFields | None = None
) -> ComparisonSection:
    """The report's comparison section, small-sample warnings from the runs' levels, and
    the cost per served user where each run's GPUs and price are known (`cost` over each
    run's stored ones)."""
    levels_of = {run.name: run.levels for run in runs}
    costs = {run.name: (cost or CostFields()).over(run.info.cost) for run in runs}
    return comparison_section(compared.pairs, compared.heads, slo, METHOD, levels_of,
                              compared.repeats, compared.schedule, costs)


def compared_report(
    paths: Sequence[Path], runs: Sequence[Run], options: ReportOptions, *,
    require: bool = False,
) -> tuple[ReportModel, ComparisonSection | None]:
    """The report's model, leading with the runs' comparison when there is one."""
    found = find_comparison(paths, runs, options.slo, require=require)
    section = section_of(found, runs, options.slo, options.cost) if found else None
    return build_report(list(runs), options, section), section


def write_comparison_md(section: ComparisonSection, out_dir: Path) -> Path:
    """`comparison.md` beside the report: the comparison alone."""
    path = out_dir / COMPARISON_MD
    return write_atomic(path, comparison_markdown(section))
