"""Two readings of Sorted-F where the seed paper leaves a choice
(docs/results/sorted-f-readings.md): Phase 1's feasibility ``fit="peaks"`` (SPEC section 4)
or ``"common-start"`` (the true peak of a batch started together), and Phase 2 as the
executor on the list or as batches one after another (:func:`sequential_batches_schedule`).
Hand-computed cases, then properties against enumeration and the schedule's own feasibility
check."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.cases import CASES

from lpsched.executor import execute
from lpsched.instance import Instance
from lpsched.policies.registry import run_policy
from lpsched.policies.sorted_f import (
    PHASE1_FITS,
    SWAP_MAX_N,
    phase1_batches,
    select_dp,
    select_swap,
    sorted_f_order,
    sorted_f_sequential,
)
from lpsched.policies.sorted_f_readings import common_start_peak, sequential_batches_schedule
from lpsched.schedule import Schedule

# --------------------------------------------------------------------------- references


def f_exact(values) -> Fraction:
    values = [int(v) for v in values]
    return Fraction(sum(values), len(values) ** 2)


def peak_by_rounds(prefill, decode) -> int:
    """Common-start peak straight from the definition: every round r = 1 .. max o."""
    if not len(decode):
        return 0
    return max(
        sum(s + r for s, o in zip(prefill, decode, strict=True) if o >= r)
        for r in range(1, max(decode) + 1)
    )


def brute_select(decode, size, memory: int, fit: str) -> tuple[int, ...]:
    """Phase-1 choice by enumeration: least F (exact), then larger |X|, then the
    lexicographically smallest set of positions -- in index order for ``peaks`` (SPEC), in
    ``(o, index)`` order for ``common-start`` (the documented tie rule of that reading)."""
    r = len(decode)
    prefill = [z - o for o, z in zip(decode, size, strict=True)]
    rank = {p: q for q, p in enumerate(sorted(range(r), key=lambda i: (decode[i], i)))}
    best = None
    for k in range(1, r + 1):
        for X in combinations(range(r), k):
            if fit == "peaks":
                ok = sum(size[i] for i in X) <= memory
                tie = X
            else:
                ok = peak_by_rounds([prefill[i] for i in X], [decode[i] for i in X]) <= memory
                tie = tuple(sorted(rank[i] for i in X))
            if ok:
                key = (f_exact([decode[i] for i in X]), -k, tie)
                if best is None or key < best[0]:
                    best = (key, X)
    assert best is not None  # every single request fits
    return best[1]


@st.composite
def phase1_inputs(draw, max_r: int = 8):
    """``(decode, size, M)`` with ``size_i = s_i + o_i <= M``; ``ties`` draws tiny ranges."""
    memory = draw(st.integers(1, 30))
    r = draw(st.integers(1, max_r))
    ties = draw(st.booleans())
    o_max = min(memory, 2 if ties else 10)
    decode = draw(st.lists(st.integers(1, o_max), min_size=r, max_size=r))
    size = [o + draw(st.integers(0, min(memory - o, 1 if ties else memory))) for o in decode]
    return decode, size, memory


# --------------------------------------------------------------------------- hand cases


def test_common_start_peak_hand_values():
    # s = (2, 2, 0), o = (1, 1, 2): round 1 holds 3 + 3 + 1 = 7, round 2 holds 2 -> 7,
    # against a sum of peaks 3 + 3 + 2 = 8.
    assert common_start_peak(np.array([2, 2, 0]), np.array([1, 1, 2])) == 7
    # s = (0, 3), o = (4, 1): round 1: 1 + 4 = 5, round 4: 4 -> 5 (sum of peaks 8).
    assert common_start_peak(np.array([0, 3]), np.array([4, 1])) == 5
    assert common_start_peak(np.array([5]), np.array([3])) == 8
    assert common_start_peak(np.array([], dtype=int), np.array([], dtype=int)) == 0


# s = (2, 2, 0), o = (1, 1, 2), M = 7. Sum of peaks of all three = 8 > 7, common-start peak 7.
# peaks: {0, 1} (size 6, F = 2/4) beats every other feasible set ({0, 2}, {1, 2}: 3/4;
# singles >= 1), then {2}. common-start: {0, 1, 2} fits, F = 4/9 < 1/2.
HAND = Instance.from_arrays([2, 2, 0], [1, 1, 2], 7)


@pytest.mark.parametrize("solver", ["dp", "swap"])
def test_a_batch_that_fits_only_by_its_common_start_peak(solver):
    assert [b.tolist() for b in phase1_batches(HAND, solver)] == [[0, 1], [2]]
    assert [b.tolist() for b in phase1_batches(HAND, solver, fit="peaks")] == [[0, 1], [2]]
    assert [b.tolist() for b in phase1_batches(HAND, solver, fit="common-start")] == [[0, 1, 2]]
    o, z = HAND.decode, HAND.size
    assert select_dp(o, z, 7, fit="common-start").tolist() == [0, 1, 2]
    assert select_swap(o, z, 7, fit="common-start").tolist() == [0, 1, 2]


def test_sequential_phase2_hand_starts():
    # (a)+(d): batch {0, 1} at 0 (completes at 1), then {2} at 1 (completes at 3): TEL 5.
    a_d = sorted_f_sequential(HAND, "dp").check()
    assert a_d.start.tolist() == [0, 0, 1] and a_d.tel == 1 + 1 + 3
    assert a_d.info["batches"] == [[0, 1], [2]] and a_d.info["batch_starts"] == [0, 1]
    # (b)+(d): all three together at 0 (peak 7 = M): TEL 4.
    b_d = sorted_f_sequential(HAND, "dp", fit="common-start").check()
    assert b_d.start.tolist() == [0, 0, 0] and b_d.tel == 4 and b_d.peak_memory == 7
    # (a)+(c): the executor admits request 2 beside 0 and 1 at round 0 (true memory 7): TEL 4.
    assert execute(HAND, sorted_f_order(HAND, "dp")).start.tolist() == [0, 0, 0]


def test_sequential_waits_for_the_whole_batch_and_for_arrivals():
    # Batch {0, 1} (o = 5 and 1) starts at 0 and completes at 5; request 2 (o = 1) could run
    # beside request 0 from round 1 on, but waits for the batch: p_2 = 5. Request 3 arrives at
    # 9, after batch {2} completes at 6: its batch starts at 9.
    inst = Instance.from_arrays([0, 0, 0, 0], [5, 1, 1, 2], 10, arrival=[0, 0, 0, 9])
    sched = sequential_batches_schedule(inst, [[0, 1], [2], [3]]).check()
    assert sched.start.tolist() == [0, 0, 5, 9]
    assert sched.info["batch_starts"] == [0, 5, 9]
    assert sched.tel == 5 + 1 + 6 + 2  # latencies C_i - a_i
    # the executor on the same list is work-conserving: request 2 starts at once
    assert execute(inst, [0, 1, 2, 3]).start.tolist()[:3] == [0, 0, 0]


def test_sequential_refuses_bad_batches():
    with pytest.raises(ValueError, match="partition"):
        sequential_batches_schedule(HAND, [[0, 1]])
    with pytest.raises(ValueError, match="partition"):
        sequential_batches_schedule(HAND, [[0, 1], [], [2]])
    with pytest.raises(ValueError, match="partition"):
        sequential_batches_schedule(HAND, [[0, 1], [1, 2]])
    tight = Instance.from_arrays([2, 2, 0], [1, 1, 2], 6)
    with pytest.raises(ValueError, match="batch 0 .* peaks at 7 tokens"):
        sequential_batches_schedule(tight, [[0, 1, 2]])


def test_fit_errors_name_the_solver():
    with pytest.raises(ValueError, match="fit"):
        phase1_batches(HAND, "dp", fit="sum")
    with pytest.raises(ValueError, match="quantile"):
        phase1_batches(HAND, "quantile", fit="common-start")
    with pytest.raises(ValueError, match="quantile"):
        sorted_f_order(HAND, "quantile", fit="common-start")
    with pytest.raises(ValueError, match="fit"):
        select_dp(HAND.decode, HAND.size, 7, fit="true-peak")
    with pytest.raises(ValueError, match="fit"):
        select_swap(HAND.decode, HAND.size, 7, fit="true-peak")
    assert PHASE1_FITS == ("peaks", "common-start")


def test_common_start_error_says_auto_picked_quantile():
    n = SWAP_MAX_N + 1  # auto picks quantile above SWAP_MAX_N
    big = Instance.from_arrays(np.ones(n, dtype=np.int64), np.ones(n, dtype=np.int64), 4)
    with pytest.raises(ValueError, match=f"'auto' picked it for n = {n}, M = 4"):
        sorted_f_order(big, fit="common-start")


def test_auto_refuses_common_start_where_it_picks_quantile():
    inst = Instance.from_arrays(np.zeros(10_001, dtype=int), np.ones(10_001, dtype=int), 10)
    with pytest.raises(ValueError, match="quantile"):
        phase1_batches(inst, "auto", fit="common-start")


# --------------------------------------------------------------------------- properties


@settings(max_examples=150)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 12)), min_size=0, max_size=8))
def test_common_start_peak_is_the_schedule_peak(requests):
    """The peak equals the definition, the independent checker's peak of the batch started at
    0, and is never above the sum of peaks."""
    s = [r[0] for r in requests]
    o = [r[1] for r in requests]
    peak = common_start_peak(np.array(s, dtype=int), np.array(o, dtype=int))
    assert peak == peak_by_rounds(s, o)
    assert peak <= sum(a + b for a, b in zip(s, o, strict=True))
    if requests:
        inst = Instance.from_arrays(s, o, max(peak, max(a + b for a, b in zip(s, o, strict=True))))
        assert Schedule(inst, np.zeros(len(s), dtype=int)).check().peak_memory == peak


@settings(max_examples=150)
@given(phase1_inputs(), st.sampled_from(PHASE1_FITS))
def test_select_dp_equals_enumeration_under_both_fits(data, fit):
    decode, size, memory = data
    got = select_dp(np.array(decode), np.array(size), memory, fit=fit).tolist()
    assert tuple(got) == brute_select(decode, size, memory, fit)


@settings(max_examples=100)
@given(phase1_inputs(max_r=10))
def test_swap_common_start_is_a_feasible_local_minimum(data):
    """Feasible, F >= the dp optimum, and no add, remove or swap that keeps the common-start
    peak within M lowers F."""
    decode, size, memory = data
    prefill = [z - o for o, z in zip(decode, size, strict=True)]
    d, z = np.array(decode), np.array(size)
    X = select_swap(d, z, memory, fit="common-start").tolist()
    assert X == sorted(set(X)) and X
    assert peak_by_rounds([prefill[i] for i in X], [decode[i] for i in X]) <= memory
    fx = f_exact([decode[i] for i in X])
    assert f_exact(d[select_dp(d, z, memory, fit="common-start")]) <= fx
    out = [j for j in range(len(decode)) if j not in X]
    neighbours = [X + [j] for j in out]
    neighbours += [[i for i in X if i != k] for k in X if len(X) >= 2]
    neighbours += [[i for i in X if i != k] + [j] for k in X for j in out]
    for Y in neighbours:
        if peak_by_rounds([prefill[i] for i in Y], [decode[i] for i in Y]) <= memory:
            assert f_exact([decode[i] for i in Y]) >= fx


@settings(max_examples=60)
@given(
    instances(max_n=12, max_memory=40, max_decode=10),
    st.sampled_from(["dp", "swap"]),
    st.sampled_from(PHASE1_FITS),
)
def test_every_reading_gives_feasible_schedules(inst, solver, fit):
    """Batches partition the requests, each sorted by (o, index) and within its fit; Phase 2
    either way passes Schedule.check(); sequential batches start together, one after another."""
    batches = phase1_batches(inst, solver, fit=fit)
    o, s = inst.decode, inst.prefill
    assert sorted(int(i) for b in batches for i in b) == list(range(inst.n))
    for b in batches:
        assert b.tolist() == sorted(b.tolist(), key=lambda i: (o[i], i))
        assert common_start_peak(s[b], o[b]) <= inst.memory
        if fit == "peaks":
            assert int(inst.size[b].sum()) <= inst.memory
    execute(inst, sorted_f_order(inst, solver, fit=fit)).check()
    seq = sorted_f_sequential(inst, solver, fit=fit).check()
    previous_end = 0
    for b, p in zip(seq.info["batches"], seq.info["batch_starts"], strict=True):
        assert set(seq.start[b].tolist()) == {p}
        assert p == max(previous_end, int(inst.arrival[b].max()))
        previous_end = int(seq.completion[b].max())


@settings(max_examples=60)
@given(instances(max_n=10, max_memory=30, arrivals=False), st.sampled_from(["dp", "swap"]))
def test_default_is_the_spec_reading(inst, solver):
    """``fit`` left out is ``"peaks"``: the same batches, list and registry schedule."""
    default = sorted_f_order(inst, solver)
    assert default.tolist() == sorted_f_order(inst, solver, fit="peaks").tolist()
    assert run_policy(inst, "sorted-f", solver=solver).start.tolist() == (
        execute(inst, default).start.tolist()
    )
    if solver == "dp":
        o, z = inst.decode.tolist(), inst.size.tolist()
        first = brute_select(o, z, inst.memory, "peaks")
        assert tuple(phase1_batches(inst, "dp")[0].tolist()) == tuple(
            sorted(first, key=lambda i: (o[i], i))
        )


@pytest.mark.parametrize(
    "case", [c for c in CASES if "sorted_f_order" in c], ids=lambda c: c["name"]
)
def test_peaks_keeps_the_reference_orders(case):
    inst = Instance.from_arrays(
        case["prefill"], case["decode"], case["memory"], case["arrival"], ids=case["ids"]
    )
    assert sorted_f_order(inst, "dp", fit="peaks").tolist() == case["sorted_f_order"]
