"""SVF and its order (SPEC section 4.1; arXiv 2606.22327): ``svf`` and ``volume``.

Checked: a hand-computed case for each, equality with literal round-by-round readings of the
two rules written from the SPEC text alone (random instances, with arrivals), the independent
feasibility check, exact volumes at the largest budgets, and the inequality at the heart of
SVF's ratio proof, ``(M - P)(sum C - sum o) <= 2 (V - sum v)``, for both policies.
"""

from __future__ import annotations

import numpy as np
from conftest import instances
from hypothesis import assume, given, settings

from lpsched.instance import Instance
from lpsched.policies.registry import run_policy
from lpsched.policies.svf import memory_time_volume, svf, volume_order


def volumes(inst: Instance) -> list[int]:
    return [
        s * o + o * (o + 1) // 2
        for s, o in zip(inst.prefill.tolist(), inst.decode.tolist(), strict=True)
    ]


def literal_svf(inst: Instance) -> list[int]:
    """SVF read literally, one decision time at a time: arrived requests queue by (v, index);
    the head is admitted while its peak fits beside the running peaks; stop at the first
    that does not fit."""
    s, o, a, M = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist(), inst.memory
    v = volumes(inst)
    start = [-1] * inst.n
    t = 0
    while -1 in start:
        running = [j for j in range(inst.n) if start[j] >= 0 and start[j] + o[j] > t]
        queue = sorted((j for j in range(inst.n) if start[j] < 0 and a[j] <= t),
                       key=lambda j: (v[j], j))  # fmt: skip
        reserved = sum(s[j] + o[j] for j in running)
        for h in queue:
            if reserved + s[h] + o[h] > M:
                break
            start[h] = t
            reserved += s[h] + o[h]
        t += 1
    return start


def literal_strict(inst: Instance, order: list[int]) -> list[int]:
    """SPEC section 4's executor read literally: at every round walk the list, admit while the
    memory of every future round stays within M, stop at the first that does not fit."""
    s, o, a, M = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist(), inst.memory
    start = [-1] * inst.n
    pos = 0
    t = 0
    while pos < inst.n:
        while pos < inst.n:
            h = order[pos]
            if a[h] > t:
                break
            trial = [j for j in range(inst.n) if start[j] >= 0] + [h]
            starts = {**{j: start[j] for j in trial if j != h}, h: t}
            if any(
                sum(s[j] + r - starts[j] for j in trial if starts[j] < r <= starts[j] + o[j]) > M
                for r in range(t + 1, t + o[h] + 1)
            ):
                break
            start[h] = t
            pos += 1
        t += 1
    return start


def test_hand_computed():
    # A (s=2, o=2): v = 7, peak 4; B (0, 4): v = 10, peak 4; C (5, 1): v = 6, peak 6; M = 10.
    inst = Instance.from_arrays([2, 0, 5], [2, 4, 1], 10)
    assert memory_time_volume(inst).tolist() == [7, 10, 6]
    assert volume_order(inst).tolist() == [2, 0, 1]
    # svf: t = 0 admits C (6) and A (6 + 4 = 10); B would reserve 14 > 10 and waits for C's
    # completion at round 1 (reserved 4 + 4 = 8).
    assert svf(inst).start.tolist() == [0, 1, 0]
    assert svf(inst).tel == 2 + 5 + 1
    # volume: the executor sees that B fits at once (rounds 1..4 hold 10, 6, 3, 4 tokens).
    sched = run_policy(inst, "volume")
    assert sched.start.tolist() == [0, 0, 0]
    assert sched.tel == 7


@settings(max_examples=150, deadline=None)
@given(instances(max_n=7, max_memory=20, max_decode=6))
def test_svf_is_the_literal_rule(inst):
    sched = svf(inst)
    assert sched.start.tolist() == literal_svf(inst)
    assert sched.feasible
    v = volumes(inst)
    assert sched.info["order"].tolist() == sorted(range(inst.n), key=lambda i: (v[i], i))


@settings(max_examples=150, deadline=None)
@given(instances(max_n=7, max_memory=20, max_decode=6))
def test_volume_is_the_literal_rule(inst):
    order = sorted(range(inst.n), key=lambda i: (volumes(inst)[i], i))
    sched = run_policy(inst, "volume")
    assert sched.start.tolist() == literal_strict(inst, order)
    assert sched.feasible


@settings(max_examples=300, deadline=None)
@given(instances(max_n=10, max_memory=40, max_decode=10, arrivals=False))
def test_ratio_proof_inequality(inst):
    """arXiv 2606.22327, Lemma A.2 summed: while a request waits the running peaks exceed
    M - P, and each running request i holds its peak o_i rounds, p_i o_i <= 2 v_i; so
    (M - P) sum_j (C_j - o_j) <= 2 sum_j (sum of the volumes listed before j)."""
    peak = int(inst.size.max())
    assume(peak < inst.memory)
    v = sorted(volumes(inst))
    before = sum(sum(v[:j]) for j in range(inst.n))  # V - sum v
    for policy in ("svf", "volume"):
        sched = run_policy(inst, policy)
        waiting = int(sched.completion.sum() - inst.decode.sum())
        assert (inst.memory - peak) * waiting <= 2 * before, policy


def test_exact_volumes_at_the_largest_budget():
    M = 2**40
    inst = Instance.from_arrays([M - 3, M - 2, 0], [3, 2, 1], M)
    v = memory_time_volume(inst)
    assert v.tolist() == [(M - 3) * 3 + 6, (M - 2) * 2 + 3, 1]
    assert volume_order(inst).tolist() == [2, 1, 0]
    assert svf(inst).feasible


def test_empty_queue_waits_for_arrivals():
    inst = Instance.from_arrays([1, 1], [2, 2], 10, [0, 7])
    assert svf(inst).start.tolist() == [0, 7]
    assert np.array_equal(run_policy(inst, "volume").start, [0, 7])
