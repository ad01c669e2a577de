"""The report's data model: everything a renderer (HTML, Markdown, UI) shows, computed once."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from servecap.analysis import Analysis, Finding
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.core.summary import LevelSummary
from servecap.report.comparison import ComparisonSection
from servecap.report.predicted import PredictedRun
from servecap.report.timeline import Timeline


class ReportOptions(BaseModel):
    """What the report is asked to compare and judge by."""

    title: str = "Deployment comparison"
    pairs: list[str] = Field(default_factory=list)  # "SPEC:BASE"; empty: inferred from names
    slo: SLO = Field(default_factory=SLO)
    low_load_max: int = 8
    high_load_above: int = 16
    reference: dict[str, str] = Field(default_factory=dict)  # scenario -> a published choice
    # `--gpus`/`--gpu-hour-cost`/`--currency`, over each run's stored cost (report.cost_views)
    cost: CostFields = Field(default_factory=CostFields)


class RunMeta(BaseModel):
    """One compared run: its metadata and level summaries."""

    name: str
    path: str
    source: str
    status: str
    tool_version: str
    status_text: str = ""  # status, why it stopped, partial levels, --insecure
    created_at: str
    time_scale: float | None
    notes: list[str]
    config: dict[str, Any]
    server: dict[str, Any]
    deployment: dict[str, Any]
    n_requests: int | None
    levels: list[LevelSummary]
    server_metrics: dict[str, Any] = Field(default_factory=dict)  # run.json's scrape status
    cost: dict[str, Any] = Field(default_factory=dict)  # run.json's cost flags, as given
    timeline: Timeline | None = None  # client and server on one clock (scraped runs only)
    # `servecap import` of another tool's file: its tool, version, files, unmapped fields
    imported: dict[str, Any] = Field(default_factory=dict)

    @property
    def imported_label(self) -> str:
        """`imported from AIPerf 0.13.0 (file, ...)`, or "" for any other run."""
        if not self.imported:
            return ""
        files = ", ".join(str(f) for f in self.imported.get("files", []))
        version = self.imported.get("tool_version") or "(no version recorded)"
        return f"imported from {self.imported.get('tool')} {version} ({files})"


class DeploymentTable(BaseModel):
    """Deployment settings per config, flattened to `key -> text`; `differing` keys vary."""

    keys: list[str]
    values: dict[str, dict[str, str]]
    differing: list[str]
    commands: dict[str, str]


class ChartInfo(BaseModel):
    id: str
    slug: str
    title: str
    caption: str


class ReportModel(BaseModel):
    title: str
    generated_at: str
    tool_version: str
    options: ReportOptions
    runs: list[RunMeta]
    deployment: DeploymentTable
    methodology: list[tuple[str, str]]
    analysis: Analysis
    summary: list[Finding]
    charts: list[ChartInfo]
    # `servecap capacity`'s answers for the reported runs, one sentence each: the report
    # opens with them (they rest on the probes' early-stopped verdicts, not point values)
    capacity: list[str] = Field(default_factory=list)
    # statistic -> the decision sentence(s) the report opens with (analysis.headline)
    headline: dict[str, list[str]] = Field(default_factory=dict)
    # Open-loop runs: goodput (requests/s meeting every SLO) by run name and level text.
    goodput: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    # A comparison (stored, or separate runs of one workload): the report leads with it.
    comparison: ComparisonSection | None = None
    # `--predict PROFILE`: the profile's prediction beside each closed-loop run (section 12)
    predicted: list[PredictedRun] = Field(default_factory=list)

    @property
    def configs(self) -> list[str]:
        return [run.name for run in self.runs]

    def run(self, name: str) -> RunMeta:
        return next(r for r in self.runs if r.name == name)
