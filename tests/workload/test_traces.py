from pathlib import Path

import numpy as np
import pytest

from servecap.core.errors import DataFormatError, UserInputError
from servecap.workload.traces import read_trace

DATA = Path(__file__).parent.parent / "data" / "traces"
AZURE = DATA / "azure-llm-2023-conv-head2000.csv"
MOONCAKE = DATA / "mooncake-conversation-head2000.jsonl"


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_azure_offsets_from_the_first_row_with_all_seven_digits():
    trace = read_trace(AZURE)
    assert trace.format == "azure" and len(trace) == 2000
    # 18:15:46.6805900 -> 18:15:50.9951690 -> 18:15:51.2224670 (the file's first three rows)
    assert trace.offsets[:3] == pytest.approx([0.0, 4.314579, 4.541877], abs=1e-9)
    assert trace.input_tokens[:2].tolist() == [374, 396]
    assert trace.output_tokens[:2].tolist() == [44, 109]
    assert not trace.has_blocks and trace.block_ids(0).size == 0
    assert np.all(np.diff(trace.offsets) >= 0)


def test_azure_seventh_digit_is_kept(tmp_path):
    path = write(
        tmp_path,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 23:59:59.9999999,1,1\n2023-11-17 00:00:00.0000001,2,2\n",
    )
    assert read_trace(path, "azure").offsets[1] == pytest.approx(2e-7, abs=1e-12)


def test_mooncake_reads_ms_lengths_and_block_ids():
    trace = read_trace(MOONCAKE)
    assert trace.format == "mooncake" and len(trace) == 2000
    assert trace.offsets[:3].tolist() == [0.0, 0.0, 0.0]  # repeats are allowed
    assert trace.input_tokens[0] == 6758 and trace.output_tokens[0] == 500
    assert trace.block_ids(0).tolist() == list(range(14))
    assert trace.block_ids(1)[:2].tolist() == [0, 14]
    for i in range(len(trace)):  # every request's ids cover its prompt in 512-token blocks
        assert trace.block_ids(i).size == -(-int(trace.input_tokens[i]) // 512)


def test_burstgpt_seconds_and_rebased_offsets(tmp_path):
    path = write(
        tmp_path,
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n"
        "7.5,GPT-4,1087,230,1317,Conversation log\n",
    )
    trace = read_trace(path)
    assert trace.format == "burstgpt"
    assert trace.offsets.tolist() == [0.0, 2.5]
    assert trace.input_tokens.tolist() == [472, 1087]
    assert trace.output_tokens.tolist() == [18, 230]


def test_window_then_speed():
    trace = read_trace(AZURE)
    window = trace.window(60.0, 120.0)
    kept = (trace.offsets >= 60.0) & (trace.offsets < 180.0)
    assert len(window) == int(kept.sum()) > 0
    assert window.offsets.tolist() == pytest.approx((trace.offsets[kept] - 60.0).tolist())
    assert window.input_tokens.tolist() == trace.input_tokens[kept].tolist()
    fast = window.scaled(2.0)
    assert fast.offsets.tolist() == pytest.approx((window.offsets / 2).tolist())
    assert len(trace) == 2000  # windows are new traces, the original is untouched


def test_window_keeps_block_ids_aligned():
    trace = read_trace(MOONCAKE)
    lo = int(np.searchsorted(trace.offsets, 30.0))
    window = trace.window(30.0)
    assert len(window) == len(trace) - lo
    for i in (0, 1, len(window) - 1):
        assert window.block_ids(i).tolist() == trace.block_ids(lo + i).tolist()


@pytest.mark.parametrize(
    ("start", "duration", "flag"),
    [(-1.0, None, "trace start"), (0.0, 0.0, "trace duration"), (1e9, None, "no request")],
)
def test_bad_windows(start, duration, flag):
    with pytest.raises(UserInputError, match=flag):
        read_trace(AZURE).window(start, duration)


@pytest.mark.parametrize("speed", [0.0, -2.0, float("inf")])
def test_bad_speed(speed):
    with pytest.raises(UserInputError, match="trace speed"):
        read_trace(AZURE).scaled(speed)


MOON_OK = '{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [0]}\n'
AZ_HEAD = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
AZ_ROW = "2023-11-16 18:15:46.6805900,374,44\n"


@pytest.mark.parametrize(
    ("name", "text", "fmt", "expected"),
    [
        ("m.jsonl", MOON_OK + "{not json\n", "auto", r"m\.jsonl:2: column 2: not JSON"),
        ("m.jsonl", MOON_OK + "[1, 2]\n", "auto", r"m\.jsonl:2: expected a JSON object"),
        (
            "m.jsonl",
            MOON_OK + '{"timestamp": 5, "input_length": 3, "hash_ids": []}\n',
            "auto",
            r"m\.jsonl:2: column 'output_length' is missing",
        ),
        (
            "m.jsonl",
            '{"timestamp": 9, "input_length": 1, "output_length": 1, "hash_ids": []}\n'
            '{"timestamp": 8, "input_length": 1, "output_length": 1, "hash_ids": []}\n',
            "auto",
            r"m\.jsonl:2: column 'timestamp': timestamps go backwards",
        ),
        (
            "m.jsonl",
            '{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": []}\n',
            "mooncake",
            r"m\.jsonl:1: column 'timestamp': -1.0 is not a time >= 0",
        ),
        (
            "m.jsonl",
            '{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}\n',
            "auto",
            r"m\.jsonl:1: column 'input_length': a length must be 1\.\.",
        ),
        (
            "m.jsonl",
            '{"timestamp": 0, "input_length": 1, "output_length": 1e12, "hash_ids": []}\n',
            "auto",
            r"m\.jsonl:1: column 'output_length': a length must be 1\.\.10000000 tokens",
        ),
        (
            "m.jsonl",
            '{"timestamp": 0, "input_length": 2, "output_length": 1, "hash_ids": "x"}\n',
            "auto",
            r"m\.jsonl:1: column 'hash_ids': expected a list",
        ),
        ("a.csv", AZ_HEAD + AZ_ROW + "2023-11-16 18:15:47.1,0,4\n", "auto",
         r"a\.csv:3: column 'ContextTokens': a length must be 1\.\."),
        ("a.csv", AZ_HEAD + AZ_ROW + "2023-11-16 18:15:45.1,3,4\n", "auto",
         r"a\.csv:3: column 'TIMESTAMP': timestamps go backwards"),
        ("a.csv", AZ_HEAD + "yesterday,3,4\n", "auto",
         r"a\.csv:2: column 'TIMESTAMP': 'yesterday' is not a time"),
        ("a.csv", AZ_HEAD + AZ_ROW + "2023-11-16 18:15:47.1,3\n", "auto",
         r"a\.csv:3: column 'GeneratedTokens' is missing"),
        ("a.csv", "TIMESTAMP,ContextTokens\n" + "2023-11-16 18:15:47.1,3\n", "auto",
         r"a\.csv:1: column 'GeneratedTokens' is missing"),
        ("a.csv", AZ_HEAD + "2023-11-16 18:15:47.1,3.5,4\n", "auto",
         r"a\.csv:2: column 'ContextTokens': '3.5' is not a whole number"),
        ("b.csv", "Timestamp,Request tokens,Response tokens\n1,5,0\n", "auto",
         r"b\.csv:2: column 'Response tokens': a length must be 1\.\."),
        ("b.csv", "Timestamp,Request tokens,Response tokens\n-3,5,1\n", "burstgpt",
         r"b\.csv:2: column 'Timestamp': -3.0 is not a time >= 0"),
        ("u.csv", "time,in,out\n1,2,3\n", "auto", r"u\.csv:1: unknown trace format"),
        ("e.csv", "\n\n", "auto", r"e\.csv: the trace is empty"),
        ("h.csv", AZ_HEAD, "auto", r"h\.csv: the trace has no requests"),
        ("a.csv", AZ_HEAD + AZ_ROW, "mooncake", r"a\.csv:1: column 1: not JSON"),
        ("m.jsonl", MOON_OK, "burstgpt", r"m\.jsonl:1: column 'Timestamp' is missing"),
    ],
)
def test_bad_input_names_file_line_and_column(tmp_path, name, text, fmt, expected):
    path = write(tmp_path, text, name)
    with pytest.raises(DataFormatError, match=expected) as caught:
        read_trace(path, fmt)
    assert str(path) in str(caught.value)


def test_unknown_format_name_and_missing_file(tmp_path):
    with pytest.raises(UserInputError, match="trace format 'splitwise'"):
        read_trace(AZURE, "splitwise")
    with pytest.raises(UserInputError, match="cannot read the trace"):
        read_trace(tmp_path / "absent.csv")


def test_binary_file_is_rejected_with_its_line(tmp_path):
    path = tmp_path / "bin.jsonl"
    path.write_bytes(MOON_OK.encode() + b"\xff\xfe\x00\n")
    with pytest.raises(DataFormatError, match=r"bin\.jsonl:2: not UTF-8"):
        read_trace(path)
