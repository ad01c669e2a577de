from __future__ import annotations

from pathlib import Path

import pytest

from servecap.api.report import ReportModel, ReportOptions, ReportPaths, build_report, write_report
from servecap.storage.import_summary import import_summary
from servecap.storage.runs import load_runs

SEED_CSV = Path("/work/shared/seed/kimi-k3-b300-appendix-a.csv")
ORDER = ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"]


def seed_csv() -> Path:
    candidates = [SEED_CSV, Path(__file__).resolve().parents[3] / "shared/seed" / SEED_CSV.name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    pytest.skip("seed appendix CSV not available")


@pytest.fixture(scope="session")
def seed_run_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("seedruns")
    dirs = {p.name.rsplit("-", 1)[0]: p for p in import_summary(seed_csv(), out)}
    return [next(p for k, p in dirs.items() if k == name) for name in ORDER]


@pytest.fixture(scope="session")
def seed_model(seed_run_dirs: list[Path]) -> ReportModel:
    return build_report(load_runs(seed_run_dirs), ReportOptions(title="Kimi K3 on DGX-B300"))


@pytest.fixture(scope="session")
def seed_report(seed_model: ReportModel, tmp_path_factory: pytest.TempPathFactory) -> ReportPaths:
    return write_report(seed_model, tmp_path_factory.mktemp("report"))
