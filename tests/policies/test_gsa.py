"""The blind policies gsa and gsa-spec (SPEC section 11.1): a kill and restart by hand, the slot
reuse, the two-point instance, feasibility on random instances, the prompt readings and the
option errors. Blindness and the registry-wide feasibility check are in tests/test_blind.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_blind import assert_blind

from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.gsa import GSA, GSA_SPEC, check_gsa_options
from lpsched.policies.registry import POLICIES, run_policy


def test_a_kill_a_truncated_attempt_and_a_restart_by_hand():
    # s = 2, M = 6, o = (1, 3), all at 0; beta = 2, alpha = 2.
    # Phase 0: tau = 2, L = min(2, 6 - 2) = 2; two lanes would peak at 2*2 + 3 = 7 > 6 (offsets
    # 0 and 1), so K = 1, cycles [0, 2], [2, 4], ...
    #   t = 0: the lane starts r0 (full, cap 2); r0 completes at 1 (round 1: 3 tokens).
    #   t = 1: the lane, free in mid-cycle, starts r1 truncated, capped at the cycle end 2.
    #   t = 2: r1 (1 token of 3) is killed; it did not get its slice, so the lane, at its
    #          cycle start, starts it again at once (full, cap 4).
    #   t = 4: r1 (2 tokens of 3) is killed at its cap: it waits for phase 1.
    # Phase 1 at t = 4: tau = 4, L = min(4, 4) = 4, K = 1 (2 + 4 = 6 <= 6): r1 runs 4..7.
    # TEL = 1 + 7 = 8; runs (0,0,1,1), (1,1,2,0), (1,2,4,0), (1,4,7,1); wasted 1 + 2 = 3;
    # memory: rounds 1-7 hold 3, 3, 3, 4, 3, 4, 5 <= 6.
    inst = Instance.from_arrays([2, 2], [1, 3], 6)
    sched = GSA.run(inst, name="gsa", record=True, beta=2).check()
    assert sched.tel == 8 and sched.start.tolist() == [0, 4]
    assert sorted(map(tuple, sched.runs.tolist())) == [
        (0, 0, 1, 1),
        (1, 1, 2, 0),
        (1, 2, 4, 0),
        (1, 4, 7, 1),
    ]
    assert (sched.info["kills"], sched.info["wasted_tokens"], sched.info["attempts"]) == (2, 3, 4)
    assert sched.info["decisions"] == [
        (0, (), (0,)),
        (1, (), (1,)),
        (2, (1,), (1,)),
        (4, (1,), (1,)),
    ]


def test_speculation_runs_a_request_in_idle_memory_by_hand():
    # the same instance under gsa-spec: at t = 0 the lane takes r0 (3 tokens in round 1) and r1
    # starts speculatively beside it (3 + 3 = 6 <= 6); r0 completes at 1; the base skips r1,
    # which is running speculatively; nothing is short, so r1 runs on to 3. TEL = 1 + 3 = 4.
    inst = Instance.from_arrays([2, 2], [1, 3], 6)
    sched = GSA_SPEC.run(inst, name="gsa-spec", record=True, beta=2).check()
    assert sched.tel == 4 and sched.info["kills"] == 0
    assert sched.info["decisions"] == [(0, (), (0, 1))]


def test_a_shortage_kills_only_speculative_attempts():
    # s = 2, M = 8, o = (4, 1, 3), beta = 4: phase 0 has L = 4 and one lane (two would peak at
    # 2*2 + 4 + 2 = 10 > 8). t = 0: the lane takes r0, r2 starts speculatively (3 + 3 = 6);
    # round 3 would hold 5 + 5 = 10 > 8, so at t = 2 the speculative r2 is killed, r0 is not.
    inst = Instance.from_arrays([2, 2, 2], [4, 1, 3], 8)
    sched = GSA_SPEC.run(inst, name="gsa-spec", record=True, beta=4).check()
    decisions = sched.info["decisions"]
    assert decisions[0] == (0, (), (0, 2)) and decisions[1][:2] == (2, (2,))
    assert all(0 not in kills for _, kills, _ in decisions)


@pytest.mark.parametrize(("policy", "tel"), [("gsa", 104_847), ("gsa-spec", 29_391)])
def test_on_the_two_point_instance_gsa_beats_fcfs_and_vllm(policy, tel):
    inst = two_point()
    fcfs, vllm = run_policy(inst, "fcfs").tel, run_policy(inst, "vllm").tel
    assert fcfs == vllm == 185_892
    sched = run_policy(inst, policy).check()
    assert sched.tel == tel < fcfs
    assert sched.info["kills"] > 0


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(1, 12), st.integers(0, 8)), min_size=1,
             max_size=12),
    st.integers(0, 12),
    st.sampled_from([1, 2, 3, 64]),
    st.sampled_from([1.5, 2.0, 3.0]),
    st.sampled_from(["classes", "max"]),
)  # fmt: skip
@settings(max_examples=80, deadline=None)
def test_schedules_on_random_instances_are_feasible(rows, extra, beta, alpha, prompts):
    s, o, a = (list(col) for col in zip(*rows, strict=True))
    memory = max(x + y for x, y in zip(s, o, strict=True)) + extra
    inst = Instance.from_arrays(s, o, memory, arrival=a)
    for spec in (GSA, GSA_SPEC):
        sched = spec.run(inst, beta=beta, alpha=alpha, prompts=prompts).check()
        assert (sched.start >= inst.arrival).all()


def test_blind_with_heterogeneous_prompts_and_arrivals():
    rng = np.random.default_rng(5)
    n = 40
    inst = Instance.from_arrays(
        rng.choice([8, 20], n), rng.integers(1, 60, n), 120, arrival=np.arange(n) // 10
    )
    for spec in (GSA, GSA_SPEC):
        for prompts in ("classes", "max"):
            assert_blind(spec, inst, {"beta": 2, "prompts": prompts})


def test_prompt_readings():
    inst = Instance.from_arrays([1, 5, 5], [3, 2, 4], 12)
    with pytest.raises(ValueError, match="prompts='common' needs one prompt length"):
        run_policy(inst, "gsa", prompts="common")
    one = two_point(n_long=2, n_short=10)
    tels = {p: run_policy(one, "gsa", prompts=p).tel for p in ("classes", "max", "common")}
    assert len(set(tels.values())) == 1  # one prompt length: the three readings agree


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"alpha": 1}, "alpha must be a number > 1"),
        ({"alpha": 1.0000001}, r"alpha must be >= 1.01"),
        ({"beta": 0}, r"beta must be an integer in \[1, 2\^40\]"),
        ({"beta": 2.5}, r"beta must be an integer"),
        ({"prompts": "min"}, "prompts must be one of"),
    ],
)
def test_option_errors(options, match):
    with pytest.raises(ValueError, match=match):
        check_gsa_options(**options)
    for name in ("gsa", "gsa-spec"):
        assert POLICIES.lookup(name).check is check_gsa_options
        with pytest.raises(ValueError, match=match):
            run_policy(two_point(n_long=1, n_short=1), name, **options)
