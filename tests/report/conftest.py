from __future__ import annotations

from pathlib import Path

import pytest

from servecap.api.stored.report import (
    ReportModel,
    ReportOptions,
    ReportPaths,
    build_report,
    write_report,
)
from servecap.storage.import_summary import import_summary
from servecap.storage.runs import load_runs
from tests.seed_data import SEED_CSV

ORDER = ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"]


def seed_csv() -> Path:
    return SEED_CSV


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
