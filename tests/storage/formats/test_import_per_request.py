"""AIPerf, GuideLLM and SGLang files made by the tools against the simulator import, and
`servecap plan` on them gives the C_max computed here by hand from each file's own
per-request numbers (servecap's definitions: TTFT from the send, TPS = N / latency)."""

from __future__ import annotations

import json

import pytest

from servecap.storage.run_dir import load_run_info
from tests.storage.formats.peer_files import (
    AIPERF,
    GUIDELLM,
    SGLANG,
    VLLM,
    import_one,
    p90_tail,
    plan_json,
    top_passing,
)

# (TTFT ms, TPS): a strict pair that only the lower level meets, a loose one both meet.
SLOS = [(200.0, 40.0), (1000.0, 20.0)]
STRICT_SLOS = [(300.0, 30.0), (1000.0, 20.0)]


def aiperf_by_hand() -> dict[float, tuple[float, float]]:
    levels = {}
    for export in AIPERF:
        streams = json.loads(export.read_text())["input_config"]["phases"][0]["concurrency"]
        rows = [json.loads(line)["metrics"]
                for line in (export.parent / "profile_export.jsonl").read_text().splitlines()]
        ttft = [m["time_to_first_token"]["value"] for m in rows]
        # the server's token count (usage), over the request's whole latency
        tps = [m["usage_completion_tokens"]["value"] / (m["request_latency"]["value"] / 1e3)
               for m in rows]
        levels[streams] = p90_tail(ttft, tps)
    return levels


def guidellm_by_hand() -> dict[float, tuple[float, float]]:
    levels = {}
    for bench in json.loads(GUIDELLM.read_text())["benchmarks"]:
        rows = bench["requests"]["successful"]
        ttft = [(r["info"]["timings"]["first_token_iteration"] - r["request_start_time"]) * 1e3
                for r in rows]
        tps = [r["output_tokens"] / (r["request_end_time"] - r["request_start_time"])
               for r in rows]
        levels[bench["config"]["strategy"]["streams"]] = p90_tail(ttft, tps)
    return levels


def sglang_by_hand() -> dict[float, tuple[float, float]]:
    levels = {}
    for line in SGLANG.read_text().splitlines():
        run = json.loads(line)
        ttft = [t * 1e3 for t in run["ttfts"]]
        # no per-request end in the file: the latency runs to the last chunk
        tps = [n / (t + sum(gaps))
               for n, t, gaps in zip(run["output_lens"], run["ttfts"], run["itls"], strict=True)]
        levels[run["request_rate"]] = p90_tail(ttft, tps)
    return levels


def vllm_by_hand() -> dict[float, tuple[float, float]]:
    levels = {}
    for path in VLLM:
        run = json.loads(path.read_text())
        ttft, tps = [], []
        for n, first, gaps in zip(run["output_lens"], run["ttfts"], run["itls"], strict=True):
            # vLLM's chat client stamps the role-only first chunk: N tokens, N gaps; the
            # first token is the one after the first gap
            assert len(gaps) == n
            ttft.append((first + gaps[0]) * 1e3)
            tps.append(n / (first + sum(gaps)))
        levels[run["max_concurrency"]] = p90_tail(ttft, tps)
    return levels


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("peers")
    return {
        "aiperf": import_one(out, *AIPERF),
        "guidellm": import_one(out, GUIDELLM),
        "sglang": import_one(out, SGLANG),
        "vllm": import_one(out, *VLLM),
    }


@pytest.mark.parametrize(("tool", "by_hand", "slos", "expected"), [
    ("aiperf", aiperf_by_hand, SLOS, [2, 8]),
    ("guidellm", guidellm_by_hand, SLOS, [2, 8]),
    ("vllm", vllm_by_hand, SLOS, [2, 8]),
])
def test_concurrency_files_plan_the_c_max_computed_by_hand(imported, tool, by_hand, slos,
                                                           expected):
    levels = by_hand()
    for (ttft_slo, tps_slo), want in zip(slos, expected, strict=True):
        assert top_passing(levels, ttft_slo, tps_slo) == want  # the SLOs discriminate
        plan = plan_json(imported[tool], ttft_slo, tps_slo)
        assert plan["c_max"] == want
        for row in plan["levels"]:
            ttft, tps = levels[row["concurrency"]]
            assert row["ttft"] == pytest.approx(ttft, rel=1e-6)
            assert row["tps"] == pytest.approx(tps, rel=1e-6)


def test_sglang_rates_plan_the_rate_computed_by_hand(imported):
    levels = sglang_by_hand()
    for (ttft_slo, tps_slo), want in zip(STRICT_SLOS, [3, 8], strict=True):
        assert top_passing(levels, ttft_slo, tps_slo) == want
        plan = plan_json(imported["sglang"], ttft_slo, tps_slo)
        assert plan["rate_max"] == want
        assert plan["top_level"] == f"rate={want}/s"
        for row in plan["levels"]:
            ttft, tps = levels[float(row["level"].removeprefix("rate=").removesuffix("/s"))]
            assert row["ttft"] == pytest.approx(ttft, rel=1e-6)
            assert row["tps"] == pytest.approx(tps, rel=1e-6)


@pytest.mark.parametrize(("tool", "name", "version"), [
    ("aiperf", "AIPerf", "0.13.0"),
    ("guidellm", "GuideLLM", "0.8.1"),
    ("sglang", "SGLang bench_serving", ""),
    ("vllm", "vllm bench serve", ""),
])
def test_the_run_names_its_tool_and_what_was_not_mapped(imported, tool, name, version):
    info = load_run_info(imported[tool])
    assert info.source == "imported"
    assert info.imported["tool"] == name
    assert info.imported["tool_version"] == version
    assert info.imported["per_request"] is True
    assert info.imported["unmapped"]
    assert any(note.startswith("per-request data kept") for note in info.notes)
    assert (imported[tool] / "requests.jsonl").is_file()


def test_aiperf_keeps_every_request_with_the_servers_token_count(imported):
    rows = [json.loads(line) for line in (imported["aiperf"] / "requests.jsonl").open()]
    assert len(rows) == 80
    assert {r["completion_tokens"] for r in rows} == {32}  # usage, not AIPerf's 100
    assert all(r["token_source"] == "usage" for r in rows)
