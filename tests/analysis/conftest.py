from __future__ import annotations

from pathlib import Path

import pytest

from servecap.analysis import Analysis, AnalysisOptions, ConfigSeries, analyse, infer_pairs
from servecap.storage.import_summary import import_summary
from servecap.storage.runs import load_runs
from tests.seed_data import SEED_CSV

ORDER = ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"]
# The seed report's section 1 choices, per scenario.
SEED_CHOICES = {
    "interactive_low_load": "vllm-spec",
    "high_load": "vllm-direct",
    "max_throughput": "vllm-direct",  # "vLLM (direct) or SGLang (direct)"
    "min_itl": "vllm-spec",
}


def seed_csv() -> Path:
    return SEED_CSV


@pytest.fixture(scope="session")
def seed_series(tmp_path_factory: pytest.TempPathFactory) -> list[ConfigSeries]:
    out = tmp_path_factory.mktemp("seedruns")
    import_summary(seed_csv(), out)
    runs = {r.name: r for r in load_runs([out])}
    return [ConfigSeries(n, runs[n].levels, imported=True) for n in ORDER]


@pytest.fixture(scope="session")
def seed_analysis(seed_series: list[ConfigSeries]) -> Analysis:
    pairs = infer_pairs([s.name for s in seed_series])
    return analyse(seed_series, pairs, AnalysisOptions(reference=SEED_CHOICES))
