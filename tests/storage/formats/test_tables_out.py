"""Tables out: `servecap export RUN --format parquet|csv` writes requests and level
summaries that read back (pyarrow, the csv module) with the run's rows and values; without
pyarrow, parquet is one clear message and exit 2."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.storage.runs import load_run

pytestmark = pytest.mark.timeout(120)


def export(run_dir: Path, fmt: str, out: Path) -> None:
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [f"levels.{fmt}", f"requests.{fmt}"]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def stored_rows(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]


def check_tables(run_dir: Path, requests: list[dict[str, Any]], levels: list[dict[str, Any]],
                 number: Any) -> None:
    """The tables hold the run: a row a stored request in order, a row a level, and the
    counted successes' TTFT mean is the level summary's."""
    run = load_run(run_dir)
    stored = stored_rows(run_dir)
    assert [number(r["request_id"]) for r in requests] == [r["request_id"] for r in stored]
    assert [r["level"] for r in levels] == [str(lv.key) for lv in run.levels]
    for row, summary in zip(levels, run.levels, strict=True):
        assert number(row["ttft_p90_ms"]) == pytest.approx(summary.ttft_p90_ms, rel=1e-12)
        assert number(row["n_requests"]) == summary.n_requests
        counted = [r for r in requests if r["level"] == row["level"] and r["counted"]]
        assert len(counted) == summary.n_requests
        ttfts = [number(r["ttft_ms"]) for r in counted if r["status"] == "ok"]
        assert sum(ttfts) / len(ttfts) == pytest.approx(summary.ttft_mean_ms, rel=1e-12)
    warmups = [r for r in requests if r["warmup"]]
    assert len(warmups) == 1 and not warmups[0]["counted"]


def test_csv_reads_back(closed_run: Path, tmp_path: Path) -> None:
    export(closed_run, "csv", tmp_path / "t")
    requests = read_csv(tmp_path / "t" / "requests.csv")
    for row in requests:  # csv cells are text: the booleans as Python wrote them
        row["counted"] = row["counted"] == "True"  # type: ignore[assignment]
        row["warmup"] = row["warmup"] == "True"  # type: ignore[assignment]
    check_tables(closed_run, requests, read_csv(tmp_path / "t" / "levels.csv"), float)


def test_parquet_reads_back(closed_run: Path, tmp_path: Path) -> None:
    export(closed_run, "parquet", tmp_path / "t")
    requests = pq.read_table(tmp_path / "t" / "requests.parquet")
    levels = pq.read_table(tmp_path / "t" / "levels.parquet")
    assert requests.schema.field("ttft_ms").type == "double"
    assert requests.schema.field("counted").type == "bool"
    check_tables(closed_run, requests.to_pylist(), levels.to_pylist(), lambda v: v)
    assert oct((tmp_path / "t" / "requests.parquet").stat().st_mode & 0o777) == "0o600"


@pytest.mark.slow
def test_parquet_without_pyarrow_is_exit_2(closed_run: Path, tmp_path: Path) -> None:
    """pyarrow made unimportable in a fresh interpreter, as where it is not installed."""
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from servecap.cli.main import app\n"
        f"app([ 'export', {str(closed_run)!r}, '--format', 'parquet', '--out', "
        f"{str(tmp_path / 'p')!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert "pip install 'servecap[parquet]'" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "p").exists()


def test_a_table_cell_cannot_become_a_formula(closed_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(closed_run, run_dir)
    rows = stored_rows(run_dir)
    rows[-1]["detail"] = "=HYPERLINK(\"http://x\")"
    (run_dir / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    export(run_dir, "csv", tmp_path / "t")
    requests = read_csv(tmp_path / "t" / "requests.csv")
    assert requests[-1]["detail"] == "'=HYPERLINK(\"http://x\")"
