import json

import numpy as np
import pytest

from servecap.core.errors import DataFormatError, UserInputError
from servecap.workload.datasets import Message, read_dataset


def jsonl(tmp_path, rows, name="d.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_prompt_rows_with_their_own_output_lengths(tmp_path):
    path = jsonl(tmp_path, [{"prompt": "hi", "max_tokens": 7}, "", {"prompt": "yo",
                 "output_tokens": 3}, {"prompt": "no length"}])
    data = read_dataset(path)
    assert data.format == "prompt" and len(data) == 3
    assert [r.prompt for r in data.rows] == ["hi", "yo", "no length"]
    assert [r.max_tokens for r in data.rows] == [7, 3, None]
    assert data.rows[0].messages == (Message("user", "hi"),)


def test_openai_messages_are_kept_whole(tmp_path):
    chat = [{"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "a"},
                                         {"type": "text", "text": "b"}]}]
    data = read_dataset(jsonl(tmp_path, [{"messages": chat}]))
    assert data.format == "openai"
    assert data.rows[0].messages == (Message("system", "be brief"), Message("user", "ab"))
    assert data.rows[0].prompt == "ab" and data.rows[0].chars == 10


def test_sharegpt_first_human_turn_and_later_turns(tmp_path):
    conv = [{"from": "system", "value": "sys"}, {"from": "gpt", "value": "hello"},
            {"from": "human", "value": "q1"}, {"from": "gpt", "value": "a1"},
            {"from": "human", "value": "q2"}]
    rows = [{"id": "x", "conversations": conv}, {"conversations": []},
            {"conversations": [{"from": "gpt", "value": "only me"}]}]
    data = read_dataset(jsonl(tmp_path, rows))
    assert data.format == "sharegpt" and len(data) == 1 and data.skipped == 2
    row = data.rows[0]
    assert row.messages == (Message("system", "sys"), Message("user", "q1"))
    assert row.later == (Message("assistant", "a1"), Message("user", "q2"))


def test_sharegpt_json_array_release(tmp_path):
    path = tmp_path / "sharegpt.json"
    path.write_text(json.dumps([{"conversations": [{"from": "human", "value": "q"}]}] * 3))
    data = read_dataset(path, "sharegpt")
    assert len(data) == 3 and data.rows[2].prompt == "q"


def test_sampling_is_seeded_distinct_then_with_replacement(tmp_path):
    data = read_dataset(jsonl(tmp_path, [{"prompt": f"p{i}"} for i in range(50)]))
    first = data.sample_indices(50, seed=3)
    assert sorted(first.tolist()) == list(range(50))
    assert np.array_equal(first, data.sample_indices(50, seed=3))
    assert not np.array_equal(first, data.sample_indices(50, seed=4))
    more = data.sample_indices(500, seed=3)
    assert np.array_equal(more[:50], first) and more.size == 500
    assert len(set(more[50:].tolist())) < 450  # the rest repeat rows: with replacement
    assert [r.prompt for r in data.sample(2, seed=3)] == [f"p{i}" for i in first[:2]]


@pytest.mark.parametrize(
    ("rows", "fmt", "expected"),
    [
        ([{"prompt": "a"}, "{oops"], "auto", r"d\.jsonl:2: column 2: not JSON"),
        ([{"prompt": "a"}, "[1]"], "auto", r"d\.jsonl:2: expected a JSON object, got list"),
        ([{"text": "a"}], "auto", r"d\.jsonl:1: unknown dataset format: the row has keys text"),
        ([{"prompt": "a"}, {"messages": []}], "auto", r"d\.jsonl:2: column 'prompt' is missing"),
        ([{"prompt": ""}], "auto", r"d\.jsonl:1: column 'prompt': expected non-empty text"),
        ([{"prompt": 3}], "prompt", r"d\.jsonl:1: column 'prompt'"),
        ([{"prompt": "a", "max_tokens": 0}], "auto", r"d\.jsonl:1: column 'max_tokens'"),
        ([{"prompt": "a", "output_tokens": "9"}], "auto", r"d\.jsonl:1: column 'output_tokens'"),
        ([{"messages": "hi"}], "auto", r"d\.jsonl:1: column 'messages': expected a non-empty"),
        ([{"messages": [{"role": "robot", "content": "x"}]}], "auto",
         r"d\.jsonl:1: column 'messages'\[0\]: expected"),
        ([{"messages": [{"role": "user", "content": {"a": 1}}]}], "auto",
         r"d\.jsonl:1: column 'messages'\[0\]: 'content' must be text"),
        ([{"conversations": "x"}], "auto", r"d\.jsonl:1: column 'conversations': expected a"),
        ([{"conversations": [{"from": "human"}]}], "auto",
         r"d\.jsonl:1: column 'conversations'\[0\]: expected"),
        ([{"conversations": [{"from": "alien", "value": "x"}]}], "auto",
         r"d\.jsonl:1: column 'conversations'\[0\]: 'from' 'alien'"),
        ([{"conversations": []}], "auto", r"d\.jsonl: the dataset has no usable rows"),
        ([{"prompt": "a"}], "openai", r"d\.jsonl:1: column 'messages' is missing"),
    ],
)
def test_bad_rows_name_file_line_and_column(tmp_path, rows, fmt, expected):
    path = jsonl(tmp_path, rows)
    with pytest.raises(DataFormatError, match=expected) as caught:
        read_dataset(path, fmt)
    assert str(path) in str(caught.value)


def test_bad_array_names_the_item(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"prompt": "a"}, {"prompt": ""}]))
    with pytest.raises(DataFormatError, match=r"a\.json: item 2: column 'prompt'"):
        read_dataset(path)
    path.write_text('[{"prompt": "a"},\n {"prompt": ')
    with pytest.raises(DataFormatError, match=r"a\.json:2: column \d+: not JSON"):
        read_dataset(path)


def test_unknown_format_binary_and_missing_files(tmp_path):
    with pytest.raises(UserInputError, match="dataset format 'csv'"):
        read_dataset(tmp_path / "x", "csv")
    with pytest.raises(UserInputError, match="cannot read the dataset"):
        read_dataset(tmp_path / "absent.jsonl")
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b'{"prompt": "a"}\n\x89PNG\xff\n')
    with pytest.raises(DataFormatError, match=r"bin\.jsonl:2: not UTF-8"):
        read_dataset(path)


def test_json_lines_with_indent_or_trailing_data(tmp_path):
    data = read_dataset(jsonl(tmp_path, ['   {"prompt": "a"}   ', {"prompt": "b"}]))
    assert [r.prompt for r in data.rows] == ["a", "b"]
    with pytest.raises(DataFormatError, match=r"d\.jsonl:1: column 17: not JSON \(data after"):
        read_dataset(jsonl(tmp_path, ['{"prompt": "a"} {"prompt": "b"}']))
    with pytest.raises(DataFormatError, match=r"d\.jsonl:1: column 4: not JSON"):
        read_dataset(jsonl(tmp_path, ["  {oops"]))  # the o, after two spaces and a brace


def test_dataset_source_conversations_are_each_rows_user_turns(tmp_path):
    from servecap.workload.sources import DatasetSource

    path = tmp_path / "d.jsonl"
    rows = [
        {"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "q1"},
                           {"from": "gpt", "value": "r1"}, {"from": "human", "value": "q2"},
                           {"from": "human", "value": ""}, {"from": "gpt", "value": "r2"}]},
        {"conversations": [{"from": "human", "value": "only"}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = DatasetSource(read_dataset(path), 32)
    assert source.conversations() == (("q1", "q2"), ("only",))
    assert source.max_tokens == 32
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"prompt": "one"}\n')
    assert DatasetSource(read_dataset(prompts), 8).conversations() == (("one",),)
    chats = tmp_path / "c.jsonl"
    chats.write_text('{"messages": [{"role": "user", "content": "u"}, {"role": "assistant", '
                     '"content": "a"}, {"role": "user", "content": "v"}]}\n')
    assert DatasetSource(read_dataset(chats), 8).conversations() == (("u", "v"),)
