import json

import pytest

from servecap.api.stored.plan import plan_capacity
from servecap.core.config import SLO
from servecap.core.errors import DataFormatError
from servecap.storage.import_summary import import_summary
from servecap.storage.safe_files import neutralise_cell, safe_name
from tests.seed_data import SEED_CSV

ORDER = ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"]


@pytest.fixture(scope="module")
def seed_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("seed")
    import_summary(SEED_CSV, out)
    return out


@pytest.mark.parametrize(
    ("stat", "c_max", "users"),
    [("p90", [32, 32, 16, 2], [427, 266, 261, 59]),
     ("mean", [64, 32, 64, 32], [682, 266, 717, 187])],
)
def test_seed_capacity(seed_runs, stat, c_max, users):
    report = plan_capacity([seed_runs], SLO(statistic=stat))
    by_name = {run.name: run for run in report.runs}
    assert [by_name[n].c_max for n in ORDER] == c_max
    assert [by_name[n].users for n in ORDER] == users


def test_plan_json_shape_is_stable(seed_runs):
    data = json.loads(plan_capacity([seed_runs], SLO()).model_dump_json(include={"runs"}))
    run = data["runs"][0]
    # The original shape, plus the fields issues 13 and 16 added (extended, not changed).
    assert set(run) == {"name", "c_max", "latency_mean_s", "users", "levels"} | {
        "c_max_lower_bound", "below", "above", "binding", "verdict_at_c_max", "verdict_above",
        "predicted_users", "verified_users", "verification"}
    assert set(run["levels"][0]) == {"concurrency", "ttft", "tps", "ttft_ok", "tps_ok"} | {
        "sample_warning", "verdict", "ttft_verdict", "tps_verdict", "ttft_ci", "tps_ci",
        "latency_ci", "n_ok", "warnings", "intervals"}


def test_unknown_and_missing_columns_are_named(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("cfg,concurrency,ttft_mean_ms,bogus\nx,1,2,3\n")
    expected = r"missing column\(s\): config.*unknown column\(s\): cfg, bogus"
    with pytest.raises(DataFormatError, match=expected):
        import_summary(bad, tmp_path / "out")


def test_bad_values_name_the_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("config,concurrency,ttft_mean_ms\nx,1,fast\n")
    with pytest.raises(DataFormatError, match=r"bad.csv:2: ttft_mean_ms"):
        import_summary(bad, tmp_path / "out")


def test_binary_file_is_refused(tmp_path):
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"\x00\x01\x02config")
    with pytest.raises(DataFormatError, match="binary"):
        import_summary(bad, tmp_path / "out")


def test_safe_names_and_cells():
    assert "/" not in safe_name("../../etc/x") and not safe_name("../../etc/x").startswith(".")
    assert safe_name("...") == "run"
    assert neutralise_cell("=cmd()") == "'=cmd()"
    assert neutralise_cell("plain") == "plain"
