"""How a level run by workers shows: the terminal's line, the app's table, the report's
setup table, and the summary row on disk (worker columns only where workers ran)."""

from __future__ import annotations

from types import SimpleNamespace

from servecap.cli.run_flags_workers import level_note, run_notes
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.metrics.level import summarise_level
from servecap.report.build import _worker_rows
from servecap.ui.tables import level_rows

HEALTH = [
    {"worker": 0, "requests": 6, "loop_lag_p99_ms": 2.0, "client_cpu_pct": 30.0,
     "client_bound": False},
    {"worker": 1, "requests": 2, "loop_lag_p99_ms": 40.0, "client_cpu_pct": 99.0,
     "client_bound": True, "died": "pid 9 was killed by signal 9"},
]


def worker_level() -> LevelSummary:
    observed = {"workers": 2, "worker_health": HEALTH, "workers_client_bound": [1],
                "workers_died": [1], "loop_lag_p99_ms": 40.0, "client_cpu_pct": 99.0,
                "client_bound": True}
    return summarise_level(LevelKey.closed(8), [], observed)


def test_the_summary_names_the_workers_and_keeps_one_process_rows_as_they_were():
    level = worker_level()
    assert level.workers == 2 and level.client_bound
    assert any(w.startswith("worker 1 pid 9 was killed") for w in level.warnings)
    assert "workers" in level.stored()
    plain = summarise_level(LevelKey.closed(8), [])
    assert not {"workers", "worker_health", "workers_died"} & set(plain.stored())


def test_terminal_app_and_report_say_how_many_workers_and_which_lagged_or_died():
    level = worker_level()
    assert level_note(level) == ", 2 workers (client-bound: 1); worker 1 died"
    assert level_rows([level])[0]["workers"] == "2 (client-bound: 1; died: 1)"
    assert "workers" not in level_rows([summarise_level(LevelKey.closed(8), [])])[0]
    rows = _worker_rows([SimpleNamespace(name="vllm", levels=[level])])
    assert rows == [("Worker processes per level", "vllm c=8: 2 (client-bound: 1) (died: 1); "
                     "levels not named ran in one process")]
    assert _worker_rows([SimpleNamespace(name="a", levels=[summarise_level(8, [])])]) == []
    notes = run_notes({"warnings": ["worker 0 on 10.0.0.2: clock offset 3.00 ms"],
                       "died": [{"worker": 1, "why": "pid 9 was killed by signal 9",
                                 "level": "c=8"}]})
    assert notes == ["warning: worker 0 on 10.0.0.2: clock offset 3.00 ms",
                     "worker 1 pid 9 was killed by signal 9 in c=8"]


def test_the_app_form_takes_worker_processes(tmp_path):
    import pytest

    from servecap.core.errors import UserInputError
    from servecap.ui.form import RunForm, build_config

    form = RunForm(base_url="http://127.0.0.1:9/v1", workers="3")
    assert build_config(form, tmp_path).workers == 3
    assert build_config(RunForm(base_url="http://127.0.0.1:9/v1"), tmp_path).workers is None
    with pytest.raises(UserInputError) as caught:
        build_config(RunForm(base_url="http://127.0.0.1:9/v1", workers="many"), tmp_path)
    from servecap.ui.labels import message_of

    assert message_of(caught.value).startswith("invalid 'Worker processes' 'many'")
