"""L4: the deployment comparison report: data model, tables, charts, HTML, Markdown, zip.

Plotting libraries and jinja2 are imported inside the functions that draw or render, so
importing this package stays cheap.
"""

from servecap.report.build import build_model
from servecap.report.model import ReportModel, ReportOptions
from servecap.report.writer import ReportPaths, write_report

__all__ = ["ReportModel", "ReportOptions", "ReportPaths", "build_model", "write_report"]
