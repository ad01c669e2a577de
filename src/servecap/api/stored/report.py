"""Library entry points for the deployment comparison report (used by the CLI and the UI)."""

from __future__ import annotations

from pathlib import Path

from servecap.core.errors import UserInputError, bad_setting
from servecap.report import ReportModel, ReportOptions, ReportPaths
from servecap.report import build_model as _build_model
from servecap.report import write_report as _write_report
from servecap.report.comparison import ComparisonSection
from servecap.sim import Profile
from servecap.storage.runs import Run


def build_report(
    runs: list[Run], options: ReportOptions | None = None,
    comparison: ComparisonSection | None = None, predict_with: Profile | None = None,
) -> ReportModel:
    """The report as data (analysis, findings, recommendations, tables' inputs), leading
    with `comparison` when given (`api.comparison.report`), and with `predict_with`'s
    prediction beside each closed-loop run (`api.predict.predict_beside`).

    Raises `UserInputError` for no runs, runs without summaries, or a bad `--pair`.
    """
    model = _build_model(runs, options, comparison)
    if predict_with is None:
        return model
    from servecap.api.predict.predict_beside import with_predictions

    return with_predictions(model, predict_with)


def write_report(model: ReportModel, out_dir: Path) -> ReportPaths:
    """Write report.html, report.md, charts/, tables/ and results.zip into `out_dir`.

    An `out_dir` that is a file, or cannot be written, is a `UserInputError` (exit 2).
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise bad_setting("out_dir", f"{out_dir} is a file, not a directory")
    try:
        return _write_report(model, out_dir)
    except OSError as exc:
        raise UserInputError(
            f"cannot write the report in {out_dir}: {exc.strerror or exc}"
        ) from exc


__all__ = ["ReportModel", "ReportOptions", "ReportPaths", "build_report", "write_report"]
