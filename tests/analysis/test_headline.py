"""The decision sentence, the more-streams-fewer-users line and the C_max lower bound."""

from __future__ import annotations

from servecap.analysis.headline import Held, c_max_text, headline
from servecap.api.stored.plan import plan_capacity
from servecap.core.config import SLO
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import plan_levels
from servecap.storage.import_summary import import_summary
from tests.seed_data import SEED_CSV


def test_the_demo_case_explains_more_streams_but_fewer_users():
    rows = [
        Held("vllm-spec", 32, 266, 6.01), Held("vllm-direct", 16, 297, 2.63),
        Held("sglang-direct", 1, 26, 1.8), Held("sglang-spec", None, None, None),
    ]
    first, why = headline(rows, SLO())
    assert first == (
        "Deploy vllm-direct: it holds 297 predicted users (C_max 16) at P90 TTFT <= 1 s and "
        "TPS >= 15 with 45 s think time; runner-up vllm-spec, 266 predicted."
    )
    assert why.startswith(
        "vllm-spec holds more streams within the SLO (C_max 32 against 16) but fewer users "
        "(266 against 297), because its requests take longer (mean latency 6.01 s against 2.63 s)"
    )


def test_seed_headlines_on_both_statistics(tmp_path):
    import_summary(SEED_CSV, tmp_path)
    p90 = plan_capacity([tmp_path], SLO())
    rows = [Held(r.name, r.c_max, r.users, r.latency_mean_s, r.c_max_lower_bound)
            for r in p90.runs]
    assert headline(rows, SLO()) == [
        "Deploy vllm-direct: it holds 427 predicted users (C_max 32) at P90 TTFT <= 1 s and "
        "TPS >= 15 with 45 s think time; runner-up vllm-spec, 266 predicted."
    ]
    mean = plan_capacity([tmp_path], SLO(statistic="mean"))
    rows = [Held(r.name, r.c_max, r.users, r.latency_mean_s, r.c_max_lower_bound)
            for r in mean.runs]
    assert headline(rows, SLO(statistic="mean")) == [
        "Deploy sglang-direct: it holds >= 717 predicted users (C_max >= 64) at mean TTFT "
        "<= 1 s and TPS >= 15 with 45 s think time; runner-up vllm-direct, >= 682 predicted.",
        "sglang-direct, vllm-direct: C_max >= 64: every tested level passed; test higher.",
    ]


def test_a_verified_count_is_named_beside_the_predicted_one():
    rows = [Held("a", 32, 361, 0.4, verified=90), Held("b", 16, 200, 0.3)]
    assert headline(rows, SLO())[0] == (
        "Deploy a: it holds 361 predicted users (C_max 32; verified 90 users (measured)) at "
        "P90 TTFT <= 1 s and TPS >= 15 with 45 s think time; runner-up b, 200 predicted."
    )
    none = headline([Held("a", 32, 361, 0.4, verified=0)], SLO())[0]
    assert "361 predicted users (C_max 32; verified: none of the user counts tried passed)" in none


def test_no_deployment_meets_the_slo():
    assert headline([Held("a", None, None, None)], SLO(tps=1000)) == [
        "No deployment meets P90 TTFT <= 1 s and TPS >= 1000 with 45 s think time at any "
        "tested level: test lower levels or relax the SLOs."
    ]


def test_c_max_at_the_highest_level_is_a_lower_bound(tmp_path):
    import_summary(SEED_CSV, tmp_path)
    plan = plan_capacity([tmp_path], SLO(statistic="mean"))
    bound = {r.name: r.c_max_lower_bound for r in plan.runs}
    # mean: vllm-direct and sglang-direct pass at every level up to c=64, the others stop
    assert bound == {"vllm-direct": True, "vllm-spec": False, "sglang-direct": True,
                     "sglang-spec": False}
    assert plan_levels([], SLO(), kind_of).c_max_lower_bound is False
    assert c_max_text(64, True) == "C_max >= 64" and c_max_text(16, False) == "C_max 16"
    assert c_max_text(None, False) == "C_max none"
