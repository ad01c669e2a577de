"""The typed load plan: level keys, load specs, and the stored forms that keep old files valid."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from servecap.api.run.run_config import RunConfig
from servecap.core.level_key import LevelKey, bound_text, keys_text
from servecap.core.records import RequestRecord
from servecap.core.summary import SUMMARY_COLUMNS, LevelSummary, summary_columns
from servecap.kinds.closed import ClosedLoad, warmup_level
from servecap.kinds.fixed import FixedLoad
from servecap.kinds.registry import KINDS, LoadSpec, kind_of


def test_keys_print_parse_and_order() -> None:
    c32 = LevelKey.closed(32)
    assert str(c32) == "c=32" and LevelKey.parse("c=32") == c32 and LevelKey.parse("32") == c32
    assert str(LevelKey("fixed", 2)) == "fixed=2"
    assert kind_of(LevelKey.parse("fixed=2")).name == "fixed"
    assert sorted([c32, LevelKey.closed(8), LevelKey.closed(2)]) == [
        LevelKey.closed(2), LevelKey.closed(8), c32
    ]
    assert keys_text([LevelKey.closed(1), LevelKey.closed(2)]) == "c=1,2"
    assert bound_text(LevelKey.closed(8), "<=") == "c<=8"
    with pytest.raises(ValueError, match="not a level key"):
        LevelKey.parse("rpm")
    with pytest.raises(ValueError, match="no load kind has levels like rpm=3"):
        kind_of(LevelKey.parse("rpm=3"))


def test_every_kind_presents_itself() -> None:
    closed = KINDS["closed"].text
    assert (closed.quantity, closed.axis_title, closed.mode) == (
        "concurrency", "concurrency (c)", "closed loop"
    )
    assert all(kind.text.methodology and kind.text.axis_title for kind in KINDS.values())


def test_load_spec_is_discriminated_on_kind() -> None:
    adapter: TypeAdapter[ClosedLoad | FixedLoad] = TypeAdapter(LoadSpec)
    closed = adapter.validate_python({"kind": "closed", "concurrency": [4, 1], "rounds": 2})
    assert isinstance(closed, ClosedLoad)
    assert [(str(lv.key), lv.n_requests, lv.concurrency) for lv in closed.levels()] == [
        ("c=1", 2, 1), ("c=4", 8, 4)
    ]
    fixed = adapter.validate_python({"kind": "fixed", "schedules": [[0, 0.5], [0.25]]})
    assert isinstance(fixed, FixedLoad)
    levels = fixed.levels()
    assert [str(lv.key) for lv in levels] == ["fixed=1", "fixed=2"]
    assert levels[0].offsets_ns == (0, 500_000_000) and fixed.max_in_flight() == 2
    with pytest.raises(ValidationError):
        adapter.validate_python({"kind": "open", "rates": [1]})
    with pytest.raises(ValidationError, match="sorted"):
        adapter.validate_python({"kind": "fixed", "schedules": [[0.5, 0.1]]})
    assert warmup_level(3).warmup and warmup_level(3).key == LevelKey.closed(1)


def test_run_config_plans_its_closed_sweep_and_stores_as_before() -> None:
    config = RunConfig(concurrency=[2, 1], rounds=3)
    plan = config.load_spec()
    assert isinstance(plan, ClosedLoad) and plan.concurrency == [1, 2] and plan.rounds == 3
    assert "load" not in config.stored()  # run.json of a closed run is unchanged
    fixed = RunConfig(load={"kind": "fixed", "schedules": [[0.0]]})
    assert isinstance(fixed.load_spec(), FixedLoad)
    assert fixed.stored()["load"] == {"kind": "fixed", "schedules": [[0.0]]}


def test_closed_rows_keep_their_format_other_kinds_add_level() -> None:
    closed = RequestRecord.for_level(LevelKey.closed(4), 7, 1, 100)
    stored = closed.to_dict()
    assert stored["concurrency"] == 4 and "level" not in stored
    assert RequestRecord.from_dict(json.loads(json.dumps(stored))).key == LevelKey.closed(4)
    fixed = RequestRecord.for_level(LevelKey("fixed", 2), 8, 0, 100).to_dict()
    assert fixed["level"] == "fixed=2" and fixed["concurrency"] == 0
    assert RequestRecord.from_dict(fixed).key == LevelKey("fixed", 2)


def test_summaries_store_their_key_in_the_kind_s_own_fields() -> None:
    closed = LevelSummary.for_key(LevelKey.closed(8), n_ok=3)
    assert closed.concurrency == 8 and closed.key == LevelKey.closed(8)
    assert "level" not in closed.stored() and closed.stored()["concurrency"] == 8
    assert summary_columns([closed]) == list(SUMMARY_COLUMNS)
    assert "level" not in SUMMARY_COLUMNS  # summary.csv of a closed run: today's header
    fixed = LevelSummary.for_key(LevelKey("fixed", 1), n_ok=1)
    assert fixed.stored()["level"] == "fixed=1" and "concurrency" not in fixed.stored()
    assert "level" in summary_columns([closed, fixed])
    assert LevelSummary.model_validate(fixed.stored()).key == LevelKey("fixed", 1)
    with pytest.raises(ValidationError, match="needs `concurrency`"):
        LevelSummary.model_validate({"n_ok": 1})
    with pytest.raises(ValidationError, match="not a level key"):
        LevelSummary.model_validate({"level": "bogus"})
