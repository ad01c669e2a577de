"""`stats.agents_prediction`: agents predicted at the streams whose task time meets the SLO,
by hand on a latency curve that doubles from 4 to 8 streams."""

from __future__ import annotations

import pytest

from servecap.stats.agents_prediction import AgentTasks, predict_agents

# 8 agents, each cycle 10 s of task (4 s of it on the server, all its calls' time) and 6 s
# idle: c_A = 8 x 4 / 16 = 2 streams busy, where the latency is 1 s.
TASKS = AgentTasks(agents=8, time_mean_s=10.0, time_stat_s=12.0, server_s=4.0,
                   calls_server_s=4.0, idle_s=6.0)
CURVE = [(1, 1.0), (2, 1.0), (4, 1.0), (8, 2.0)]


def test_c_max_bounds_it_when_the_task_time_still_meets_the_slo_there():
    """At C_max 4 the latency is A's: 4 streams x 16 s / 4 s = 16 agents."""
    prediction = predict_agents(CURVE, 4, TASKS, task_slo_s=30.0)
    assert prediction is not None
    assert (prediction.agents, prediction.streams, prediction.bound) == (16, 4.0, "C_max")
    assert prediction.per_stream == pytest.approx(4.0)


def test_the_task_time_bounds_it_below_c_max():
    """At c streams (4 <= c <= 8) the latency is 1 + (c - 4) / 4 times A's: T = 10 + 4 (r - 1)
    and its P90 12 T / 10 <= 14.5 while r <= 1.5208, up to c = 6.08 (on the 0.01 grid):
    there T = 12.08 s and each stream holds (12.08 + 6) / (4 x 1.52) = 2.974 agents, so
    6.08 x 2.974 = 18 agents."""
    prediction = predict_agents(CURVE, 8, TASKS, task_slo_s=14.5)
    assert prediction is not None
    assert (prediction.agents, prediction.bound) == (18, "task time")
    assert prediction.streams == pytest.approx(6.08)
    assert prediction.per_stream == pytest.approx(18.08 / 6.08)


def test_a_latency_that_falls_with_load_is_read_as_noise():
    """A dip at 4 streams would let the task time meet the SLO further up; the curve is
    made non-decreasing first, so the dip changes nothing."""
    dipped = [(1, 1.0), (2, 1.0), (3, 1.0), (4, 0.5), (8, 2.0)]
    assert predict_agents(dipped, 8, TASKS, 14.5) == predict_agents(CURVE, 8, TASKS, 14.5)


def test_none_when_even_one_stream_misses_the_task_time_slo():
    assert predict_agents(CURVE, 8, TASKS, task_slo_s=11.0) is None


def test_none_without_a_curve_or_a_boundary():
    assert predict_agents([], 8, TASKS, task_slo_s=30.0) is None
    assert predict_agents(CURVE, 0, TASKS, task_slo_s=30.0) is None
