"""The staggered pipeline, GBA and GBA-D (SPEC section 4.2; our reading of arXiv 2601.22996).

Checked: the pipeline's peak against a direct simulation of its slots, the width as the widest
that fits, a hand-computed pipeline, the classes, the independent feasibility check of every
schedule (random instances with heterogeneous prompts and arrivals), GBA-D against a literal
reading of its rule and never later than GBA, and SPS within 2 of the brute-force optimum on
requests of one length and one prompt length (the paper's claim).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.brute_force import brute_force_tel

from lpsched.instance import Instance
from lpsched.policies.pipeline import (
    gba,
    gba_d,
    geometric_classes,
    pipeline_peak,
    pipeline_width,
    sps,
    staggered_starts,
)
from lpsched.policies.registry import run_policy
from lpsched.schedule import Schedule


def simulated_peak(width: int, window: int, prefill: int) -> int:
    """Memory of K slots that restart every L rounds from offsets floor(j L / K), each request
    running the whole window, over three periods (SPEC section 2's memory)."""
    off = [j * window // width for j in range(width)]
    mem = [0] * (4 * window + 2)
    for j in range(width):
        for c in range(3):
            p = off[j] + c * window
            for r in range(p + 1, p + window + 1):
                mem[r] += prefill + r - p
    return max(mem)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.integers(1, 30), st.integers(0, 20))
def test_peak_is_the_simulated_peak(width, window, prefill):
    assert pipeline_peak(width, window, prefill) == simulated_peak(width, window, prefill)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(0, 40), st.integers(0, 200))
def test_width_is_the_widest_that_fits(window, prefill, extra):
    memory = prefill + window + extra
    k = pipeline_width(window, prefill, memory)
    assert pipeline_peak(k, window, prefill) <= memory
    assert pipeline_peak(k + 1, window, prefill) > memory
    # the largest fitting width: no wider one fits either (brute force up to the bound where
    # every slot holds s + 1 tokens)
    assert all(
        pipeline_peak(j, window, prefill) > memory
        for j in range(k + 1, memory // (prefill + 1) + 2)
    )


def test_hand_computed_pipeline():
    # s = 1, L = 4: two slots at offsets 0 and 2 peak at 2 + 6 = 8 tokens (together: 10); three
    # slots at 0, 1, 2 peak at 3 + 9 = 12.
    assert pipeline_peak(2, 4, 1) == 8
    assert pipeline_peak(3, 4, 1) == 12
    assert pipeline_width(4, 1, 8) == 2
    assert staggered_starts(np.array([4, 4, 4, 4]), 4, 2, 0).tolist() == [0, 2, 4, 6]
    inst = Instance.from_arrays([1] * 4, [4] * 4, 8)
    sched = sps(inst)
    assert sched.start.tolist() == [0, 2, 4, 6]
    assert sched.tel == 4 + 6 + 8 + 10
    assert sched.feasible


def test_classes():
    o = np.array([1, 2, 3, 4, 5, 8, 9, 64, 65])
    assert geometric_classes(o, 2.0, 1).tolist() == [0, 1, 2, 2, 3, 3, 4, 6, 7]
    assert geometric_classes(o, 2.0, 64).tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert geometric_classes(o, 3.0, 2).tolist() == [0, 0, 1, 1, 1, 2, 2, 4, 4]


def test_gba_runs_classes_shortest_first():
    # M = 10, s = 0: class 0 (o = 1) then class 2 (o = 3, 4: window 4).
    inst = Instance.from_arrays([0, 0, 0], [4, 1, 3], 10)
    sched = gba(inst)
    assert [c["class"] for c in sched.info["classes"]] == [0, 2]
    assert sched.start[1] == 0  # the short request first
    assert sched.start[0] >= 1 and sched.start[2] >= 1
    assert sched.feasible


def literal_gba_d(inst: Instance, base: np.ndarray) -> list[int]:
    """GBA-D read literally: by GBA start, each request moves to the earliest round at or after
    its arrival and the previous request's new start at which the whole schedule (the others
    where they are) stays feasible."""
    start = base.copy()
    floor = max(int(inst.arrival.min()), int(inst.arrival.max()) - int(inst.decode.sum()))
    for i in np.lexsort((np.arange(inst.n), base)).tolist():
        for t in range(max(int(inst.arrival[i]), floor), int(start[i]) + 1):
            trial = start.copy()
            trial[i] = t
            if Schedule(inst, trial).feasible:
                start[i] = t
                break
        floor = int(start[i])
    return start.tolist()


@settings(max_examples=150, deadline=None)
@given(instances(max_n=7, max_memory=24, max_decode=8))
def test_schedules_are_feasible_and_gba_d_is_the_literal_rule(inst):
    for policy in ("sps", "gba", "gba-d"):
        assert run_policy(inst, policy).feasible, policy
    base = gba(inst)
    moved = gba_d(inst)
    assert moved.start.tolist() == literal_gba_d(inst, base.start)
    assert (moved.start <= base.start).all() and (moved.start >= inst.arrival).all()
    assert moved.tel <= base.tel == moved.info["gba_tel"]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 6), st.integers(1, 4), st.integers(0, 12))
def test_sps_within_two_on_requests_of_one_length(n, s, o, extra):
    inst = Instance.from_arrays([s] * n, [o] * n, s + o + extra)
    assert sps(inst).tel <= 2 * brute_force_tel(inst)


def test_options_are_checked():
    inst = Instance.from_arrays([1], [1], 4)
    for bad in ({"alpha": 1.0}, {"alpha": float("inf")}, {"beta": 0}, {"beta": 1.5}):
        with pytest.raises(ValueError):
            gba(inst, **bad)
        with pytest.raises(ValueError):
            gba_d(inst, **bad)


def test_gba_d_far_arrivals_keep_a_small_profile():
    inst = Instance.from_arrays([3, 3], [4, 4], 20, [0, 10**9])
    sched = gba_d(inst)
    assert sched.feasible and sched.start.tolist() == [10**9 - 8, 10**9]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 9), st.integers(1, 6), st.integers(0, 12)), min_size=1, max_size=8
    ),
    st.sampled_from([1, 3, 1 << 20]),
)
def test_gba_d_memory_profile_is_the_literal_sum(requests, chunk):
    """The in-place profile (sliced by ``_CHUNK``) equals sum over running requests of
    s_i + (r - p_i) on p_i < r <= p_i + o_i, round by round."""
    import lpsched.policies.pipeline as pipeline

    s, o, p = (np.array(col, dtype=np.int64) for col in zip(*requests, strict=True))
    rounds = int((p + o).max()) + 2
    old, pipeline._CHUNK = pipeline._CHUNK, chunk
    try:
        got = pipeline._profile(s, p, o, rounds).tolist()
    finally:
        pipeline._CHUNK = old
    want = [
        sum(int(si + r - pi) for si, oi, pi in zip(s, o, p, strict=True) if pi < r <= pi + oi)
        for r in range(rounds)
    ]
    assert got == want
