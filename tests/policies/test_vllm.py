"""The production-style baselines ``vllm`` and ``vllm-sf`` (SPEC section 4).

Checked: two hand-computed cases (a preemption with lost work and a restart; a request admitted
and preempted at the same decision time), equality with a round-by-round simulation written
from the SPEC text alone (random instances, with arrivals, and a generated workload), the
independent feasibility check with every cut run, the bookkeeping in ``info``, and the queue
orders of the two policies.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instance_and_order, instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.policies.registry import (
    POLICIES,
    PolicySelectionError,
    check_policy_options,
    parse_policy,
    run_policy,
)
from lpsched.policies.vllm import execute_preemptive, vllm, vllm_sf


def simulate(
    inst: Instance, queue: list[int], victim: str = "newest", early_fraction: float = 0.5
) -> tuple[list[int], list[tuple[int, ...]], int]:
    """SPEC section 4, "Production-style baseline", read literally, one round at a time, with
    the victim rule ``victim``.

    Returns the start of each request's last run, every run with at least one round as
    ``(request, start, end, completed)`` (sorted), and the number of preemptions.
    """
    s, o, a, M = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist(), inst.memory
    Q = list(queue)
    running: dict[int, int] = {}  # request -> p
    start = [-1] * inst.n
    runs = []
    preemptions = 0
    t = 0
    while len([r for r in runs if r[3]]) < inst.n:
        for j in [j for j, p in running.items() if p + o[j] <= t]:  # C_j <= t leave
            p = running.pop(j)
            runs.append((j, p, p + o[j], 1))
            start[j] = p
        u = sum(s[j] + t + 1 - p for j, p in running.items())  # memory in round t+1
        while Q and a[Q[0]] <= t and u + s[Q[0]] + 1 <= M:
            h = Q.pop(0)
            running[h] = t
            u += s[h] + 1
        r = t + 2  # m(r) of SPEC section 2: a request with C_j < r holds nothing
        while sum(s[j] + r - p for j, p in running.items() if r <= p + o[j]) > M:
            j = pick_victim(victim, early_fraction, running, t, s, o)
            p = running.pop(j)
            Q.insert(0, j)
            preemptions += 1
            if t > p:
                runs.append((j, p, t, 0))
        t += 1
    return start, sorted(runs), preemptions


def pick_victim(victim, c, running: dict[int, int], t, s, o) -> int:
    """The request that step 3 preempts at ``t`` under each rule, read from SPEC section 4."""
    if victim == "srf":  # fewest tokens held, then latest p, then highest index
        return min(running, key=lambda j: (s[j] + t - running[j], -running[j], -j))
    pool = list(running)
    if victim == "trail":  # only those that emitted at most c o_j tokens, if any
        pool = [j for j in running if t - running[j] <= c * o[j]] or pool
    return max(pool, key=lambda j: (running[j], j))  # latest p, then highest index


def _runs(sched) -> list[tuple[int, ...]]:
    return sorted(tuple(r) for r in sched.runs.tolist())


def test_hand_computed_preemption_and_restart():
    # M = 10; (s, o): r0 (3, 4), r1 (1, 1), r2 (1, 4), r3 (4, 1); all arrive at 0. Queue by
    # arrival then index: r0 r1 r2 r3. Memory of a request started at p in round r: s + r - p.
    # t=0: u = 0. Admit r0 (u = 4), r1 (u = 6), r2 (u = 8); r3 needs 8 + 5 = 13 > 10: stop.
    #      Round 2: r1 has left (C = 1); r0 holds 5, r2 holds 3: 8 <= 10.
    # t=1: r1 leaves. u = 5 + 3 = 8; r3: 13 > 10. Round 3: 6 + 4 = 10 <= 10.
    # t=2: u = 10; r3 does not fit. Round 4: 7 + 5 = 12 > 10: preempt the latest admitted;
    #      r0 and r2 both have p = 0, so the higher index, r2: cut run (r2, 0, 2) (rounds 1-2,
    #      2 tokens lost); Q = r2 r3. Round 3 now holds r0's 6, round 4 its 7.
    # t=3: u = 7. r2 restarts from scratch: 7 + 1 + 1 = 9 <= 10, p = 3 (u = 9); r3: 14 > 10.
    #      Round 5: r0 has left (C = 4); r2 holds 1 + 5 - 3 = 3.
    # t=4: r0 leaves. u = 3; r3: 3 + 5 = 8 <= 10, p = 4. Round 6: r3 has left, r2 holds 4.
    # t=5: r3 leaves (C = 5); t=7: r2 leaves (C = 7).
    # Completions 4, 1, 7, 5: TEL = 17. Memory in rounds 1-5: 8, 8, 6, 7 + 2, 3 + 5.
    inst = Instance.from_arrays([3, 1, 1, 4], [4, 1, 4, 1], 10, name="hand")
    sched = vllm(inst).check()
    assert sched.start.tolist() == [0, 0, 3, 4]
    assert sched.completion.tolist() == [4, 1, 7, 5]
    assert sched.tel == 17
    assert _runs(sched) == [(0, 0, 4, 1), (1, 0, 1, 1), (2, 0, 2, 0), (2, 3, 7, 1), (3, 4, 5, 1)]
    assert sched.evictions == 1 and sched.wasted_tokens == 2
    assert sched.info["preemptions"] == 1
    assert sched.memory_at([1, 2, 3, 4, 5]).tolist() == [8, 8, 6, 9, 8]


def test_hand_computed_preemption_at_admission_is_no_run():
    # M = 6; r0 (s 0, o 6, a 0), r1 (s 2, o 2, a 1).
    # t=0: admit r0 (u = 1); r1 has not arrived. Round 2: 2.
    # t=1: u = 2; r1: 2 + 3 = 5 <= 6, p = 1. Round 3: r0 3 + r1 4 = 7 > 6: preempt r1, the
    #      latest admitted, before it has run a round: a preemption, but no run.
    # t=2: u = 3; r1: 3 + 3 = 6 <= 6, p = 2. Round 4: 4 + 4 = 8 > 6: preempted again, no run.
    # t=3..5: u = 4, 5, 6; r1 needs u + 3 <= 6: no. t=6: r0 leaves; r1 starts, p = 6, C = 8.
    # TEL = 6 + (8 - 1) = 13.
    inst = Instance.from_arrays([0, 2], [6, 2], 6, [0, 1], name="cancel")
    sched = vllm(inst).check()
    assert sched.start.tolist() == [0, 6]
    assert sched.tel == 13
    assert _runs(sched) == [(0, 0, 6, 1), (1, 6, 8, 1)]
    assert sched.info["preemptions"] == 2 and sched.evictions == 0


@settings(max_examples=300, deadline=None)
@given(instance_and_order())
def test_equals_round_by_round_simulation(case):
    inst, queue = case
    sched = execute_preemptive(inst, np.asarray(queue), policy="q").check()
    start, runs, preemptions = simulate(inst, queue)
    assert sched.start.tolist() == start
    assert _runs(sched) == runs
    assert sched.info["preemptions"] == preemptions


@settings(max_examples=150, deadline=None)
@given(instances(max_n=10, max_memory=40, max_decode=12))
def test_policies_feasible_complete_and_ordered(inst):
    n = inst.n
    for policy, key in ((vllm, inst.arrival), (vllm_sf, inst.decode)):
        sched = policy(inst).check()  # every run, cut ones included, within M
        queue = sorted(range(n), key=lambda i: (int(key[i]), i))
        assert sched.info["order"].tolist() == queue
        start, runs, preemptions = simulate(inst, queue)
        assert sched.start.tolist() == start and _runs(sched) == runs
        done = sched.runs[sched.runs[:, 3] == 1]
        assert sorted(done[:, 0].tolist()) == list(range(n))  # each completes exactly once
        cut = sched.runs[sched.runs[:, 3] == 0]
        assert sched.info["wasted_tokens"] == int((cut[:, 2] - cut[:, 1]).sum())
        assert sched.evictions <= sched.info["preemptions"] == preemptions
        assert (sched.start >= inst.arrival).all()


def test_no_preemption_when_everything_fits():
    inst = Instance.from_arrays([3, 0, 5, 2], [2, 4, 1, 3], 20, [0, 2, 2, 5])
    sched = vllm(inst).check()
    assert sched.start.tolist() == [0, 2, 2, 5]  # each starts on arrival
    assert sched.info["preemptions"] == 0
    # vllm-sf's queue is r2 r0 r3 r1 (by o_i): the walk stops at a head that has not arrived,
    # so r2 holds r0 back to round 2 and r3 holds r1 back to round 5
    sched = vllm_sf(inst).check()
    assert sched.start.tolist() == [2, 5, 2, 5]
    assert sched.info["preemptions"] == 0


def test_generated_workload_equals_simulation_and_preempts():
    inst = generate("mix-80-20", 40, 6000, seed=3)
    for name in ("vllm", "vllm-sf"):
        sched = run_policy(inst, name).check()
        start, runs, _ = simulate(inst, sched.info["order"].tolist())
        assert sched.start.tolist() == start and _runs(sched) == runs
        assert sched.evictions > 0  # the case exercises preemption with lost work


def test_registered_without_backfill():
    assert POLICIES["vllm"].run is vllm and POLICIES["vllm-sf"].run is vllm_sf
    with pytest.raises(KeyError, match="strict order only"):
        parse_policy("vllm+backfill")


def test_bad_queue_order():
    inst = Instance.from_arrays([1, 1], [1, 1], 4)
    with pytest.raises(ValueError, match="exactly once"):
        execute_preemptive(inst, np.array([0, 0]))
    with pytest.raises(ValueError, match="2 request indices"):
        execute_preemptive(inst, np.array([0]))


# --------------------------------------------------------------------------- victim rules


def test_srf_preempts_the_request_holding_fewest_tokens():
    # M = 10; (s, o): r0 (1, 4), r1 (1, 1), r2 (3, 4), r3 (4, 1); queue r0 r1 r2 r3.
    # t=0: admit r0 (u = 2), r1 (u = 4), r2 (u = 8); r3: 8 + 5 = 13 > 10. Round 2: r1 has
    #      left; r0 holds 3, r2 5.
    # t=1: u = 8; r3 does not fit. Round 3: 4 + 6 = 10.
    # t=2: round 4 would hold 5 + 7 = 12 > 10. newest: r2 (p = 0 for both, higher index);
    #      srf: r0, which holds 1 + 2 = 3 tokens against r2's 3 + 2 = 5. Cut run (r0, 0, 2).
    # t=3: u = 7 (r2 in round 4); r0 restarts: 7 + 2 = 9, p = 3; r3: 14 > 10.
    # t=4: r2 leaves; u = 3 (r0); r3: 3 + 5 = 8, p = 4. t=5: r3 leaves; t=7: r0 leaves.
    # TEL = 7 + 1 + 4 + 5 = 17.
    inst = Instance.from_arrays([1, 1, 3, 4], [4, 1, 4, 1], 10, name="srf")
    sched = vllm(inst, victim="srf").check()
    assert _runs(sched) == [(0, 0, 2, 0), (0, 3, 7, 1), (1, 0, 1, 1), (2, 0, 4, 1), (3, 4, 5, 1)]
    assert sched.tel == 17 and sched.info["preemptions"] == 1 and sched.wasted_tokens == 2
    newest = vllm(inst).check()
    assert _runs(newest) == [(0, 0, 4, 1), (1, 0, 1, 1), (2, 0, 2, 0), (2, 3, 7, 1), (3, 4, 5, 1)]


def test_trail_preempts_only_an_early_request_or_falls_back_to_newest():
    # As the srf case with r0's o = 5. At t=2 both have emitted 2 tokens; round 4 would hold
    # 5 + 7 = 12 > 10. With c = 0.45, r0 is early (2 <= 2.25) and r2 is not (2 > 1.8): r0 is
    # cut; it restarts at 3 (u = 7 + 2 = 9), r2 leaves at 4, r3 starts at 4 (u = 3 + 5),
    # r0 leaves at 8. TEL = 8 + 1 + 4 + 5 = 18.
    inst = Instance.from_arrays([1, 1, 3, 4], [5, 1, 4, 1], 10, name="trail")
    sched = vllm(inst, victim="trail", early_fraction=0.45).check()
    assert _runs(sched) == [(0, 0, 2, 0), (0, 3, 8, 1), (1, 0, 1, 1), (2, 0, 4, 1), (3, 4, 5, 1)]
    assert sched.tel == 18
    # With c = 0.25 neither is early at t=2 (2 > 1.25, 2 > 1): newest, r2. At t=3 r2 restarts
    # (u = 5 + 4 = 9) but round 5 would hold r0's 6 + r2's 5 = 11: r2, just admitted (0 <= 1
    # tokens), is the early one and is preempted again, with no run; it restarts at 4
    # (u = 6 + 4 = 10) and leaves at 8; r3 starts at 5 (u = 5 + 5). TEL = 5 + 1 + 8 + 6 = 20.
    sched = vllm(inst, victim="trail", early_fraction=0.25).check()
    assert _runs(sched) == [(0, 0, 5, 1), (1, 0, 1, 1), (2, 0, 2, 0), (2, 4, 8, 1), (3, 5, 6, 1)]
    assert sched.tel == 20 and sched.info["preemptions"] == 2
    assert _runs(vllm(inst)) == _runs(sched)  # here trail chose as newest does


@settings(max_examples=150, deadline=None)
@given(instance_and_order(), st.sampled_from(["srf", "trail"]), st.sampled_from([0.0, 0.3, 1.0]))
def test_every_victim_rule_equals_round_by_round_simulation(case, victim, c):
    inst, queue = case
    sched = execute_preemptive(
        inst, np.asarray(queue), policy="q", victim=victim, early_fraction=c
    ).check()
    start, runs, preemptions = simulate(inst, queue, victim, c)
    assert sched.start.tolist() == start
    assert _runs(sched) == runs
    assert sched.info["preemptions"] == preemptions


def test_generated_workload_victims_equal_simulation():
    inst = generate("mix-80-20", 40, 6000, seed=3)
    for victim in ("srf", "trail"):
        sched = run_policy(inst, "vllm", victim=victim).check()
        start, runs, _ = simulate(inst, sched.info["order"].tolist(), victim)
        assert sched.start.tolist() == start and _runs(sched) == runs


def test_victim_options_are_checked():
    with pytest.raises(PolicySelectionError, match="victim must be one of newest, srf, trail"):
        check_policy_options(["vllm"], {"victim": "oldest"})
    with pytest.raises(PolicySelectionError, match=r"early_fraction must be a number in \[0, 1\]"):
        check_policy_options(["vllm-sf"], {"victim": "trail", "early_fraction": 1.5})
    with pytest.raises(ValueError, match="victim must be one of"):
        vllm(Instance.from_arrays([1], [1], 4), victim="srf ")
