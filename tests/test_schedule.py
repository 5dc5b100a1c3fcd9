"""Schedule: metrics on hand-computed schedules, the feasibility check, memory against brute force,
and the schedule JSON file (SPEC sections 2 and 9)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.instance import Instance
from lpsched.schedule import InfeasibleScheduleError, Schedule, memory_at


def brute_memory(prefill, decode, start, t: int) -> int:
    """``m(t)`` of SPEC section 2, literally: the sum of ``s_i + t - p_i`` over
    ``p_i < t <= p_i + o_i``."""
    total = 0
    for s, o, p in zip(prefill, decode, start, strict=True):
        if p < t <= p + o:
            total += int(s) + t - int(p)
    return total


# --------------------------------------------------------------------------- hand-computed

# Three requests, M = 10: A (s=2, o=3), B (s=1, o=2), C (s=0, o=1); starts p = (0, 0, 3).
#   A runs in rounds 1..3 holding 3, 4, 5 tokens; B in rounds 1..2 holding 2, 3;
#   C in round 4 holding 1.
#   m(1) = 3 + 2 = 5, m(2) = 4 + 3 = 7, m(3) = 5, m(4) = 1, m(5) = 0.
#   C = (3, 2, 4): TEL = 9, mean 3, makespan 4, peak 7 (at round 2, the completion of B).
OFFLINE = Instance.from_arrays([2, 1, 0], [3, 2, 1], 10, ids=["A", "B", "C"], name="hand")


def test_hand_offline_metrics():
    sched = Schedule(OFFLINE, [0, 0, 3], policy="hand")
    assert sched.completion.tolist() == [3, 2, 4]
    assert sched.latency.tolist() == [3, 2, 4]
    assert sched.tel == 9
    assert sched.mean_latency == 3.0
    assert sched.makespan == 4
    rounds, mem = sched.memory_profile()
    assert rounds.tolist() == [1, 2, 3, 4]
    assert mem.tolist() == [5, 7, 5, 1]
    assert sched.memory_at([1, 2, 3, 4, 5]).tolist() == [5, 7, 5, 1, 0]
    assert sched.peak_memory == 7
    assert sched.summary() == {"tel": 9, "mean_latency": 3.0, "makespan": 4, "peak_memory": 7}
    assert sched.violations() == []
    assert sched.feasible
    assert sched.check() is sched


# Same requests with arrivals a = (0, 1, 2), starts p = (0, 1, 3), M = 10.
#   A rounds 1..3: 3, 4, 5; B rounds 2..3: 2, 3; C round 4: 1.
#   m(1) = 3, m(2) = 4 + 2 = 6, m(3) = 5 + 3 = 8, m(4) = 1.
#   C = (3, 3, 4), latencies C - a = (3, 2, 2): TEL = 7, peak 8 at round 3.
ONLINE = OFFLINE.replace(arrival=[0, 1, 2], name="hand-online")


def test_hand_online_metrics():
    sched = Schedule(ONLINE, [0, 1, 3])
    assert sched.completion.tolist() == [3, 3, 4]
    assert sched.latency.tolist() == [3, 2, 2]
    assert sched.tel == 7
    assert sched.mean_latency == pytest.approx(7 / 3)
    assert sched.makespan == 4
    assert sched.memory_profile()[1].tolist() == [3, 6, 8, 1]
    assert sched.peak_memory == 8
    assert sched.feasible


def test_overflow_detected_at_the_right_round():
    # M = 6 < m(2) = 7: only round 2 overflows (m = 5, 7, 5, 1).
    sched = Schedule(OFFLINE.replace(memory=6), [0, 0, 3], policy="p")
    bad = sched.violations()
    assert len(bad) == 1
    assert "round 2" in bad[0] and "7 tokens" in bad[0] and "M = 6" in bad[0]
    assert not sched.feasible
    with pytest.raises(InfeasibleScheduleError, match="round 2"):
        sched.check()


def test_growing_memory_overflows_at_a_completion_round():
    # One request s=0, o=4 started at 0 and one s=0, o=4 started at 1, M = 7.
    # Rounds: r0 holds 1,2,3,4 in rounds 1..4; r1 holds 1,2,3,4 in rounds 2..5.
    # m = 1, 3, 5, 7, 4: feasible at M = 7, overflow only at round 4 (completion of r0) at M = 6.
    inst = Instance.from_arrays([0, 0], [4, 4], 7)
    assert Schedule(inst, [0, 1]).memory_profile()[1].tolist() == [1, 3, 5, 7, 4]
    assert Schedule(inst, [0, 1]).feasible
    bad = Schedule(inst.replace(memory=6), [0, 1]).violations()
    assert len(bad) == 1 and "round 4" in bad[0] and "7 tokens" in bad[0]


def test_start_before_arrival():
    sched = Schedule(ONLINE, [0, 0, 3])
    bad = sched.violations()
    assert len(bad) == 1
    assert "'B'" in bad[0] and "round 0" in bad[0] and "arrival 1" in bad[0]
    with pytest.raises(InfeasibleScheduleError, match="'B'"):
        sched.check()


def test_violations_limit():
    inst = Instance.from_arrays([0] * 4, [1] * 4, 1, [1, 1, 1, 1])
    sched = Schedule(inst, [0, 0, 0, 0])  # every request early and round 1 holds 4 > 1
    assert len(sched.violations()) == 5
    assert len(sched.violations(limit=2)) == 2


def test_bad_starts_rejected():
    with pytest.raises(InfeasibleScheduleError):
        Schedule(OFFLINE, [0, 0])
    with pytest.raises(InfeasibleScheduleError):
        Schedule(OFFLINE, [0, 0.5, 3])
    sched = Schedule(OFFLINE, np.array([0.0, 0.0, 3.0]))
    assert sched.start.dtype == np.int64 and sched.tel == 9


# --------------------------------------------------------------------------- brute force


@st.composite
def schedules(draw):
    inst = draw(instances(max_n=7, max_memory=25))
    start = draw(st.lists(st.integers(0, 12), min_size=inst.n, max_size=inst.n))
    return Schedule(inst, start)


@settings(max_examples=150, deadline=None)
@given(schedules())
def test_memory_matches_brute_force(sched):
    inst = sched.instance
    s, o, p = inst.prefill.tolist(), inst.decode.tolist(), sched.start.tolist()
    rounds = list(range(0, sched.makespan + 3))
    expect = [brute_memory(s, o, p, t) for t in rounds]
    assert sched.memory_at(rounds).tolist() == expect
    assert (
        memory_at(inst.prefill, sched.start, sched.completion, np.array(rounds)).tolist() == expect
    )
    prof_rounds, prof = sched.memory_profile()
    assert prof_rounds.tolist() == list(range(1, sched.makespan + 1))
    assert prof.tolist() == expect[1 : sched.makespan + 1]
    assert sched.peak_memory == max(expect)
    assert sched.makespan == max(pi + oi for pi, oi in zip(p, o, strict=True))
    a = inst.arrival.tolist()
    assert sched.tel == sum(pi + oi - ai for pi, oi, ai in zip(p, o, a, strict=True))
    # Feasibility as SPEC section 2 states it, checked at every round.
    feasible = max(expect) <= inst.memory and all(pi >= ai for pi, ai in zip(p, a, strict=True))
    assert sched.feasible == feasible
    assert (sched.violations() == []) == feasible


@pytest.mark.parametrize(
    "bad",
    [
        [float("inf"), 0, 3],
        [float("nan"), 0, 3],
        [2**63, 0, 3],
        [2**70, 0, 3],
        np.array([2**63, 0, 3], dtype=np.uint64),
        [-1, 0, 3],
        [2**40 + 1, 0, 3],
        ["0", 0, 3],
        np.array([True, False, True]),
    ],
)
def test_starts_must_be_integer_rounds_in_the_model_range(bad):
    # Schedule(inst, [inf, 0, 0]) and a start of 2^63 used to give TEL -9223372036854775798
    with pytest.raises(
        InfeasibleScheduleError,
        match=r"request 'A': start must be an integer round in \[0, 2\^40\]",
    ):
        Schedule(OFFLINE, bad)


def test_starts_at_the_range_limit_and_shape_errors():
    sched = Schedule(OFFLINE, [2**40, 0, 3])
    assert sched.tel == 2**40 + 3 + 2 + 3 + 1
    with pytest.raises(InfeasibleScheduleError, match="flat list of 3 rounds"):
        Schedule(OFFLINE, [[0], [0], [3]])
    with pytest.raises(InfeasibleScheduleError, match="runs"):
        Schedule(OFFLINE, [0, 0, 3], runs=np.array([[0, 0, 2**62, 1]]))


def test_repr_is_one_short_line_without_the_arrays():
    """Issue 22, item 13: a Schedule's repr printed whole arrays."""
    inst = Instance.from_arrays([1] * 100_000, [1] * 100_000, 10**6, name="big")
    sched = Schedule(inst, np.zeros(100_000, dtype=np.int64), policy="all-at-once")
    assert repr(sched) == ("Schedule(instance='big', n=100000, policy='all-at-once', tel=100000)")
