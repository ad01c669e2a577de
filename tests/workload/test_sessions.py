import statistics

import pytest

from servecap.workload.prompts import build_prompts
from servecap.workload.sessions import (
    SessionPlan,
    UserState,
    VirtualUser,
    build_users,
    start_offset,
)
from servecap.workload.source import builtin_source
from servecap.workload.think_time import parse_think_time, parse_turns

PROMPTS = tuple(p.text for p in build_prompts(16, seed=1))


def plan(**kw):
    base = {"users": 4, "think": parse_think_time("fixed:2"), "turns": parse_turns("3"),
            "prompts": PROMPTS}
    return SessionPlan(**{**base, **kw})


def run_turns(user, n, answer=lambda req: f"answer {req.conversation}.{req.turn}"):
    out = []
    for _ in range(n):
        req = user.next_request()
        out.append((req, user.complete(answer(req))))
    return out


def test_history_grows_with_own_prompts_and_received_answers():
    user = build_users(plan())[0]
    (r1, _), (r2, _), (r3, _) = run_turns(user, 3)
    assert [m["role"] for m in r1.messages] == ["user"]
    assert [m["role"] for m in r3.messages] == ["user", "assistant"] * 2 + ["user"]
    assert r3.messages[1] == {"role": "assistant", "content": "answer 0.1"}
    assert r3.messages[3] == {"role": "assistant", "content": "answer 0.2"}
    assert r2.messages[0] == r1.messages[0] and r3.messages[2] == r2.messages[2]
    assert all(m["content"] in PROMPTS for m in r3.messages if m["role"] == "user")
    assert [(r.conversation, r.turn) for r in (r1, r2, r3)] == [(0, 1), (0, 2), (0, 3)]


def test_requests_do_not_share_mutable_history():
    user = build_users(plan())[0]
    first = user.next_request()
    first.messages[0]["content"] = "tampered"
    user.complete("a")
    assert user.next_request().messages[0]["content"] != "tampered"


def test_new_conversation_after_the_last_turn():
    user = build_users(plan())[1]
    requests = [req for req, _ in run_turns(user, 7)]
    assert [(r.conversation, r.turn) for r in requests] == [
        (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3), (2, 1)]
    assert len(requests[3].messages) == 1  # fresh history
    assert requests[3].think_before_s == 2.0  # the user still thinks between conversations
    assert user.conversations_started == 3


def test_think_times_drawn_as_specified_and_recorded():
    user = build_users(plan(think=parse_think_time("exp:30"), turns=parse_turns("4")))[0]
    pairs = run_turns(user, 3001)
    assert pairs[0][0].think_before_s is None  # first request follows the ramp offset
    for (_, drawn), (nxt, _) in zip(pairs, pairs[1:], strict=False):
        assert nxt.think_before_s == drawn
    thinks = [think for _, think in pairs]
    assert statistics.fmean(thinks) == pytest.approx(30.0, rel=0.05)
    assert statistics.median(thinks) < 25.0  # exponential, not fixed: median = 30 ln 2


def test_failed_turn_ends_the_conversation_then_user_thinks():
    user = build_users(plan())[0]
    user.next_request()
    user.complete("ok")
    second = user.next_request()
    think = user.fail()
    assert think == 2.0 and user.state is UserState.THINKING
    after = user.next_request()
    assert (second.conversation, second.turn) == (0, 2)
    assert (after.conversation, after.turn) == (1, 1)
    assert after.think_before_s == 2.0
    assert [m["role"] for m in after.messages] == ["user"]


def test_think_sequence_does_not_depend_on_failures():
    p = plan(think=parse_think_time("lognormal:5:0.7"))
    a, b = build_users(p)[2], build_users(p)[2]
    thinks_a, thinks_b = [], []
    for i in range(12):
        a.next_request()
        b.next_request()
        thinks_a.append(a.complete("x"))
        thinks_b.append(b.fail() if i % 3 == 1 else b.complete("y"))
    assert thinks_a == thinks_b


def test_seeded_and_users_differ():
    p = plan(think=parse_think_time("exp:10"), turns=parse_turns("uniform:2:8"))

    def trace(user):
        return [(r.conversation, r.turn, r.think_before_s, r.messages[-1]["content"])
                for r, _ in run_turns(user, 20)]

    assert trace(build_users(p)[3]) == trace(build_users(p)[3])
    assert trace(build_users(p)[3]) != trace(build_users(p)[2])
    assert trace(build_users(p)[3]) != trace(build_users(plan(
        think=parse_think_time("exp:10"), turns=parse_turns("uniform:2:8"), seed=1))[3])


def test_turn_counts_follow_the_spec():
    user = build_users(plan(turns=parse_turns("uniform:2:8")))[0]
    lengths, current = [], 0
    for req, _ in run_turns(user, 2000):
        if req.turn == 1 and current:
            lengths.append(current)
        current = req.turn
    assert set(lengths) == set(range(2, 9))
    assert statistics.fmean(lengths) == pytest.approx(5.0, rel=0.1)


def test_users_start_as_a_steady_population_sends():
    # A user caught at a random moment is this far from its next turn: for exponential
    # thinks as far as a whole think (memoryless), for fixed ones uniform on 0..S.
    steady = plan(users=4000, think=parse_think_time("exp:45"), seed=3)
    offsets = [u.start_offset_s for u in build_users(steady)]
    assert statistics.fmean(offsets) == pytest.approx(45.0, rel=0.05)
    early = sum(o < 15.0 for o in offsets) / len(offsets)  # 1 - exp(-15/45) = 0.283
    assert early == pytest.approx(0.283, abs=0.03)  # an even 30 s ramp would put half there
    fixed = [u.start_offset_s for u in build_users(plan(users=4000, seed=3))]
    assert min(fixed) >= 0.0 and max(fixed) <= 2.0
    assert statistics.fmean(fixed) == pytest.approx(1.0, rel=0.05)


def test_start_offsets_are_per_user_and_seeded():
    users = build_users(plan(users=5, think=parse_think_time("exp:10"), seed=7))
    assert [u.start_offset_s for u in users] == [start_offset(users[0]._plan, u)
                                                 for u in range(5)]
    assert len({u.start_offset_s for u in users}) == 5
    other = build_users(plan(users=5, think=parse_think_time("exp:10"), seed=8))
    assert [u.start_offset_s for u in other] != [u.start_offset_s for u in users]
    no_think = build_users(plan(users=3, think=parse_think_time("exp:0")))
    assert all(u.start_offset_s == 0.0 for u in no_think)  # a closed loop starts at once


CONVERSATIONS = (("hi", "tell me more", "thanks"), ("solo",), ("a", "b"))


def test_dataset_conversations_supply_user_turns_in_order():
    users = build_users(plan(users=2, turns=None, conversations=CONVERSATIONS))
    seen = []
    for req, _ in run_turns(users[0], 8):
        seen.append((req.conversation, req.turn, req.messages[-1]["content"]))
    by_conv = {}
    for conv, turn, text in seen:
        by_conv.setdefault(conv, []).append((turn, text))
    for turns in by_conv.values():
        texts = [t for _, t in turns]
        assert tuple(texts) in {c[: len(texts)] for c in CONVERSATIONS}
        assert [t for t, _ in turns] == list(range(1, len(texts) + 1))


def test_dataset_spreads_users_and_caps_turns():
    p = plan(users=3, turns=parse_turns("2"), conversations=CONVERSATIONS)
    firsts = {u.next_request().messages[0]["content"] for u in build_users(p)}
    assert firsts == {"hi", "solo", "a"}  # three users, three different conversations
    user = build_users(p)[0]
    for req, _ in run_turns(user, 10):
        assert req.turn <= 2


def test_calls_out_of_order_raise():
    user = build_users(plan())[0]
    with pytest.raises(RuntimeError):
        user.complete("nothing was sent")
    user.next_request()
    with pytest.raises(RuntimeError):
        user.next_request()
    user.fail()
    with pytest.raises(RuntimeError):
        user.fail()


@pytest.mark.parametrize(
    "kw",
    [
        {"users": 0},
        {"prompts": ()},
        {"turns": None},
        {"conversations": ()},
        {"conversations": (("x",), ())},
    ],
)
def test_bad_plans_raise(kw):
    with pytest.raises(ValueError):
        plan(**kw)


def test_user_built_alone_matches_build_users_without_dataset():
    p = plan()
    assert run_turns(VirtualUser(2, p), 5) == run_turns(build_users(p)[2], 5)
    with pytest.raises(ValueError):
        VirtualUser(4, p)


def test_turns_from_the_source_are_every_users_own():
    # 200 users, more than the 120 built-in prompts: each turn is its own request of the
    # source, so no two users send the same text and a prefix cache reuses only histories
    source = builtin_source(32, 4, seed=1)
    users = build_users(plan(users=200, prompts=(), prompt_at=lambda i: source.request(i).text))
    sent = []
    for user in users:
        reqs = [req for req, _ in run_turns(user, 6)]  # two conversations of 3 turns
        sent += [req.messages[-1]["content"] for req in reqs]
    assert len(set(sent)) == len(sent) == 1200
    # user u's n-th turn is the source's request u + n * users
    assert sent[6 * 7 + 4] == source.request(7 + 4 * 200).text


def test_a_failed_turn_does_not_change_the_turns_drawn_later():
    at = builtin_source(16, 4).request
    kept, failed = (VirtualUser(3, plan(prompts=(), prompt_at=lambda i: at(i).text))
                    for _ in range(2))  # fmt: skip
    run_turns(kept, 3)
    failed.next_request()
    failed.fail()
    assert kept.next_request().messages[-1] == failed.next_request().messages[-1]
