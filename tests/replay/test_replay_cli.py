"""Request sources and trace replay from the CLI: bad input exits 2 naming the file, line and
column before any load; the replay kind's levels; what the client sends (messages, each
request's max_tokens, `ignore_eos`); a short replay against the deterministic simulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload import build_source, client_extra_body
from servecap.api.run.workload_options import WorkloadFlags, config_fields
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.workload_spec import WorkloadSpec
from servecap.kinds.replay import ReplayLoad
from servecap.workload.source import PromptCycle
from servecap.workload.sources import DatasetSource, SyntheticSource, TraceSource
from tests.faults.runs import invoke
from tests.servers.fault_server import FaultServer, FaultServerThread

DATA = Path(__file__).resolve().parents[1] / "data" / "traces"
AZURE = DATA / "azure-llm-2023-conv-head2000.csv"
MOONCAKE = DATA / "mooncake-conversation-head2000.jsonl"


def one_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("name", "text", "flag", "where"),
    [
        ("bad.jsonl", '{"prompt": "hi"}\n{"prompt": \n', "--dataset", ":2"),
        ("bad.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.0,0,4\n", "--trace", ":3"),
        ("back.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:40.0,10,4\n", "--trace", ":3"),
        ("mc.jsonl", '{"timestamp": 0, "input_length": 5, "output_length": 2}\n',
         "--trace", ":1"),
    ],
)
def test_a_malformed_file_exits_2_naming_it_before_any_load(
    tmp_path: Path, name: str, text: str, flag: str, where: str
) -> None:
    path = write(tmp_path / name, text)
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(["run", "--base-url", thread.base_url, "--out", str(tmp_path / "out"),
                         flag, path])
    assert result.exit_code == 2
    line = one_error(result.stderr)
    assert f"{path}{where}" in line, line
    assert server.completions == 0
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--input-tokens", "gamma:3:4"], "--input-tokens 'gamma:3:4'"),
        (["--output-tokens", "uniform:9:3"], "LO 9 is above HI 3"),
        (["--trace", str(AZURE), "--trace-speed", "0"], "--trace-speed"),
        (["--trace", str(AZURE), "--trace-format", "nope"], "--trace-format 'nope'"),
        (["--trace", str(AZURE), "--trace-start", "99999"], "no request in the window"),
        (["--trace", str(AZURE), "--concurrency", "4"], "drop --concurrency"),
        (["--trace", str(AZURE), "--rate", "2"], "drop --rate"),
        (["--trace", str(AZURE), "--users", "3"], "drop --users"),
        (["--trace", str(AZURE), "--prefix-tokens", "64"], "drop --prefix-tokens"),
        (["--dataset", "/nonexistent/x.jsonl"], "/nonexistent/x.jsonl"),
    ],
)
def test_bad_workload_flags_exit_2_with_one_message(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    result = invoke(["run", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path),
                     *args])
    assert result.exit_code == 2, result
    assert needle in one_error(result.stderr)


def flags(**kw: object) -> WorkloadFlags:
    return WorkloadFlags(**{"input_tokens": "128", "output_tokens": "128", **kw})  # type: ignore[arg-type]


def test_flags_pick_the_source_and_plain_flags_keep_the_builtin_prompts(tmp_path: Path) -> None:
    plain = RunConfig(**config_fields(flags()))  # type: ignore[arg-type]
    assert plain.workload is None and plain.load is None
    assert isinstance(build_source(plain), PromptCycle)
    assert "workload" not in plain.stored()

    dist = RunConfig(**config_fields(flags(input_tokens="uniform:10:30",
                                           prefix_tokens=64, prefix_groups=3)))  # type: ignore[arg-type]
    assert dist.input_tokens == 20 and dist.workload is not None
    assert dist.workload.input_tokens == "uniform:10:30"
    source = build_source(dist)
    assert isinstance(source, SyntheticSource)
    first = source.next_request()
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.prefix_tokens == 64 and 10 + 64 <= first.input_tokens <= 30 + 64

    data = write(tmp_path / "d.jsonl", '{"prompt": "hello there", "max_tokens": 7}\n')
    ds = RunConfig(**config_fields(flags(dataset=data)))  # type: ignore[arg-type]
    assert isinstance(build_source(ds), DatasetSource)
    assert build_source(ds).next_request().max_tokens == 7

    replay = RunConfig(**config_fields(flags(trace=str(AZURE), trace_duration=60.0,
                                             trace_speed="2,0.5")))  # type: ignore[arg-type]
    assert isinstance(replay.load, ReplayLoad) and replay.load.rows > 100
    assert isinstance(build_source(replay), TraceSource)
    assert [lv.key for lv in replay.load.levels()] == [
        LevelKey("speed", 0.5, "x"), LevelKey("speed", 2, "x")
    ]
    assert client_extra_body(replay) == {"ignore_eos": True}
    assert client_extra_body(plain) == {}
    stored = replay.stored()
    assert stored["load"]["kind"] == "replay" and "workload" not in stored  # type: ignore[index]


def test_replay_keys_read_back_from_their_text() -> None:
    for speed in (0.5, 1, 2, 10):
        key = LevelKey("speed", speed, "x")
        assert LevelKey.parse(str(key)) == key
    assert str(LevelKey("speed", 2, "x")) == "speed=2x"


def test_a_dataset_with_an_output_distribution_is_refused(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", '{"prompt": "hello"}\n')
    result = invoke(["run", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path),
                     "--dataset", data, "--output-tokens", "normal:100:10"])
    assert result.exit_code == 2
    assert "with --dataset give one number" in one_error(result.stderr)


def test_a_workload_spec_refuses_a_dataset_with_prefixes() -> None:
    with pytest.raises(ValueError, match="shared prefixes"):
        WorkloadSpec(dataset="x.jsonl", prefix_tokens=4)


def test_the_client_sends_each_requests_turns_and_max_tokens() -> None:
    from servecap.client.http import StreamingClient
    from servecap.core.config import ClientOptions

    client = StreamingClient(None, ClientOptions(), "m", "chat", 128,  # type: ignore[arg-type]
                             {"ignore_eos": True})
    source = SyntheticSource(*_dists("40", "9"), prefixes=_prefixes())
    body = json.loads(client.body(source.next_request()))
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["max_tokens"] == 9 and body["ignore_eos"] is True
    assert len(body["messages"][0]["content"]) == 4 * 32


def _dists(a: str, b: str) -> tuple:
    from servecap.workload.lengths import parse_length_spec

    return parse_length_spec(a, "input"), parse_length_spec(b, "output")


def _prefixes() -> object:
    from servecap.workload.text import SharedPrefixes

    return SharedPrefixes(32, 2)


def test_the_app_form_offers_a_dataset_and_a_trace(tmp_path: Path) -> None:
    from servecap.ui.form import RunForm, build_config

    url = "http://127.0.0.1:9/v1"
    replay = build_config(RunForm(url, trace=str(AZURE), trace_speeds="1, 2",
                                  trace_duration_s=30.0), tmp_path)
    assert isinstance(replay.load, ReplayLoad) and replay.load.speeds == [1.0, 2.0]
    data = write(tmp_path / "d.jsonl", '{"messages": [{"role": "user", "content": "hi"}]}\n')
    ds = build_config(RunForm(url, dataset=data, dataset_format="openai"), tmp_path)
    assert ds.workload is not None and ds.workload.dataset_format == "openai"
    bad = write(tmp_path / "bad.jsonl", "{nope\n")
    with pytest.raises(UserInputError, match=r"bad\.jsonl:1"):
        build_config(RunForm(url, dataset=bad), tmp_path)
    with pytest.raises(UserInputError, match="trace brings its own prompts and lengths: drop "
                                             "dataset"):
        build_config(RunForm(url, dataset=data, trace=str(AZURE)), tmp_path)
